#include "op/op_util.h"

#include <algorithm>

namespace kiln {

int64_t normalize_axis(int64_t axis, int64_t ndim, const std::string& what) {
  int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim)
    throw std::move(Error(cat(what, " out of range")).expected(cat("in [", -ndim, ", ", ndim, ")"), cat(axis)));
  return a;
}

const TensorTypeNode& arg_tensor(const std::vector<Type>& args, size_t i, const std::string& arg_name) {
  check(i < args.size(), "missing argument '", arg_name, "'");
  return expect_tensor(args[i], cat("argument '", arg_name, "'"));
}

Type same_type_as_first(const std::vector<Type>& args, const Attrs&) {
  arg_tensor(args, 0, "data");
  return args[0];
}

int64_t window_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_before,
                           int64_t pad_after, bool ceil_mode) {
  if (in < 0 || kernel < 0) return kAnyDim;
  check(stride > 0, "stride must be positive, found ", stride);
  check(dilation > 0, "dilation must be positive, found ", dilation);
  check(kernel > 0, "window extent must be positive, found ", kernel);
  int64_t span = in + pad_before + pad_after - dilation * (kernel - 1) - 1;
  check(span >= 0, "window of extent ", dilation * (kernel - 1) + 1, " larger than padded input ",
        in + pad_before + pad_after);
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // With ceil_mode the last window must start inside the input or its leading padding.
  if (ceil_mode && (out - 1) * stride >= in + pad_before) --out;
  return out;
}

double known_elements(const Shape& shape) {
  double n = 1;
  for (int64_t d : shape) {
    if (d < 0) return 0;
    n *= static_cast<double>(d);
  }
  return n;
}

}  // namespace kiln
