// Reference kernels: random.uniform, random.normal, random.bernoulli, random.multinomial.
// The generator is std::mt19937_64 (its sequence is fixed by the C++ standard) and the
// distributions are computed here rather than by <random>'s, whose algorithms vary between
// standard libraries, so a seed gives the same samples everywhere.
#include "kiln/attrs/random.h"

#include <cmath>
#include <numbers>
#include <random>

#include "kiln/support/strings.h"
#include "runtime/kernels/kernel_util.h"

namespace kiln {

namespace {

class Sampler {
 public:
  explicit Sampler(const std::optional<int64_t>& seed)
      : engine_(seed ? static_cast<uint64_t>(*seed) : std::random_device{}()) {}

  // Uniform on [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // Standard normal by the Box-Muller transform (1 - u lies in (0, 1], so the log is finite).
  double normal() {
    double radius = std::sqrt(-2.0 * std::log(1.0 - uniform()));
    return radius * std::cos(2.0 * std::numbers::pi * uniform());
  }

 private:
  std::mt19937_64 engine_;
};

void uniform_kernel(const RandomUniformAttrs& attrs, std::span<const NDArray>, std::span<NDArray> outputs) {
  Sampler sampler(attrs.seed);
  const double low = attrs.low, high = attrs.high;
  for (int64_t i = 0; i < outputs[0].numel(); ++i) outputs[0].set(i, low + (high - low) * sampler.uniform());
}

void normal_kernel(const RandomNormalAttrs& attrs, std::span<const NDArray>, std::span<NDArray> outputs) {
  Sampler sampler(attrs.seed);
  const double mean = attrs.mean, scale = attrs.scale;
  for (int64_t i = 0; i < outputs[0].numel(); ++i) outputs[0].set(i, mean + scale * sampler.normal());
}

void bernoulli_kernel(const BernoulliAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  Sampler sampler(attrs.seed);
  const NDArray& probs = inputs[0];
  for (int64_t i = 0; i < probs.numel(); ++i) outputs[0].set(i, sampler.uniform() < probs.at(i) ? 1.0 : 0.0);
}

// Inverse-CDF sampling from softmax(logits) of each row.
void multinomial_kernel(const MultinomialAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  Sampler sampler(attrs.seed);
  const NDArray& logits = inputs[0];
  const int64_t batch = logits.shape()[0], classes = logits.shape()[1], samples = outputs[0].shape()[1];
  check(classes > 0, "random.multinomial needs at least one class; logits have shape ", shape_str(logits.shape()));
  std::vector<double> cumulative(static_cast<size_t>(classes));
  for (int64_t b = 0; b < batch; ++b) {
    double top = logits.at(b * classes);
    for (int64_t c = 1; c < classes; ++c) top = std::max(top, logits.at(b * classes + c));
    double total = 0;
    for (int64_t c = 0; c < classes; ++c)
      cumulative[static_cast<size_t>(c)] = total += std::exp(logits.at(b * classes + c) - top);
    for (int64_t s = 0; s < samples; ++s) {
      double u = sampler.uniform() * total;
      int64_t c = 0;
      while (c + 1 < classes && cumulative[static_cast<size_t>(c)] <= u) ++c;
      outputs[0].set(b * samples + s, static_cast<double>(c));
    }
  }
}

}  // namespace

void register_random_kernels(KernelRegistry& registry) {
  registry.add<RandomUniformAttrs>("random.uniform", uniform_kernel);
  registry.add<RandomNormalAttrs>("random.normal", normal_kernel);
  registry.add<BernoulliAttrs>("random.bernoulli", bernoulli_kernel);
  registry.add<MultinomialAttrs>("random.multinomial", multinomial_kernel);
}

}  // namespace kiln
