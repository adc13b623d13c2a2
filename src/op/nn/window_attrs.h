// Helpers shared by the type relations of the nn, image and vision ops: axis positions of a
// layout, the declared out_dtype, and argument checks whose messages name the argument and the
// shape or dtype found. Attributes themselves are decoded by their declarations (kiln/attrs).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/attrs/window.h"
#include "op/op_util.h"

namespace kiln {

// Positions of the batch, channel, height and width axes in a 4-letter layout.
struct Layout2D {
  int n, c, h, w;
};

// Axis positions of a 4-letter layout already checked to hold N, C, H and W.
Layout2D layout_2d(const std::string& layout);
// A declared 'out_dtype' attribute, where "" means `fallback` (the data's dtype).
DType out_dtype_of(const std::string& out_dtype, DType fallback);
// The tensor type of argument i, which must have `rank` dimensions (`layout` explains them).
const TensorTypeNode& arg_tensor_of_rank(const std::vector<Type>& args, size_t i, const std::string& arg_name,
                                         int64_t rank, const std::string& layout = "");
// Throws unless the argument's dtype is a floating-point type.
void check_float_arg(const TensorTypeNode& t, const std::string& arg_name);
// Throws for bool tensors, which the arithmetic ops do not accept.
void check_numeric_arg(const TensorTypeNode& t, const std::string& arg_name);
// Throws naming both arguments and shapes when two known extents differ.
void check_same_extent(int64_t a, int64_t b, const std::string& what, const std::string& a_name, const Shape& a_shape,
                       const std::string& b_name, const Shape& b_shape);
// Output extent of a window along one axis, with errors that name the axis and the input shape.
int64_t window_extent(const std::string& axis_name, const Shape& data_shape, int64_t in, int64_t kernel, int64_t stride,
                      int64_t dilation, int64_t pad_before, int64_t pad_after, bool ceil_mode = false);

}  // namespace kiln
