// Reference kernels: nn.batch_norm, nn.layer_norm.
// Both see the data as (outer, axis, inner): batch_norm applies a per-channel affine map,
// layer_norm computes the mean and variance along the axis for every (outer, inner) pair.
#include <cstring>

#include "kiln/attrs/nn.h"
#include "runtime/kernels/nn/compute_view.h"

namespace kiln {

namespace {

struct AxisSplit {
  int64_t outer, extent, inner;
};

AxisSplit split_at(const Shape& shape, int64_t axis) {
  axis = wrap_axis(axis, static_cast<int64_t>(shape.size()));
  check(axis >= 0 && axis < static_cast<int64_t>(shape.size()), "normalisation axis out of range");
  AxisSplit s{1, shape[axis], 1};
  for (int64_t d = 0; d < axis; ++d) s.outer *= shape[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) s.inner *= shape[d];
  return s;
}

// gamma * (x - mean) / sqrt(var + eps) + beta, written as x * scale + shift per channel.
template <class C>
void batch_norm(const C* x, const C* gamma, const C* beta, const C* mean, const C* var, C* y, const AxisSplit& s,
                C epsilon, bool use_gamma, bool use_beta) {
  for (int64_t c = 0; c < s.extent; ++c) {
    const C scale = (use_gamma ? gamma[c] : C(1)) / std::sqrt(var[c] + epsilon);
    const C shift = (use_beta ? beta[c] : C(0)) - mean[c] * scale;
    for (int64_t o = 0; o < s.outer; ++o) {
      const int64_t base = (o * s.extent + c) * s.inner;
      for (int64_t i = 0; i < s.inner; ++i) y[base + i] = x[base + i] * scale + shift;
    }
  }
}

// Two passes (mean, then the mean of squared deviations) for accuracy; the inner loops run
// along the contiguous inner axis, with per-position sums in `mean` and `var`.
template <class C>
void layer_norm(const C* x, const C* gamma, const C* beta, C* y, const AxisSplit& s, C epsilon, bool use_gamma,
                bool use_beta) {
  std::vector<C> mean(static_cast<size_t>(s.inner)), var(static_cast<size_t>(s.inner));
  const C inv_extent = C(1) / static_cast<C>(std::max<int64_t>(s.extent, 1));
  for (int64_t o = 0; o < s.outer; ++o) {
    const C* xo = x + o * s.extent * s.inner;
    C* yo = y + o * s.extent * s.inner;
    std::fill(mean.begin(), mean.end(), C(0));
    std::fill(var.begin(), var.end(), C(0));
    for (int64_t a = 0; a < s.extent; ++a)
      for (int64_t i = 0; i < s.inner; ++i) mean[i] += xo[a * s.inner + i];
    for (int64_t i = 0; i < s.inner; ++i) mean[i] *= inv_extent;
    for (int64_t a = 0; a < s.extent; ++a)
      for (int64_t i = 0; i < s.inner; ++i) {
        const C d = xo[a * s.inner + i] - mean[i];
        var[i] += d * d;
      }
    for (int64_t i = 0; i < s.inner; ++i) var[i] = C(1) / std::sqrt(var[i] * inv_extent + epsilon);
    for (int64_t a = 0; a < s.extent; ++a) {
      const C g = use_gamma ? gamma[a] : C(1), b = use_beta ? beta[a] : C(0);
      for (int64_t i = 0; i < s.inner; ++i) yo[a * s.inner + i] = (xo[a * s.inner + i] - mean[i]) * var[i] * g + b;
    }
  }
}

void batch_norm_kernel(const BatchNormAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  AxisSplit s = split_at(inputs[0].shape(), attrs.axis);
  dispatch_compute(inputs[0].dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> x(inputs[0]), gamma(inputs[1]), beta(inputs[2]), mean(inputs[3]), var(inputs[4]);
    OutView<C> y(outputs[0]);
    batch_norm(x.data(), gamma.data(), beta.data(), mean.data(), var.data(), y.data(), s, static_cast<C>(attrs.epsilon),
               attrs.scale, attrs.center);
    y.commit();
  });
  // The 2nd and 3rd results are the moving statistics themselves (same types as those inputs).
  for (int i = 1; i <= 2; ++i) {
    const NDArray& stat = inputs[static_cast<size_t>(i + 2)];
    check(outputs[i].nbytes() == stat.nbytes(), "nn.batch_norm: statistics output of the wrong size");
    if (stat.nbytes() > 0) std::memcpy(outputs[i].raw(), stat.raw(), stat.nbytes());
  }
}

void layer_norm_kernel(const LayerNormAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  AxisSplit s = split_at(inputs[0].shape(), attrs.axis);
  dispatch_compute(inputs[0].dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> x(inputs[0]), gamma(inputs[1]), beta(inputs[2]);
    OutView<C> y(outputs[0]);
    layer_norm(x.data(), gamma.data(), beta.data(), y.data(), s, static_cast<C>(attrs.epsilon), attrs.scale,
               attrs.center);
    y.commit();
  });
}

}  // namespace

void register_nn_norm_kernels(KernelRegistry& registry) {
  registry.add<BatchNormAttrs>("nn.batch_norm", batch_norm_kernel);
  registry.add<LayerNormAttrs>("nn.layer_norm", layer_norm_kernel);
}

}  // namespace kiln
