// Reference kernels: zeros, ones, full. The output is preallocated with the attribute
// shape and dtype; these kernels only fill it.
#include <algorithm>

#include "kiln/attrs/tensor.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/tensor/element.h"

namespace kiln {
namespace {

// Fills out with `value`, given in any storage type, converted as cast converts.
template <class From>
void fill(NDArray& out, From value) {
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* y = out.data<T>();
    std::fill(y, y + out.numel(), kernels::convert_element<T>(value));
  });
}

void zeros_kernel(const ConstantFillAttrs&, std::span<const NDArray>, std::span<NDArray> out) {
  fill(out[0], int64_t{0});
}
void ones_kernel(const ConstantFillAttrs&, std::span<const NDArray>, std::span<NDArray> out) {
  fill(out[0], int64_t{1});
}

void full_kernel(const FullAttrs&, std::span<const NDArray> in, std::span<NDArray> out) {
  const NDArray& fill_value = in[0];
  check(fill_value.numel() == 1, "full: fill_value must hold one element, found ", fill_value.numel());
  dispatch_dtype(fill_value.dtype(), [&](auto tag) { fill(out[0], fill_value.data<decltype(tag)>()[0]); });
}

}  // namespace

void register_tensor_init_kernels(KernelRegistry& registry) {
  registry.add<ConstantFillAttrs>("zeros", zeros_kernel);
  registry.add<ConstantFillAttrs>("ones", ones_kernel);
  registry.add<FullAttrs>("full", full_kernel);
}

}  // namespace kiln
