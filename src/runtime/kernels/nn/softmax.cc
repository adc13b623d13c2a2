// Reference kernels: nn.softmax, nn.log_softmax.
// The data is seen as (outer, axis, inner); for every outer index the maximum and the sum of
// exponentials are kept per inner position, so the loops run along the contiguous inner axis.
// Subtracting the maximum keeps exp() from overflowing.
#include "kiln/attrs/nn.h"
#include "runtime/kernels/nn/compute_view.h"

namespace kiln {

namespace {

template <class C, bool kLog>
void softmax(const C* x, C* y, int64_t outer, int64_t extent, int64_t inner) {
  std::vector<C> max(static_cast<size_t>(inner)), sum(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    const C* xo = x + o * extent * inner;
    C* yo = y + o * extent * inner;
    std::fill(max.begin(), max.end(), -std::numeric_limits<C>::infinity());
    std::fill(sum.begin(), sum.end(), C(0));
    for (int64_t a = 0; a < extent; ++a)
      for (int64_t i = 0; i < inner; ++i) max[i] = std::max(max[i], xo[a * inner + i]);
    // A row of -inf has max -inf; shifting by 0 instead gives exp(-inf) = 0 rather than NaN.
    for (int64_t i = 0; i < inner; ++i)
      if (std::isinf(max[i]) && max[i] < 0) max[i] = C(0);
    for (int64_t a = 0; a < extent; ++a)
      for (int64_t i = 0; i < inner; ++i) {
        const C e = std::exp(xo[a * inner + i] - max[i]);
        sum[i] += e;
        if constexpr (!kLog) yo[a * inner + i] = e;
      }
    if constexpr (kLog) {
      for (int64_t i = 0; i < inner; ++i) sum[i] = max[i] + std::log(sum[i]);
      for (int64_t a = 0; a < extent; ++a)
        for (int64_t i = 0; i < inner; ++i) yo[a * inner + i] = xo[a * inner + i] - sum[i];
    } else {
      for (int64_t i = 0; i < inner; ++i) sum[i] = C(1) / sum[i];
      for (int64_t a = 0; a < extent; ++a)
        for (int64_t i = 0; i < inner; ++i) yo[a * inner + i] *= sum[i];
    }
  }
}

template <bool kLog>
void softmax_kernel(const SoftmaxAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const Shape& shape = inputs[0].shape();
  const int64_t ndim = static_cast<int64_t>(shape.size());
  const int64_t axis = wrap_axis(attrs.axis, ndim);
  check(axis >= 0 && axis < ndim, "softmax axis out of range");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (int64_t d = axis + 1; d < ndim; ++d) inner *= shape[d];
  dispatch_compute(inputs[0].dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> x(inputs[0]);
    OutView<C> y(outputs[0]);
    softmax<C, kLog>(x.data(), y.data(), outer, shape[axis], inner);
    y.commit();
  });
}

}  // namespace

void register_nn_softmax_kernels(KernelRegistry& registry) {
  registry.add<SoftmaxAttrs>("nn.softmax", softmax_kernel<false>);
  registry.add<SoftmaxAttrs>("nn.log_softmax", softmax_kernel<true>);
}

}  // namespace kiln
