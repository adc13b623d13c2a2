// Reference kernels: reshape, squeeze, expand_dims. A row-major buffer means the same
// elements in any shape, so each is a plain copy into the preallocated output.
#include <cstring>

#include "kiln/attrs/transform.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/transform/copy_util.h"

namespace kiln {

namespace {

KernelFn copy_kernel(std::string op) {
  return [op = std::move(op)](const Attrs&, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
    expect_arity(op, inputs, 1, outputs, 1);
    const NDArray& data = inputs[0];
    NDArray& out = outputs[0];
    if (out.numel() != data.numel() || out.dtype() != data.dtype())
      throw std::move(Error("output must hold the same elements as the input")
                          .op(op)
                          .expected(cat(data.numel(), " elements of ", dtype_name(data.dtype())),
                                    cat(out.numel(), " elements of ", dtype_name(out.dtype()))));
    if (data.nbytes() > 0) std::memcpy(out.raw(), data.raw(), data.nbytes());
  };
}

}  // namespace

void register_transform_reshape_kernels(KernelRegistry& registry) {
  registry.add("reshape", copy_kernel("reshape"));
  registry.add("squeeze", copy_kernel("squeeze"));
  registry.add("expand_dims", copy_kernel("expand_dims"));
  registry.add_output_fn("squeeze", [](const Attrs& attrs, std::span<const NDArray> in) {
    return std::vector<OutputSpec>{
        {attrs_from<SqueezeAttrs>(attrs, "squeeze").result_shape(in[0].shape()), in[0].dtype()}};
  });
}

}  // namespace kiln
