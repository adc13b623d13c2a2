// Reference kernels: signal.dft and signal.stft, as direct O(n^2) sums in double with
// exact twiddle factors (angles reduced modulo n before the cosine).
#include <cmath>
#include <complex>
#include <numbers>

#include "kiln/attrs/signal.h"
#include "runtime/kernels/kernel_util.h"

namespace kiln {

namespace {

using Complex = std::complex<double>;

// e^(sign 2 pi i m / n) for m in [0, n).
std::vector<Complex> twiddles(int64_t n, double sign) {
  std::vector<Complex> t(static_cast<size_t>(n));
  for (int64_t m = 0; m < n; ++m) {
    double angle = sign * 2.0 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(n);
    t[static_cast<size_t>(m)] = {std::cos(angle), std::sin(angle)};
  }
  return t;
}

// bins[k] = scale * sum_t signal[t] * twiddle[(k t) mod n] for k < bins.size(); samples past
// the signal's end are zeros.
void transform(const std::vector<Complex>& signal, const std::vector<Complex>& twiddle, double scale,
               std::vector<Complex>& bins) {
  const int64_t n = static_cast<int64_t>(twiddle.size());
  const int64_t length = std::min<int64_t>(n, static_cast<int64_t>(signal.size()));
  for (size_t k = 0; k < bins.size(); ++k) {
    Complex sum = 0;
    for (int64_t t = 0; t < length; ++t)
      sum += signal[static_cast<size_t>(t)] * twiddle[static_cast<size_t>((static_cast<int64_t>(k) * t) % n)];
    bins[k] = sum * scale;
  }
}

void dft_kernel(const DftAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray& data = inputs[0];
  NDArray& out = outputs[0];
  const Shape& in_shape = data.shape();
  const int64_t rank = data.ndim();
  const size_t axis = static_cast<size_t>(wrap_axis(attrs.axis, rank - 1));
  const int64_t components = in_shape.back();
  const bool inverse = attrs.inverse;
  const int64_t in_len = in_shape[axis], out_len = out.shape()[axis];
  const int64_t n = attrs.dft_length.value_or(in_len);
  // Positions: outer (axes before `axis`) x inner (axes between `axis` and the complex axis).
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= in_shape[d];
  for (size_t d = axis + 1; d + 1 < in_shape.size(); ++d) inner *= in_shape[d];
  std::vector<Complex> twiddle = twiddles(n, inverse ? 1.0 : -1.0);
  double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  std::vector<Complex> signal(static_cast<size_t>(in_len)), bins(static_cast<size_t>(out_len));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t t = 0; t < in_len; ++t) {
        int64_t at = ((o * in_len + t) * inner + i) * components;
        signal[static_cast<size_t>(t)] = {data.at(at), components == 2 ? data.at(at + 1) : 0.0};
      }
      transform(signal, twiddle, scale, bins);
      for (int64_t k = 0; k < out_len; ++k) {
        int64_t at = ((o * out_len + k) * inner + i) * 2;
        out.set(at, bins[static_cast<size_t>(k)].real());
        out.set(at + 1, bins[static_cast<size_t>(k)].imag());
      }
    }
}

void stft_kernel(const StftAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray& data = inputs[0];
  NDArray& out = outputs[0];
  const Shape& s = data.shape();
  const int64_t batch = s[0], length = s[1], components = s[2];
  const int64_t frames = out.shape()[1], bins_kept = out.shape()[2];
  const int64_t step = attrs.frame_step;
  const bool has_window = inputs.size() > 1;
  check(has_window || attrs.frame_length, "signal.stft needs a window or the attribute 'frame_length'");
  const int64_t frame = has_window ? inputs[1].numel() : *attrs.frame_length;
  std::vector<double> window =
      has_window ? inputs[1].to_doubles() : std::vector<double>(static_cast<size_t>(frame), 1.0);
  std::vector<Complex> twiddle = twiddles(frame, -1.0);
  std::vector<Complex> signal(static_cast<size_t>(frame)), bins(static_cast<size_t>(bins_kept));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t t = 0; t < frame; ++t) {
        int64_t at = (b * length + f * step + t) * components;
        Complex v{data.at(at), components == 2 ? data.at(at + 1) : 0.0};
        signal[static_cast<size_t>(t)] = v * window[static_cast<size_t>(t)];
      }
      transform(signal, twiddle, 1.0, bins);
      for (int64_t k = 0; k < bins_kept; ++k) {
        int64_t at = ((b * frames + f) * bins_kept + k) * 2;
        out.set(at, bins[static_cast<size_t>(k)].real());
        out.set(at + 1, bins[static_cast<size_t>(k)].imag());
      }
    }
}

}  // namespace

void register_signal_dft_kernels(KernelRegistry& registry) {
  registry.add<DftAttrs>("signal.dft", dft_kernel);
  registry.add<StftAttrs>("signal.stft", stft_kernel);
}

}  // namespace kiln
