// Reference kernel: qnn.conv2d, a direct NCHW/OIHW convolution of zero-point-shifted integers.
// An int32 output wraps as ONNX's ConvInteger allows ("the accumulation may overflow if and only
// if in 32 bits"), so generated code summing in int32 in any order gives the same values; other
// output dtypes saturate.
#include <algorithm>

#include "kiln/attrs/nn.h"
#include "runtime/kernels/qnn/quant_util.h"

namespace kiln {

namespace {

struct ConvGeometry {
  int64_t batch, in_channels, height, width;
  int64_t out_channels, group_in, kernel_h, kernel_w;
  int64_t out_h, out_w, groups;
  int64_t stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
};

ConvGeometry geometry(const QnnConv2DAttrs& attrs, const Shape& x, const Shape& w, const Shape& y) {
  const Window2D win = attrs.window();
  return {x[0],
          x[1],
          x[2],
          x[3],
          w[0],
          w[1],
          w[2],
          w[3],
          y[2],
          y[3],
          attrs.groups,
          win.strides.h,
          win.strides.w,
          win.dilation.h,
          win.dilation.w,
          win.padding.top,
          win.padding.left};
}

// The first and one-past-last output index whose input index o * stride + offset lies in
// [0, extent): the window tap at `offset` reads no padding there.
std::pair<int64_t, int64_t> inside_range(int64_t offset, int64_t stride, int64_t extent, int64_t outputs) {
  int64_t first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t last = extent - offset <= 0 ? 0 : (extent - offset - 1) / stride + 1;
  return {first, std::min(last, outputs)};
}

// plane += w * (one input channel's window tap), over the output positions reading real data.
void accumulate_tap(const ConvGeometry& g, const int32_t* channel, int32_t w, int64_t ky, int64_t kx, int64_t* plane) {
  const int64_t row_offset = ky * g.dilation_h - g.pad_top, col_offset = kx * g.dilation_w - g.pad_left;
  auto [oy0, oy1] = inside_range(row_offset, g.stride_h, g.height, g.out_h);
  auto [ox0, ox1] = inside_range(col_offset, g.stride_w, g.width, g.out_w);
  for (int64_t oy = oy0; oy < oy1; ++oy) {
    const int32_t* row = channel + (oy * g.stride_h + row_offset) * g.width + col_offset;
    int64_t* out = plane + oy * g.out_w;
    for (int64_t ox = ox0; ox < ox1; ++ox) out[ox] += static_cast<int64_t>(w * row[ox * g.stride_w]);
  }
}

// Zero-point-shifted operands as int32 (|value| <= 255 for 8-bit data, so products fit).
std::vector<int32_t> shifted(const NDArray& t, const QuantParam& zero_point) {
  std::vector<int64_t> v = t.to_ints();
  std::vector<int32_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = static_cast<int32_t>(v[i] - static_cast<int64_t>(zero_point(static_cast<int64_t>(i))));
  return out;
}

void store_plane(const std::vector<int64_t>& plane, NDArray& out, int64_t offset) {
  if (out.dtype() == DType::kInt32) {
    int32_t* dst = out.data<int32_t>() + offset;
    for (size_t i = 0; i < plane.size(); ++i) dst[i] = static_cast<int32_t>(static_cast<uint32_t>(plane[i]));
    return;
  }
  for (size_t i = 0; i < plane.size(); ++i)
    out.set(offset + static_cast<int64_t>(i), saturate(static_cast<double>(plane[i]), out.dtype()));
}

void qnn_conv2d_kernel(const QnnConv2DAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray &data = inputs[0], &kernel = inputs[1];
  NDArray& out = outputs[0];
  const ConvGeometry g = geometry(attrs, data.shape(), kernel.shape(), out.shape());
  // Shifting by the zero points first makes padding (zero after the shift) drop out.
  const std::vector<int32_t> x = shifted(data, QuantParam(inputs[2], data.shape(), 0));
  const std::vector<int32_t> w = shifted(kernel, QuantParam(inputs[3], kernel.shape(), 0));
  const int64_t planes = g.height * g.width, taps = g.kernel_h * g.kernel_w, ocg = g.out_channels / g.groups;
  std::vector<int64_t> plane(static_cast<size_t>(g.out_h * g.out_w));
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oc = 0; oc < g.out_channels; ++oc) {
      std::fill(plane.begin(), plane.end(), 0);
      const int64_t first_channel = oc / ocg * g.group_in;
      for (int64_t ic = 0; ic < g.group_in; ++ic) {
        const int32_t* channel = x.data() + (n * g.in_channels + first_channel + ic) * planes;
        const int32_t* taps_of = w.data() + (oc * g.group_in + ic) * taps;
        for (int64_t t = 0; t < taps; ++t)
          if (taps_of[t] != 0) accumulate_tap(g, channel, taps_of[t], t / g.kernel_w, t % g.kernel_w, plane.data());
      }
      store_plane(plane, out, (n * g.out_channels + oc) * g.out_h * g.out_w);
    }
}

}  // namespace

void register_qnn_conv2d_kernels(KernelRegistry& registry) {
  registry.add<QnnConv2DAttrs>("qnn.conv2d", qnn_conv2d_kernel);
}

}  // namespace kiln
