// Reference kernels: nn.lrn.
// The data is seen as (outer, C, inner); for every element the window of squares along C runs
// from c - (size - 1) / 2 to c + size / 2, clipped to [0, C). Sums are kept in double.
#include "kiln/attrs/nn.h"
#include "runtime/kernels/nn/compute_view.h"

namespace kiln {

namespace {

void lrn_kernel(const LrnAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const Shape& shape = inputs[0].shape();
  const int64_t ndim = static_cast<int64_t>(shape.size());
  const int64_t axis = wrap_axis(attrs.axis, ndim);
  check(axis >= 0 && axis < ndim, "nn.lrn: axis out of range");
  const int64_t size = attrs.size;
  check(size >= 1, "nn.lrn: size must be positive");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  for (int64_t d = axis + 1; d < ndim; ++d) inner *= shape[static_cast<size_t>(d)];
  const int64_t channels = shape[static_cast<size_t>(axis)];
  const double bias = attrs.bias, alpha_per_size = attrs.alpha / static_cast<double>(size), beta = attrs.beta;
  const int64_t before = (size - 1) / 2, after = size / 2;
  ConstView<double> x(inputs[0]);
  OutView<double> y(outputs[0]);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t first = std::max<int64_t>(0, c - before), last = std::min(channels - 1, c + after);
      for (int64_t i = 0; i < inner; ++i) {
        double square_sum = 0;
        for (int64_t k = first; k <= last; ++k) {
          const double v = x.data()[(o * channels + k) * inner + i];
          square_sum += v * v;
        }
        const int64_t at = (o * channels + c) * inner + i;
        y.data()[at] = x.data()[at] / std::pow(bias + alpha_per_size * square_sum, beta);
      }
    }
  y.commit();
}

}  // namespace

void register_nn_lrn_kernels(KernelRegistry& registry) { registry.add<LrnAttrs>("nn.lrn", lrn_kernel); }

}  // namespace kiln
