// Helpers shared by op definitions: shape arithmetic for type relations.
#pragma once

#include <string>
#include <vector>

#include "kiln/ir/op.h"
#include "kiln/ir/type.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

// Maps a possibly negative axis into [0, ndim); throws naming `what` when out of range.
int64_t normalize_axis(int64_t axis, int64_t ndim, const std::string& what = "axis");
// The tensor type of argument i, or an error naming the argument of `def`.
const TensorTypeNode& arg_tensor(const std::vector<Type>& args, size_t i, const std::string& arg_name);
// Relation of ops whose result has the type of their first argument.
Type same_type_as_first(const std::vector<Type>& args, const Attrs& attrs);
// Elements of a shape as a double (flop counts), or 0 when a dimension is unknown.
double known_elements(const Shape& shape);

// Output extent of a sliding window (conv, pool): floor or ceil of
// (in + pad_before + pad_after - dilation*(k-1) - 1) / stride + 1. Unknown stays unknown.
int64_t window_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_before,
                           int64_t pad_after, bool ceil_mode = false);

}  // namespace kiln
