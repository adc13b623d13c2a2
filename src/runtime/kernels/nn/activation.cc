// Reference kernels: nn.relu, nn.leaky_relu, nn.prelu, nn.dropout (inference).
#include <cstring>
#include <string>
#include <type_traits>

#include "kiln/attrs/nn.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/tensor/element.h"

namespace kiln {
namespace {

using kernels::Compute;
using kernels::load;
using kernels::map_elements;
using kernels::store;

void relu_kernel(const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
  dispatch_dtype(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    if constexpr (std::is_same_v<T, bool>)
      throw Error("bool data is not supported").op("nn.relu");
    else if constexpr (std::is_unsigned_v<C>)
      map_elements<T>(in[0], out[0], [](C v) { return v; });
    else  // NaN stays NaN
      map_elements<T>(in[0], out[0], [](C v) { return v < C(0) ? C(0) : v; });
  });
}

void leaky_relu_kernel(const LeakyReluAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  const double alpha = attrs.alpha;
  dispatch_dtype(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kernels::kIsFloatStorage<T>) {
      using C = Compute<T>;
      const C a = static_cast<C>(alpha);
      map_elements<T>(in[0], out[0], [a](C v) { return v < C(0) ? a * v : v; });
    } else {
      throw Error("a float dtype is required").op("nn.leaky_relu");
    }
  });
}

void prelu_kernel(const PReluAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  const NDArray& data = in[0];
  const NDArray& alpha = in[1];
  const int64_t axis = wrap_axis(attrs.axis, data.ndim());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.shape()[d];
  for (int64_t d = axis + 1; d < data.ndim(); ++d) inner *= data.shape()[d];
  const int64_t channels = data.shape()[axis];
  dispatch_dtype(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kernels::kIsFloatStorage<T>) {
      using C = Compute<T>;
      const T* x = data.data<T>();
      const T* a = alpha.data<T>();
      T* y = out[0].data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t c = 0; c < channels; ++c) {
          const C slope = load(a[c]);
          const int64_t base = (o * channels + c) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            C v = load(x[base + i]);
            y[base + i] = store<T>(v < C(0) ? slope * v : v);
          }
        }
      }
    } else {
      throw Error("a float dtype is required").op("nn.prelu");
    }
  });
}

void dropout_kernel(const DropoutAttrs&, std::span<const NDArray> in, std::span<NDArray> out) {
  const NDArray& data = in[0];
  if (data.nbytes()) std::memcpy(out[0].raw(), data.raw(), data.nbytes());
  dispatch_dtype(out[1].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* mask = out[1].data<T>();
    const T one = kernels::convert_element<T>(int64_t{1});
    for (int64_t i = 0; i < out[1].numel(); ++i) mask[i] = one;
  });
}

}  // namespace

void register_nn_activation_kernels(KernelRegistry& registry) {
  registry.add("nn.relu", relu_kernel);
  registry.add<LeakyReluAttrs>("nn.leaky_relu", leaky_relu_kernel);
  registry.add<PReluAttrs>("nn.prelu", prelu_kernel);
  registry.add<DropoutAttrs>("nn.dropout", dropout_kernel);
}

}  // namespace kiln
