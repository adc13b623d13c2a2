// Reference kernels: transpose.
#include "kiln/attrs/transform.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/transform/copy_util.h"

namespace kiln {

namespace {

// Output dim i is input dim perm[i]; the type relation has checked `axes`.
std::vector<int64_t> permutation(const TransposeAttrs& attrs, int64_t ndim) {
  std::vector<int64_t> perm;
  if (!attrs.axes) {
    for (int64_t d = ndim - 1; d >= 0; --d) perm.push_back(d);
    return perm;
  }
  for (int64_t axis : *attrs.axes) perm.push_back(wrap_axis(axis, ndim));
  check(static_cast<int64_t>(perm.size()) == ndim, "transpose: 'axes' does not match the input rank ", ndim);
  return perm;
}

void transpose_kernel(const TransposeAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  expect_arity("transpose", inputs, 1, outputs, 1);
  const NDArray& data = inputs[0];
  std::vector<int64_t> perm = permutation(attrs, data.ndim());
  std::vector<int64_t> in_strides = contiguous_strides(data.shape());
  Shape out_shape;
  std::vector<int64_t> read_strides;
  for (int64_t axis : perm) {
    check(axis >= 0 && axis < data.ndim(), "transpose: axis ", axis, " out of range");
    out_shape.push_back(data.shape()[axis]);
    read_strides.push_back(in_strides[axis]);
  }
  expect_output("transpose", outputs[0], out_shape, data.dtype());
  gather_strided(outputs[0].raw(), data.raw(), out_shape, read_strides, 0, dtype_bytes(data.dtype()));
}

}  // namespace

void register_transform_transpose_kernels(KernelRegistry& registry) {
  registry.add<TransposeAttrs>("transpose", transpose_kernel);
}

}  // namespace kiln
