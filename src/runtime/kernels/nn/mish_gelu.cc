// Reference kernels: nn.mish, nn.gelu. Float dtypes only (the relation checks it); float16
// and bfloat16 compute in float.
#include <cmath>

#include "kiln/attrs/activation.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/tensor/element.h"

namespace kiln {
namespace {

// max(x, 0) + log(1 + exp(-|x|)): exp never overflows (the te compute uses the same form).
template <class C>
C softplus(C v) {
  return std::max(v, C(0)) + std::log(C(1) + std::exp(-std::abs(v)));
}

template <class C>
C gelu(C v, bool tanh_form) {
  if (!tanh_form) return C(0.5) * v * (C(1) + std::erf(v * C(M_SQRT1_2)));
  const C inner = C(std::sqrt(2.0 / M_PI)) * (v + C(0.044715) * v * v * v);
  return C(0.5) * v * (C(1) + std::tanh(inner));
}

void mish_kernel(const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
  kernels::map_float_elements(in[0], out[0], "nn.mish", [](auto v) { return v * std::tanh(softplus(v)); });
}

void gelu_kernel(const GeluAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  const bool tanh_form = attrs.tanh();
  kernels::map_float_elements(in[0], out[0], "nn.gelu", [tanh_form](auto v) { return gelu(v, tanh_form); });
}

}  // namespace

void register_nn_mish_gelu_kernels(KernelRegistry& registry) {
  registry.add("nn.mish", mish_kernel);
  registry.add<GeluAttrs>("nn.gelu", gelu_kernel);
}

}  // namespace kiln
