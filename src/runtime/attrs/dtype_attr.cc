#include "kiln/attrs/dtype_attr.h"

#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

DType parse_dtype_attr(const std::string& name, const std::string& value) {
  DType t;
  if (!try_parse_dtype(value, &t))
    throw std::move(Error(cat("attribute '", name, "' is not a dtype"))
                        .expected("a dtype such as \"float32\"", cat('"', value, '"')));
  return t;
}

DType dtype_attr_or(const std::string& name, const std::string& value, DType if_empty) {
  return value.empty() ? if_empty : parse_dtype_attr(name, value);
}

DType parse_quantized_dtype(const std::string& name, const std::string& value) {
  DType t;
  if (!try_parse_dtype(value, &t) ||
      (t != DType::kInt8 && t != DType::kUInt8 && t != DType::kInt16 && t != DType::kUInt16 && t != DType::kInt32))
    throw std::move(Error(cat("attribute '", name, "' is not a quantized dtype"))
                        .expected("int8, uint8, int16, uint16 or int32", cat('"', value, '"')));
  return t;
}

}  // namespace kiln
