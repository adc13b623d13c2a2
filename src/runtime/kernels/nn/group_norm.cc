// Reference kernel: nn.group_norm. Data (N, C, ...) is seen as N * num_groups contiguous
// groups of (C / num_groups) * spatial elements; the statistics of each group are summed in
// double (groups of a large image hold millions of elements), the output is computed in the
// data's compute type (float for float32, float16 and bfloat16).
#include "kiln/attrs/group_norm.h"

#include <cmath>

#include "runtime/kernels/nn/compute_view.h"

namespace kiln {

namespace {

struct GroupLayout {
  int64_t batch, channels, groups, spatial;
  int64_t per_group() const { return channels / groups; }
  int64_t group_size() const { return per_group() * spatial; }
};

GroupLayout layout_of(const Shape& shape, int64_t groups) {
  GroupLayout l{shape[0], shape[1], groups, 1};
  for (size_t d = 2; d < shape.size(); ++d) l.spatial *= shape[d];
  return l;
}

// (mean, 1 / sqrt(var + epsilon)) of the `count` elements at x, two passes.
template <class C>
std::pair<C, C> group_stats(const C* x, int64_t count, double epsilon) {
  const double inv_count = 1.0 / static_cast<double>(std::max<int64_t>(count, 1));
  double total = 0;
  for (int64_t i = 0; i < count; ++i) total += static_cast<double>(x[i]);
  const double mean = total * inv_count;
  double squares = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double d = static_cast<double>(x[i]) - mean;
    squares += d * d;
  }
  return {static_cast<C>(mean), static_cast<C>(1.0 / std::sqrt(squares * inv_count + epsilon))};
}

template <class C>
void group_norm(const C* x, const C* gamma, const C* beta, C* y, const GroupLayout& l, double epsilon) {
  for (int64_t n = 0; n < l.batch; ++n)
    for (int64_t g = 0; g < l.groups; ++g) {
      const int64_t base = (n * l.groups + g) * l.group_size();
      const auto [mean, rstd] = group_stats(x + base, l.group_size(), epsilon);
      for (int64_t k = 0; k < l.per_group(); ++k) {
        const int64_t c = g * l.per_group() + k, row = base + k * l.spatial;
        for (int64_t s = 0; s < l.spatial; ++s) y[row + s] = (x[row + s] - mean) * rstd * gamma[c] + beta[c];
      }
    }
}

void group_norm_kernel(const GroupNormAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const GroupLayout l = layout_of(inputs[0].shape(), attrs.num_groups);
  dispatch_compute(inputs[0].dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> x(inputs[0]), gamma(inputs[1]), beta(inputs[2]);
    OutView<C> y(outputs[0]);
    group_norm(x.data(), gamma.data(), beta.data(), y.data(), l, attrs.epsilon);
    y.commit();
  });
}

}  // namespace

void register_nn_group_norm_kernels(KernelRegistry& registry) {
  registry.add<GroupNormAttrs>("nn.group_norm", group_norm_kernel);
}

}  // namespace kiln
