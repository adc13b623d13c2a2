// Reference kernels of dyn.shape_of and dyn.size: they read only their argument's shape.
#include <algorithm>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/transform/copy_util.h"

namespace kiln {
namespace {

// The result is allocated here when the caller left it to the kernel.
NDArray& result(NDArray& out, const Shape& shape) {
  if (!out.defined()) out = NDArray::empty(shape, DType::kInt64);
  return out;
}

void shape_of_kernel(const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.shape_of", in, 1, out, 1);
  const Shape& shape = in[0].shape();
  NDArray& y = result(out[0], {static_cast<int64_t>(shape.size())});
  std::copy(shape.begin(), shape.end(), y.data<int64_t>());
}

void size_kernel(const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.size", in, 1, out, 1);
  result(out[0], {}).data<int64_t>()[0] = in[0].numel();
}

}  // namespace

void register_dyn_shape_kernels(KernelRegistry& registry) {
  registry.add("dyn.shape_of", shape_of_kernel);
  registry.add("dyn.size", size_kernel);
}

}  // namespace kiln
