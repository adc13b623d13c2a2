// Reference kernel: qnn.conv2d, a direct NCHW/OIHW convolution of zero-point-shifted
// integers accumulated in int64 and stored in the int32 output.
#include "runtime/kernels/qnn/quant_util.h"

namespace kiln {

namespace {

struct ConvGeometry {
  int64_t batch, in_channels, height, width;
  int64_t out_channels, group_in, kernel_h, kernel_w;
  int64_t out_h, out_w, groups;
  int64_t stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
};

std::vector<int64_t> pairs(const Attrs& attrs, const std::string& name) {
  std::vector<int64_t> v = attrs.get_ints(name);
  return v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : v;
}

ConvGeometry geometry(const Attrs& attrs, const Shape& x, const Shape& w, const Shape& y) {
  std::vector<int64_t> strides = pairs(attrs, "strides"), dilation = pairs(attrs, "dilation");
  std::vector<int64_t> padding = attrs.get_ints("padding");
  int64_t top = padding[0], left = padding.size() == 1 ? padding[0] : padding[1];
  return {x[0],       x[1],       x[2],        x[3],        w[0], w[1], w[2], w[3], y[2], y[3], attrs.get_int("groups"),
          strides[0], strides[1], dilation[0], dilation[1], top,  left};
}

// One output element: the sum over the group's input channels and the kernel window.
int64_t conv_at(const ConvGeometry& g, const std::vector<int64_t>& x, const std::vector<int64_t>& w, int64_t n,
                int64_t oc, int64_t oy, int64_t ox) {
  int64_t group = oc / (g.out_channels / g.groups);
  int64_t sum = 0;
  for (int64_t ic = 0; ic < g.group_in; ++ic) {
    int64_t c = group * g.group_in + ic;
    for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
      int64_t iy = oy * g.stride_h - g.pad_top + ky * g.dilation_h;
      if (iy < 0 || iy >= g.height) continue;
      for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
        int64_t ix = ox * g.stride_w - g.pad_left + kx * g.dilation_w;
        if (ix < 0 || ix >= g.width) continue;
        sum += x[static_cast<size_t>(((n * g.in_channels + c) * g.height + iy) * g.width + ix)] *
               w[static_cast<size_t>(((oc * g.group_in + ic) * g.kernel_h + ky) * g.kernel_w + kx)];
      }
    }
  }
  return sum;
}

void qnn_conv2d_kernel(const Attrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray &data = inputs[0], &kernel = inputs[1];
  NDArray& out = outputs[0];
  ConvGeometry g = geometry(attrs, data.shape(), kernel.shape(), out.shape());
  // Shifting by the zero points first makes padding (zero after the shift) drop out.
  std::vector<int64_t> x = data.to_ints(), w = kernel.to_ints();
  int64_t x_zero = inputs[2].int_at(0);
  for (int64_t& v : x) v -= x_zero;
  QuantParam w_zero(inputs[3], kernel.shape(), 0);
  for (size_t i = 0; i < w.size(); ++i) w[i] -= static_cast<int64_t>(w_zero(static_cast<int64_t>(i)));
  int64_t i = 0;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oc = 0; oc < g.out_channels; ++oc)
      for (int64_t oy = 0; oy < g.out_h; ++oy)
        for (int64_t ox = 0; ox < g.out_w; ++ox)
          out.set(i++, saturate(static_cast<double>(conv_at(g, x, w, n, oc, oy, ox)), out.dtype()));
}

}  // namespace

void register_qnn_conv2d_kernels(KernelRegistry& registry) { registry.add("qnn.conv2d", qnn_conv2d_kernel); }

}  // namespace kiln
