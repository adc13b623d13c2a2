#include "kiln/attrs/tensor.h"

#include "kiln/attrs/dtype_attr.h"
#include "kiln/attrs/window.h"
#include "kiln/support/strings.h"

namespace kiln {

namespace {

void check_shape(const std::vector<int64_t>& shape) {
  for (int64_t d : shape)
    if (d < 0)
      throw std::move(Error(cat("attribute 'shape' has a negative dimension: ", shape_str(shape)))
                          .expected("dimensions >= 0", cat(d)));
}

}  // namespace

void ConstantFillAttrs::validate() const {
  check_shape(shape);
  result_dtype();  // throws unless 'dtype' names one
}

DType ConstantFillAttrs::result_dtype() const { return dtype_attr_or("dtype", dtype, DType::kFloat32); }

void FullAttrs::validate() const {
  check_shape(shape);
  dtype_attr_or("dtype", dtype, DType::kFloat32);  // throws unless 'dtype' is "" or names one
}

DType FullAttrs::result_dtype(DType fill_dtype) const { return dtype_attr_or("dtype", dtype, fill_dtype); }

void TopKAttrs::validate() const {
  check_choice("ret_type", ret_type, {"both", "values", "indices"});
  indices_dtype();  // throws unless 'dtype' names an integer dtype
}

DType TopKAttrs::indices_dtype() const {
  DType parsed;
  if (!try_parse_dtype(dtype, &parsed) || !is_int(parsed))
    throw std::move(Error("attribute 'dtype' must name an integer dtype for the indices")
                        .expected("\"int64\" or \"int32\"", cat('"', dtype, '"')));
  return parsed;
}

}  // namespace kiln
