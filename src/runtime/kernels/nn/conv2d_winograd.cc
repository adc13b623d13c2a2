// Reference kernels: nn.winograd_weight_transform and nn.conv2d_winograd, Winograd's F(4x4, 3x3)
// written out with its matrices (Lavin and Gray, 2015) in double: U = G g G^T,
// V = B^T d B per 6x6 input tile, M = sum over input channels of U . V, Y = A^T M A. The
// compiled form (kiln_conv2d_winograd_f32) does the same arithmetic in float with the products
// on the panel GEMM.
#include <array>
#include <optional>

#include "kiln/attrs/winograd.h"
#include "runtime/kernels/nn/compute_view.h"
#include "runtime/kernels/tensor/element.h"

namespace kiln {

namespace {

constexpr int64_t kPanel = 32;
constexpr int64_t kA = kWinogradAlpha;

constexpr double kBT[kA][kA] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                                {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
constexpr double kG[kA][3] = {{1.0 / 4, 0, 0},
                              {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                              {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                              {1.0 / 24, 1.0 / 12, 1.0 / 6},
                              {1.0 / 24, -1.0 / 12, 1.0 / 6},
                              {0, 0, 1}};
constexpr double kAT[kWinogradTile][kA] = {
    {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};

// weight (O/y, I/x, 3, 3, x, y) -> U (36, P, I, 32).
void weight_transform_kernel(const WinogradWeightAttrs& attrs, std::span<const NDArray> inputs,
                             std::span<NDArray> outputs) {
  const Shape& ws = inputs[0].shape();
  const int64_t in_channels = ws[1] * ws[4], x = ws[4], y = ws[5], panels = outputs[0].shape()[1];
  dispatch_compute(inputs[0].dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> weight(inputs[0]);
    OutView<C> u(outputs[0]);
    std::fill(u.data(), u.data() + kWinogradPoints * panels * in_channels * kPanel, C(0));
    for (int64_t o = 0; o < attrs.out_channels; ++o)
      for (int64_t c = 0; c < in_channels; ++c) {
        double g[3][3];
        for (int64_t r = 0; r < 3; ++r)
          for (int64_t s = 0; s < 3; ++s)
            g[r][s] = weight.data()[((((o / y) * ws[1] + c / x) * 3 + r) * 3 + s) * x * y + (c % x) * y + o % y];
        for (int64_t i = 0; i < kA; ++i)
          for (int64_t j = 0; j < kA; ++j) {
            double sum = 0;
            for (int64_t r = 0; r < 3; ++r)
              for (int64_t s = 0; s < 3; ++s) sum += kG[i][r] * g[r][s] * kG[j][s];
            u.data()[(((i * kA + j) * panels + o / kPanel) * in_channels + c) * kPanel + o % kPanel] =
                static_cast<C>(sum);
          }
      }
    u.commit();
  });
}

// data (N, C/x, H, W, x), U (36, P, C, 32)[, bias (K)[, residual]] -> (N, K/y, OH, OW, y): the sum
// is rounded to the compute type before the bias, the residual and the clamp, as the unfused ops
// round it.
void conv2d_winograd_kernel(const Conv2DWinogradAttrs& attrs, std::span<const NDArray> inputs,
                            std::span<NDArray> outputs) {
  const Shape& ds = inputs[0].shape();
  const Shape& os = outputs[0].shape();
  const int64_t n = ds[0], cb = ds[1], h = ds[2], w = ds[3], x = ds[4], channels = cb * x;
  const int64_t oh = os[2], ow = os[3], y = os[4], out_channels = attrs.channels;
  const int64_t panels = inputs[1].shape()[1];
  const int64_t top = attrs.padding[0], left = attrs.padding[1];
  dispatch_compute(inputs[0].dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> data(inputs[0]), u(inputs[1]);
    std::optional<ConstView<C>> bias_view, residual_view;
    if (inputs.size() > 2) bias_view.emplace(inputs[2]);
    if (inputs.size() > 3) residual_view.emplace(inputs[3]);
    const C* bias = bias_view ? bias_view->data() : nullptr;
    const C* residual = residual_view ? residual_view->data() : nullptr;
    const C lo = kernels::clip_bound<C>(attrs.clamp_min, true), hi = kernels::clip_bound<C>(attrs.clamp_max, false);
    auto epilogue = [&](double sum, int64_t k, int64_t i) {
      C v = static_cast<C>(sum);
      if (bias) v = static_cast<C>(v + bias[k]);
      if (residual) v = static_cast<C>(v + residual[i]);
      return kernels::clip_value(v, lo, hi);
    };
    OutView<C> out(outputs[0]);
    auto at = [&](int64_t image, int64_t c, int64_t row, int64_t col) -> double {
      if (row < 0 || row >= h || col < 0 || col >= w) return 0.0;
      return data.data()[(((image * cb + c / x) * h + row) * w + col) * x + c % x];
    };
    std::vector<double> v(static_cast<size_t>(kWinogradPoints * channels));
    std::vector<double> m(static_cast<size_t>(kWinogradPoints * out_channels));
    for (int64_t image = 0; image < n; ++image)
      for (int64_t y0 = 0; y0 < oh; y0 += kWinogradTile)
        for (int64_t x0 = 0; x0 < ow; x0 += kWinogradTile) {
          for (int64_t c = 0; c < channels; ++c)
            for (int64_t i = 0; i < kA; ++i)
              for (int64_t j = 0; j < kA; ++j) {
                double sum = 0;
                for (int64_t r = 0; r < kA; ++r)
                  for (int64_t s = 0; s < kA; ++s)
                    sum += kBT[i][r] * at(image, c, y0 - top + r, x0 - left + s) * kBT[j][s];
                v[static_cast<size_t>((i * kA + j) * channels + c)] = sum;
              }
          for (int64_t p = 0; p < kWinogradPoints; ++p)
            for (int64_t k = 0; k < out_channels; ++k) {
              double sum = 0;
              const C* col = u.data() + ((p * panels + k / kPanel) * channels) * kPanel + k % kPanel;
              for (int64_t c = 0; c < channels; ++c) sum += v[static_cast<size_t>(p * channels + c)] * col[c * kPanel];
              m[static_cast<size_t>(p * out_channels + k)] = sum;
            }
          for (int64_t k = 0; k < out_channels; ++k)
            for (int64_t r = 0; r < kWinogradTile && y0 + r < oh; ++r)
              for (int64_t s = 0; s < kWinogradTile && x0 + s < ow; ++s) {
                double sum = 0;
                for (int64_t i = 0; i < kA; ++i)
                  for (int64_t j = 0; j < kA; ++j)
                    sum += kAT[r][i] * m[static_cast<size_t>((i * kA + j) * out_channels + k)] * kAT[s][j];
                const int64_t i = (((image * (out_channels / y) + k / y) * oh + y0 + r) * ow + x0 + s) * y + k % y;
                out.data()[i] = epilogue(sum, k, i);
              }
        }
    out.commit();
  });
}

}  // namespace

void register_nn_winograd_kernels(KernelRegistry& registry) {
  registry.add<WinogradWeightAttrs>("nn.winograd_weight_transform", weight_transform_kernel);
  registry.add<Conv2DWinogradAttrs>("nn.conv2d_winograd", conv2d_winograd_kernel);
}

}  // namespace kiln
