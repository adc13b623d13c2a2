// Reference kernels: transpose.
#include "kiln/attrs/transform.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/transform/copy_util.h"

namespace kiln {

namespace {

void transpose_kernel(const TransposeAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  expect_arity("transpose", inputs, 1, outputs, 1);
  const NDArray& data = inputs[0];
  std::vector<int64_t> perm = attrs.permutation(data.shape());
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
  registry.add_output_fn("transpose", [](const Attrs& attrs, std::span<const NDArray> in) {
    Shape shape;
    for (int64_t axis : attrs_from<TransposeAttrs>(attrs, "transpose").permutation(in[0].shape()))
      shape.push_back(in[0].shape()[static_cast<size_t>(axis)]);
    return std::vector<OutputSpec>{{shape, in[0].dtype()}};
  });
}

}  // namespace kiln
