// Reference kernels: nn.bias_add. The data is seen as (outer, C, inner) around the axis,
// so each channel adds one bias value to a contiguous run of `inner` elements.
#include <type_traits>

#include "kiln/attrs/nn.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/tensor/element.h"

namespace kiln {
namespace {

using kernels::load;
using kernels::store;

template <class T>
void bias_add_loop(const NDArray& data, const NDArray& bias, NDArray& out, int64_t axis) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.shape()[d];
  for (int64_t d = axis + 1; d < data.ndim(); ++d) inner *= data.shape()[d];
  const int64_t channels = data.shape()[axis];
  const T* x = data.data<T>();
  const T* b = bias.data<T>();
  T* y = out.data<T>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      const auto bc = load(b[c]);
      const int64_t base = (o * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        if constexpr (std::is_integral_v<T>)
          y[base + i] = kernels::wrapping_add(x[base + i], bc);
        else
          y[base + i] = store<T>(load(x[base + i]) + bc);
      }
    }
  }
}

void bias_add_kernel(const BiasAddAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  const int64_t axis = wrap_axis(attrs.axis, in[0].ndim());
  dispatch_dtype(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>)
      throw Error("bool data is not supported").op("nn.bias_add");
    else
      bias_add_loop<T>(in[0], in[1], out[0], axis);
  });
}

}  // namespace

void register_nn_bias_add_kernels(KernelRegistry& registry) {
  registry.add<BiasAddAttrs>("nn.bias_add", bias_add_kernel);
}

}  // namespace kiln
