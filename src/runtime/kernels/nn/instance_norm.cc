// Reference kernels: nn.instance_norm.
// The data is seen as (N, A, C, B): A the axes between the batch and the channel axis, B those
// after it. Each (n, c) slice of A * B elements gets its own mean and variance, computed in
// double in two passes (mean, then mean squared deviation) for accuracy.
#include "kiln/attrs/nn.h"
#include "runtime/kernels/nn/compute_view.h"

namespace kiln {

namespace {

struct InstanceSplit {
  int64_t batch, before, channels, after;
};

InstanceSplit split_instances(const Shape& shape, int64_t axis) {
  const int64_t ndim = static_cast<int64_t>(shape.size());
  axis = wrap_axis(axis, ndim);
  check(ndim >= 2 && axis > 0 && axis < ndim, "nn.instance_norm: channel axis out of range");
  InstanceSplit s{shape[0], 1, shape[static_cast<size_t>(axis)], 1};
  for (int64_t d = 1; d < axis; ++d) s.before *= shape[static_cast<size_t>(d)];
  for (int64_t d = axis + 1; d < ndim; ++d) s.after *= shape[static_cast<size_t>(d)];
  return s;
}

void instance_norm_kernel(const InstanceNormAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const InstanceSplit s = split_instances(inputs[0].shape(), attrs.axis);
  const double epsilon = attrs.epsilon;
  const bool use_gamma = attrs.scale, use_beta = attrs.center;
  ConstView<double> x(inputs[0]), gamma(inputs[1]), beta(inputs[2]);
  OutView<double> y(outputs[0]);
  const double count = static_cast<double>(std::max<int64_t>(s.before * s.after, 1));
  // Flat index of element (a, b) of slice (n, c).
  auto at = [&](int64_t n, int64_t c, int64_t a, int64_t b) {
    return ((n * s.before + a) * s.channels + c) * s.after + b;
  };
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t c = 0; c < s.channels; ++c) {
      double mean = 0, var = 0;
      for (int64_t a = 0; a < s.before; ++a)
        for (int64_t b = 0; b < s.after; ++b) mean += x.data()[at(n, c, a, b)];
      mean /= count;
      for (int64_t a = 0; a < s.before; ++a)
        for (int64_t b = 0; b < s.after; ++b) {
          const double d = x.data()[at(n, c, a, b)] - mean;
          var += d * d;
        }
      const double scale = (use_gamma ? gamma.data()[c] : 1.0) / std::sqrt(var / count + epsilon);
      const double shift = use_beta ? beta.data()[c] : 0.0;
      for (int64_t a = 0; a < s.before; ++a)
        for (int64_t b = 0; b < s.after; ++b) {
          const int64_t i = at(n, c, a, b);
          y.data()[i] = (x.data()[i] - mean) * scale + shift;
        }
    }
  y.commit();
}

}  // namespace

void register_nn_instance_norm_kernels(KernelRegistry& registry) {
  registry.add<InstanceNormAttrs>("nn.instance_norm", instance_norm_kernel);
}

}  // namespace kiln
