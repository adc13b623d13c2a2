// Reference kernel: nn.conv2d_pointwise_depthwise, written as the two convolutions it fuses: the
// whole expanded tensor e = act_pw(conv1x1(data, pw) + pw_bias), then out = act_dw(depthwise(e,
// dw) + dw_bias). Each sum is taken in double and rounded to the compute type before its bias and
// activation, as the unfused ops round it.
#include <cmath>
#include <optional>
#include <vector>

#include "kiln/attrs/pointwise_depthwise.h"
#include "runtime/kernels/nn/compute_view.h"
#include "runtime/kernels/tensor/element.h"

namespace kiln {

namespace {

template <class C>
C activate(const FoldedActivation& act, C v) {
  if (act.kind == "clip")
    return kernels::clip_value(v, kernels::clip_bound<C>(act.clamp_min, true),
                               kernels::clip_bound<C>(act.clamp_max, false));
  if (act.kind == "swish") return static_cast<C>(v / (C(1) + std::exp(-v)));
  return v;
}

// data (N, C/x, H, W, x), pw (E/16, C/x, 1, 1, x, 16), pw_bias (E), dw (E/16, 1, KH, KW, 1, 16)
// [, dw_bias (E)] -> (N, E/16, OH, OW, 16).
void conv2d_pointwise_depthwise_kernel(const Conv2DPointwiseDepthwiseAttrs& attrs, std::span<const NDArray> inputs,
                                       std::span<NDArray> outputs) {
  const Shape& ds = inputs[0].shape();
  const Shape& ws = inputs[3].shape();
  const Shape& os = outputs[0].shape();
  const int64_t n = ds[0], cb = ds[1], h = ds[2], w = ds[3], x = ds[4], eb = os[1], oh = os[2], ow = os[3];
  const int64_t kh = ws[2], kw = ws[3], y = 16;
  const Window2D win = attrs.window();
  const FoldedActivation pw_act = attrs.pointwise(), dw_act = attrs.depthwise();
  dispatch_compute(inputs[0].dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> data(inputs[0]), pw(inputs[1]), pw_bias(inputs[2]), dw(inputs[3]);
    std::optional<ConstView<C>> dw_bias;
    if (inputs.size() > 4) dw_bias.emplace(inputs[4]);
    std::vector<C> expanded(static_cast<size_t>(eb * h * w * y));
    OutView<C> out(outputs[0]);
    for (int64_t image = 0; image < n; ++image) {
      const C* d = data.data() + image * cb * h * w * x;
      for (int64_t e = 0; e < eb * y; ++e)
        for (int64_t p = 0; p < h * w; ++p) {
          double sum = 0;
          for (int64_t c = 0; c < cb * x; ++c)
            sum += static_cast<double>(d[(c / x * h * w + p) * x + c % x]) *
                   static_cast<double>(pw.data()[((e / y * cb + c / x) * x + c % x) * y + e % y]);
          expanded[static_cast<size_t>((e / y * h * w + p) * y + e % y)] =
              activate(pw_act, static_cast<C>(static_cast<C>(sum) + pw_bias.data()[e]));
        }
      for (int64_t e = 0; e < eb * y; ++e)
        for (int64_t r = 0; r < oh; ++r)
          for (int64_t s = 0; s < ow; ++s) {
            double sum = 0;
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t row = r * win.strides.h + i * win.dilation.h - win.padding.top;
                const int64_t col = s * win.strides.w + j * win.dilation.w - win.padding.left;
                if (row < 0 || row >= h || col < 0 || col >= w) continue;
                sum += static_cast<double>(expanded[static_cast<size_t>(((e / y * h + row) * w + col) * y + e % y)]) *
                       static_cast<double>(dw.data()[((e / y * kh + i) * kw + j) * y + e % y]);
              }
            C v = static_cast<C>(sum);
            if (dw_bias) v = static_cast<C>(v + dw_bias->data()[e]);
            out.data()[(((image * eb + e / y) * oh + r) * ow + s) * y + e % y] = activate(dw_act, v);
          }
    }
    out.commit();
  });
}

}  // namespace

void register_nn_pointwise_depthwise_kernels(KernelRegistry& registry) {
  registry.add<Conv2DPointwiseDepthwiseAttrs>("nn.conv2d_pointwise_depthwise", conv2d_pointwise_depthwise_kernel);
}

}  // namespace kiln
