// Reference kernels: nn.conv2d, nn.conv2d_transpose, nn.conv3d, nn.conv3d_transpose.
// Direct convolutions over NCHW planes. The innermost loop runs along an output (or, for
// the transpose, input) row, over the part of the row that the kernel tap keeps inside
// the tensor, so there are no bounds tests per element.
#include "kiln/attrs/layout.h"
#include "kiln/attrs/nn.h"
#include "runtime/kernels/nn/compute_view.h"
#include "runtime/kernels/nn/window_nd.h"
#include "runtime/kernels/transform/layout_copy.h"

namespace kiln {

namespace {

struct ConvGeometry {
  int64_t batch, in_channels, in_h, in_w;
  int64_t out_channels, out_h, out_w;
  int64_t kernel_h, kernel_w;
  int64_t groups;
  Pair2D strides, dilation;
  Padding2D padding;
};

ConvGeometry conv_geometry(const Conv2DAttrs& attrs, const Shape& data, const Shape& weight, const Shape& out) {
  check(data.size() == 4 && weight.size() == 4 && out.size() == 4, "convolution expects 4-D tensors");
  const Window2D window = attrs.window();
  return {data[0],   data[1],   data[2],      data[3],        out[1],          out[2],        out[3],
          weight[2], weight[3], attrs.groups, window.strides, window.dilation, window.padding};
}

// y[oc, oh, ow] += w * x[ic, oh * stride_h + kh * dilation_h - pad_top, ...] over taps and input channels.
template <class C>
void conv2d(const C* x, const C* w, C* y, const ConvGeometry& g) {
  const int64_t in_per_group = g.in_channels / g.groups, out_per_group = g.out_channels / g.groups;
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w, taps = g.kernel_h * g.kernel_w;
  std::vector<IndexRange> rows(g.kernel_h), cols(g.kernel_w);
  std::vector<int64_t> col_offset(g.kernel_w);
  for (int64_t kh = 0; kh < g.kernel_h; ++kh)
    rows[kh] = inside_range(g.out_h, g.strides.h, kh * g.dilation.h - g.padding.top, g.in_h);
  for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
    col_offset[kw] = kw * g.dilation.w - g.padding.left;
    cols[kw] = inside_range(g.out_w, g.strides.w, col_offset[kw], g.in_w);
  }
  const int64_t sw = g.strides.w;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t oc = 0; oc < g.out_channels; ++oc) {
      C* out = y + (n * g.out_channels + oc) * out_plane;
      std::fill(out, out + out_plane, C(0));
      const int64_t first_in = oc / out_per_group * in_per_group;
      for (int64_t icg = 0; icg < in_per_group; ++icg) {
        const C* in = x + (n * g.in_channels + first_in + icg) * in_plane;
        const C* filter = w + (oc * in_per_group + icg) * taps;
        for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
          for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
            const C wv = filter[kh * g.kernel_w + kw];
            const int64_t off = col_offset[kw], ow_begin = cols[kw].begin, ow_end = cols[kw].end;
            for (int64_t oh = rows[kh].begin; oh < rows[kh].end; ++oh) {
              const C* in_row = in + (oh * g.strides.h + kh * g.dilation.h - g.padding.top) * g.in_w;
              C* out_row = out + oh * g.out_w;
              if (sw == 1) {
                for (int64_t ow = ow_begin; ow < ow_end; ++ow) out_row[ow] += wv * in_row[ow + off];
              } else {
                for (int64_t ow = ow_begin; ow < ow_end; ++ow) out_row[ow] += wv * in_row[ow * sw + off];
              }
            }
          }
        }
      }
    }
  }
}

// The adjoint of conv2d: every input element scatters w * x into the output positions it
// would have been read for. Weights are IOHW: (in_channels, out_channels / groups, kh, kw).
template <class C>
void conv2d_transpose(const C* x, const C* w, C* y, const ConvGeometry& g) {
  const int64_t in_per_group = g.in_channels / g.groups, out_per_group = g.out_channels / g.groups;
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w, taps = g.kernel_h * g.kernel_w;
  std::vector<IndexRange> rows(g.kernel_h), cols(g.kernel_w);
  std::vector<int64_t> col_offset(g.kernel_w);
  for (int64_t kh = 0; kh < g.kernel_h; ++kh)
    rows[kh] = inside_range(g.in_h, g.strides.h, kh * g.dilation.h - g.padding.top, g.out_h);
  for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
    col_offset[kw] = kw * g.dilation.w - g.padding.left;
    cols[kw] = inside_range(g.in_w, g.strides.w, col_offset[kw], g.out_w);
  }
  const int64_t sw = g.strides.w;
  std::fill(y, y + g.batch * g.out_channels * out_plane, C(0));
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t ic = 0; ic < g.in_channels; ++ic) {
      const C* in = x + (n * g.in_channels + ic) * in_plane;
      const int64_t first_out = ic / in_per_group * out_per_group;
      for (int64_t ocg = 0; ocg < out_per_group; ++ocg) {
        C* out = y + (n * g.out_channels + first_out + ocg) * out_plane;
        const C* filter = w + (ic * out_per_group + ocg) * taps;
        for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
          for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
            const C wv = filter[kh * g.kernel_w + kw];
            const int64_t off = col_offset[kw], iw_begin = cols[kw].begin, iw_end = cols[kw].end;
            for (int64_t ih = rows[kh].begin; ih < rows[kh].end; ++ih) {
              C* out_row = out + (ih * g.strides.h + kh * g.dilation.h - g.padding.top) * g.out_w;
              const C* in_row = in + ih * g.in_w;
              if (sw == 1) {
                for (int64_t iw = iw_begin; iw < iw_end; ++iw) out_row[iw + off] += wv * in_row[iw];
              } else {
                for (int64_t iw = iw_begin; iw < iw_end; ++iw) out_row[iw * sw + off] += wv * in_row[iw];
              }
            }
          }
        }
      }
    }
  }
}

// An integer tensor's values modulo 2^64 (unsigned arithmetic wraps where int64 would overflow).
std::vector<uint64_t> wrapping_values(const NDArray& t) {
  std::vector<int64_t> v = t.to_ints();
  return {v.begin(), v.end()};
}

// nn.conv2d of integers into int32: the exact sum modulo 2^32, as int32 arithmetic in any
// order gives it (Relay's out_dtype="int32" and ONNX ConvInteger wrap), so generated code may
// accumulate in int32 (the integer micro-kernel); qnn.conv2d's legal form relies on it.
void conv2d_int32_kernel(const NDArray& data, const NDArray& weight, NDArray& out, const ConvGeometry& g) {
  const std::vector<uint64_t> x = wrapping_values(data), w = wrapping_values(weight);
  std::vector<uint64_t> y(static_cast<size_t>(out.numel()));
  conv2d(x.data(), w.data(), y.data(), g);
  int32_t* dst = out.data<int32_t>();
  for (size_t i = 0; i < y.size(); ++i) dst[i] = static_cast<int32_t>(static_cast<uint32_t>(y[i]));
}

template <bool kTranspose, class A>
void conv_kernel(const A& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray& data = inputs[0];
  const NDArray& weight = inputs[1];
  ConvGeometry g = conv_geometry(attrs, data.shape(), weight.shape(), outputs[0].shape());
  if (!kTranspose && is_int(data.dtype()) && outputs[0].dtype() == DType::kInt32) {
    conv2d_int32_kernel(data, weight, outputs[0], g);
    return;
  }
  dispatch_compute(data.dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> x(data), w(weight);
    OutView<C> y(outputs[0]);
    if constexpr (kTranspose)
      conv2d_transpose(x.data(), w.data(), y.data(), g);
    else
      conv2d(x.data(), w.data(), y.data(), g);
    y.commit();
  });
}

// `array` (in layout `from`) copied into a new tensor in layout `to`.
NDArray relaid(const NDArray& array, const Layout& from, const Layout& to) {
  NDArray out = NDArray::empty(from.convert_shape(array.shape(), to), array.dtype());
  copy_between_layouts(array, from, out, to);
  return out;
}

// Blocked layouts (NCHW8c data, OIHW8i8o weights) are converted to NCHW / OIHW around the
// plain convolution: the reference kernel is the oracle, not the fast path.
void conv2d_kernel(const Conv2DAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const std::optional<ConvLayoutChoice> blocks =
      conv2d_blocks(attrs.data_layout, attrs.kernel_layout, attrs.out_layout);
  if (!blocks) return conv_kernel<false>(attrs, inputs, outputs);
  const Layout nchw = Layout::parse("NCHW"), oihw = Layout::parse("OIHW");
  const Layout out_layout = Layout::parse(blocks->out_layout());
  const NDArray plain_inputs[] = {relaid(inputs[0], Layout::parse(attrs.data_layout), nchw),
                                  relaid(inputs[1], Layout::parse(attrs.kernel_layout), oihw)};
  NDArray plain_out[] = {NDArray::empty(out_layout.convert_shape(outputs[0].shape(), nchw), outputs[0].dtype())};
  Conv2DAttrs plain = attrs;
  plain.data_layout = "NCHW";
  plain.kernel_layout = "OIHW";
  plain.out_layout = "";
  conv_kernel<false>(plain, plain_inputs, plain_out);
  copy_between_layouts(plain_out[0], nchw, outputs[0], out_layout);
}

// The 3-D convolutions, written for any number of spatial axes: plain loops over output
// positions and window taps with a bounds test per tap (the tensors of 3-D tests are small).
struct ConvNd {
  int64_t batch, in_channels, out_channels, groups;
  WindowNd window;  // for the transpose, `in` and `out` are those of the forward convolution
};

ConvNd conv_nd(const Conv3DAttrs& attrs, const Shape& data, const Shape& weight, const Shape& out, bool transpose) {
  std::vector<int64_t> kernel(weight.begin() + 2, weight.end());
  const WindowGeometry g = attrs.window();
  return {data[0], data[1], out[1], attrs.groups,
          transpose ? window_nd(g, out, data, kernel) : window_nd(g, data, out, kernel)};
}

// Calls fn(out_flat, tap_flat, in_flat) for every output position and tap whose input position is inside.
template <class Fn>
void for_each_tap(const WindowNd& w, Fn&& fn) {
  const std::vector<std::vector<int64_t>> taps = window_taps(w);
  std::vector<int64_t> pos(w.rank());
  int64_t out_flat = 0;
  for_each_index(w.out, [&](const std::vector<int64_t>& o) {
    for (size_t t = 0; t < taps.size(); ++t) {
      tap_position(w, o, taps[t], &pos);
      int64_t in_flat = offset_inside(pos, w.in);
      if (in_flat >= 0) fn(out_flat, static_cast<int64_t>(t), in_flat);
    }
    ++out_flat;
  });
}

// y[n, oc, o] = sum over the group's input channels and taps of w[oc, icg, t] * x[n, ic, o * s + t * d - p].
template <class C>
void conv_nd_forward(const C* x, const C* w, C* y, const ConvNd& g) {
  const int64_t in_per_group = g.in_channels / g.groups, out_per_group = g.out_channels / g.groups;
  const int64_t in_plane = num_elements(g.window.in), out_plane = num_elements(g.window.out);
  const int64_t taps = num_elements(g.window.kernel);
  std::fill(y, y + g.batch * g.out_channels * out_plane, C(0));
  for_each_tap(g.window, [&](int64_t o, int64_t t, int64_t i) {
    for (int64_t n = 0; n < g.batch; ++n)
      for (int64_t oc = 0; oc < g.out_channels; ++oc) {
        const int64_t first_in = oc / out_per_group * in_per_group;
        C sum = C(0);
        for (int64_t icg = 0; icg < in_per_group; ++icg)
          sum += w[(oc * in_per_group + icg) * taps + t] * x[(n * g.in_channels + first_in + icg) * in_plane + i];
        y[(n * g.out_channels + oc) * out_plane + o] += sum;
      }
  });
}

// The adjoint: x[n, ic, i] scatters into y[n, oc, i * s + t * d - p]. Weights are
// (in_channels, out_channels / groups, taps...). Here the window runs from y to x.
template <class C>
void conv_nd_transpose(const C* x, const C* w, C* y, const ConvNd& g) {
  const int64_t in_per_group = g.in_channels / g.groups, out_per_group = g.out_channels / g.groups;
  const int64_t y_plane = num_elements(g.window.in), x_plane = num_elements(g.window.out);
  const int64_t taps = num_elements(g.window.kernel);
  std::fill(y, y + g.batch * g.out_channels * y_plane, C(0));
  for_each_tap(g.window, [&](int64_t xi, int64_t t, int64_t yi) {
    for (int64_t n = 0; n < g.batch; ++n)
      for (int64_t ic = 0; ic < g.in_channels; ++ic) {
        const int64_t first_out = ic / in_per_group * out_per_group;
        const C xv = x[(n * g.in_channels + ic) * x_plane + xi];
        for (int64_t ocg = 0; ocg < out_per_group; ++ocg)
          y[(n * g.out_channels + first_out + ocg) * y_plane + yi] += w[(ic * out_per_group + ocg) * taps + t] * xv;
      }
  });
}

template <bool kTranspose, class A>
void conv_nd_kernel(const A& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray& data = inputs[0];
  const NDArray& weight = inputs[1];
  ConvNd g = conv_nd(attrs, data.shape(), weight.shape(), outputs[0].shape(), kTranspose);
  dispatch_compute(data.dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> x(data), w(weight);
    OutView<C> y(outputs[0]);
    if constexpr (kTranspose)
      conv_nd_transpose(x.data(), w.data(), y.data(), g);
    else
      conv_nd_forward(x.data(), w.data(), y.data(), g);
    y.commit();
  });
}

}  // namespace

void register_nn_conv_kernels(KernelRegistry& registry) {
  registry.add<Conv2DAttrs>("nn.conv2d", conv2d_kernel);
  registry.add<Conv2DTransposeAttrs>("nn.conv2d_transpose", conv_kernel<true, Conv2DTransposeAttrs>);
  registry.add<Conv3DAttrs>("nn.conv3d", conv_nd_kernel<false, Conv3DAttrs>);
  registry.add<Conv3DTransposeAttrs>("nn.conv3d_transpose", conv_nd_kernel<true, Conv3DTransposeAttrs>);
}

}  // namespace kiln
