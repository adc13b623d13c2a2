// Reference kernels: signal.hann_window, signal.hamming_window, signal.blackman_window,
// signal.mel_weight_matrix.
#include <cmath>
#include <numbers>

#include "kiln/attrs/signal.h"
#include "runtime/kernels/kernel_util.h"

namespace kiln {

namespace {

// w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = length (periodic) or length - 1.
using WindowKernel = std::function<void(const CosineWindowAttrs&, std::span<const NDArray>, std::span<NDArray>)>;

WindowKernel cosine_window(double a0, double a1, double a2) {
  return [a0, a1, a2](const CosineWindowAttrs& attrs, std::span<const NDArray>, std::span<NDArray> outputs) {
    NDArray& out = outputs[0];
    const int64_t length = out.numel();
    const double period = static_cast<double>(attrs.periodic ? length : length - 1);
    for (int64_t n = 0; n < length; ++n) {
      // A symmetric window of one sample has N = 0; its one value is w[0].
      double x = period > 0 ? 2.0 * std::numbers::pi * static_cast<double>(n) / period : 0.0;
      out.set(n, a0 - a1 * std::cos(x) + a2 * std::cos(2.0 * x));
    }
  };
}

double hertz_to_mel(double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); }
double mel_to_hertz(double mel) { return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0); }

// ONNX's definition: num_mel_bins + 2 edges equally spaced in mel, each mapped to the
// spectrum bin floor((dft_length + 1) * hz / sample_rate); filter i rises from edge i to
// edge i+1 and falls to edge i+2.
void mel_weight_matrix_kernel(const MelWeightMatrixAttrs& attrs, std::span<const NDArray>, std::span<NDArray> outputs) {
  NDArray& out = outputs[0];
  const int64_t mel_bins = attrs.num_mel_bins, dft_length = attrs.dft_length;
  const int64_t spectrum_bins = out.shape()[0];
  const double sample_rate = static_cast<double>(attrs.sample_rate);
  const double low = hertz_to_mel(attrs.lower_edge_hertz);
  const double high = hertz_to_mel(attrs.upper_edge_hertz);
  const double step = (high - low) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> edge(static_cast<size_t>(mel_bins + 2));
  for (size_t i = 0; i < edge.size(); ++i) {
    double hz = mel_to_hertz(static_cast<double>(i) * step + low);
    edge[i] = static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / sample_rate));
  }
  auto set = [&](int64_t row, int64_t col, double v) {
    check(row >= 0 && row < spectrum_bins, "signal.mel_weight_matrix: mel edge falls on spectrum bin ", row,
          ", outside the ", spectrum_bins, " bins");
    out.set(row * mel_bins + col, v);
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t left = edge[static_cast<size_t>(i)], center = edge[static_cast<size_t>(i) + 1],
                  right = edge[static_cast<size_t>(i) + 2];
    if (center == left)
      set(center, i, 1.0);
    else
      for (int64_t j = left; j <= center; ++j)
        set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
    for (int64_t j = center; j < right; ++j)
      set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
  }
}

}  // namespace

void register_signal_window_kernels(KernelRegistry& registry) {
  registry.add<CosineWindowAttrs>("signal.hann_window", cosine_window(0.5, 0.5, 0.0));
  registry.add<CosineWindowAttrs>("signal.hamming_window", cosine_window(25.0 / 46.0, 21.0 / 46.0, 0.0));
  registry.add<CosineWindowAttrs>("signal.blackman_window", cosine_window(0.42, 0.5, 0.08));
  registry.add<MelWeightMatrixAttrs>("signal.mel_weight_matrix", mel_weight_matrix_kernel);
}

}  // namespace kiln
