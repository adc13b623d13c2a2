// Dtype-valued attributes (out_dtype, dtype): strings in IR text and graph JSON, decoded and
// checked here for the declarations' validate() and for the relations and kernels that need the
// DType. Every error names the attribute and quotes the value found.
#pragma once

#include <string>

#include "kiln/runtime/dtype.h"

namespace kiln {

// `value` as a dtype; throws unless it names one.
DType parse_dtype_attr(const std::string& name, const std::string& value);
// The same, with "" meaning `if_empty`.
DType dtype_attr_or(const std::string& name, const std::string& value, DType if_empty);
// `value` as one of the integer dtypes a quantized value may have (int8, uint8, int16, uint16,
// int32).
DType parse_quantized_dtype(const std::string& name, const std::string& value);

}  // namespace kiln
