// Reference kernel: cumsum. Floats accumulate in double (one rounding per output), integers
// in their own type, wrapping.
#include <type_traits>

#include "kiln/attrs/tensor.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/tensor/element.h"

namespace kiln {
namespace {

using kernels::load;
using kernels::store;

template <class Acc>
Acc plus(Acc a, Acc b) {
  if constexpr (std::is_integral_v<Acc>)
    return kernels::wrapping_add(a, b);
  else
    return a + b;
}

template <class T>
void cumsum_along(const T* x, T* y, int64_t outer, int64_t extent, int64_t inner, bool exclusive, bool reverse) {
  using C = kernels::Compute<T>;
  using Acc = std::conditional_t<std::is_floating_point_v<C>, double, C>;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      Acc sum = 0;
      for (int64_t step = 0; step < extent; ++step) {
        const int64_t j = reverse ? extent - 1 - step : step;
        const int64_t at = (o * extent + j) * inner + i;
        const Acc value = static_cast<Acc>(load(x[at]));
        if (!exclusive) sum = plus(sum, value);
        y[at] = store<T>(static_cast<C>(sum));
        if (exclusive) sum = plus(sum, value);
      }
    }
  }
}

void cumsum_kernel(const CumsumAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  const NDArray& data = in[0];
  Shape shape = data.shape();
  int64_t axis = 0;
  if (!attrs.axis)
    shape = {data.numel()};
  else
    axis = wrap_axis(*attrs.axis, data.ndim());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t extent = shape.empty() ? 1 : shape[static_cast<size_t>(axis)];
  const bool exclusive = attrs.exclusive, reverse = attrs.reverse;
  dispatch_dtype(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>)
      throw Error("bool data is not supported").op("cumsum");
    else
      cumsum_along<T>(data.data<T>(), out[0].data<T>(), outer, extent, inner, exclusive, reverse);
  });
}

}  // namespace

void register_tensor_cumsum_kernels(KernelRegistry& registry) { registry.add<CumsumAttrs>("cumsum", cumsum_kernel); }

}  // namespace kiln
