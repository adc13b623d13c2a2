#include "op/nn/window_attrs.h"

#include "kiln/attrs/dtype_attr.h"

namespace kiln {

Layout2D layout_2d(const std::string& layout) {
  auto pos = [&](char axis) { return static_cast<int>(layout.find(axis)); };
  return {pos('N'), pos('C'), pos('H'), pos('W')};
}

DType out_dtype_of(const std::string& out_dtype, DType fallback) {
  return dtype_attr_or("out_dtype", out_dtype, fallback);
}

const TensorTypeNode& arg_tensor_of_rank(const std::vector<Type>& args, size_t i, const std::string& arg_name,
                                         int64_t rank, const std::string& layout) {
  const TensorTypeNode& t = arg_tensor(args, i, arg_name);
  if (t.ndim() != rank) {
    std::string want = layout.empty() ? cat(rank, "-D tensor") : cat(rank, "-D tensor (", layout, ")");
    throw std::move(
        Error(cat("argument '", arg_name, "' must have ", rank, " dimensions")).expected(want, shape_str(t.shape)));
  }
  return t;
}

void check_float_arg(const TensorTypeNode& t, const std::string& arg_name) {
  if (!is_float(t.dtype))
    throw std::move(Error(cat("argument '", arg_name, "' must be floating point"))
                        .expected("float16, bfloat16, float32 or float64", std::string(dtype_name(t.dtype))));
}

void check_numeric_arg(const TensorTypeNode& t, const std::string& arg_name) {
  if (t.dtype == DType::kBool)
    throw std::move(Error(cat("argument '", arg_name, "' must be numeric"))
                        .expected("a float or integer dtype", std::string(dtype_name(t.dtype))));
}

void check_same_extent(int64_t a, int64_t b, const std::string& what, const std::string& a_name, const Shape& a_shape,
                       const std::string& b_name, const Shape& b_shape) {
  if (a < 0 || b < 0 || a == b) return;
  throw std::move(
      Error(cat(what, " of '", a_name, "' ", shape_str(a_shape), " and '", b_name, "' ", shape_str(b_shape), " differ"))
          .expected(cat(a), cat(b)));
}

int64_t window_extent(const std::string& axis_name, const Shape& data_shape, int64_t in, int64_t kernel, int64_t stride,
                      int64_t dilation, int64_t pad_before, int64_t pad_after, bool ceil_mode) {
  try {
    return window_output_size(in, kernel, stride, dilation, pad_before, pad_after, ceil_mode);
  } catch (const Error& e) {
    throw Error(cat(axis_name, " of argument 'data' ", shape_str(data_shape), ": ", e.message()));
  }
}

}  // namespace kiln
