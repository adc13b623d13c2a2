// Reference kernels: nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d, nn.global_max_pool2d,
// nn.max_pool3d, nn.avg_pool3d, nn.max_pool2d_with_argmax, nn.max_unpool.
// Window taps that fall in the padding are skipped (max pooling pads with -inf); the
// global pools are pools whose window is the whole plane. The 2-D pools of blocked NCHW{x}c
// data convert it to NCHW around the plain pool, as the blocked convolution does: the
// reference kernel is the oracle, not the fast path.
#include "kiln/attrs/layout.h"
#include "kiln/attrs/nn.h"
#include "kiln/support/strings.h"
#include "runtime/kernels/nn/compute_view.h"
#include "runtime/kernels/nn/window_nd.h"
#include "runtime/kernels/transform/layout_copy.h"

namespace kiln {

namespace {

struct PoolGeometry {
  Axes4D in_extent, in_stride, out_extent, out_stride;
  Pair2D pool, strides, dilation;
  Padding2D padding;
};

PoolGeometry pool_geometry(const Pool2DAttrs& attrs, const Shape& in, const Shape& out) {
  const std::string& layout = attrs.layout;
  const Window2D window = attrs.window();
  return {layout_extents(in, layout),
          layout_strides(in, layout),
          layout_extents(out, layout),
          layout_strides(out, layout),
          attrs.pool(),
          window.strides,
          window.dilation,
          window.padding};
}

PoolGeometry global_pool_geometry(const GlobalPool2DAttrs& attrs, const Shape& in, const Shape& out) {
  const std::string& layout = attrs.layout;
  Axes4D in_extent = layout_extents(in, layout);
  return {in_extent,
          layout_strides(in, layout),
          layout_extents(out, layout),
          layout_strides(out, layout),
          {in_extent.h, in_extent.w},
          {1, 1},
          {1, 1},
          {0, 0, 0, 0}};
}

// For each output row (or column), the taps of the window inside the input, and how
// many lie inside the padded input (the divisor of avg pooling with count_include_pad).
struct WindowTaps {
  std::vector<IndexRange> inside;
  std::vector<int64_t> in_padded;
};
WindowTaps window_taps(int64_t out_extent, int64_t in_extent, int64_t pool, int64_t stride, int64_t dilation,
                       int64_t pad_before, int64_t pad_after) {
  WindowTaps t;
  for (int64_t o = 0; o < out_extent; ++o) {
    int64_t start = o * stride - pad_before;
    t.inside.push_back(inside_range(pool, dilation, start, in_extent));
    IndexRange padded = inside_range(pool, dilation, start + pad_before, in_extent + pad_before + pad_after);
    t.in_padded.push_back(padded.end - padded.begin);
  }
  return t;
}

// Calls reduce(in_plane, out_index, oh, ow, rows, cols) for every output element of every (n, c) plane.
template <class Fn>
void for_each_window(const PoolGeometry& g, Fn&& reduce) {
  WindowTaps rows =
      window_taps(g.out_extent.h, g.in_extent.h, g.pool.h, g.strides.h, g.dilation.h, g.padding.top, g.padding.bottom);
  WindowTaps cols =
      window_taps(g.out_extent.w, g.in_extent.w, g.pool.w, g.strides.w, g.dilation.w, g.padding.left, g.padding.right);
  for (int64_t n = 0; n < g.in_extent.n; ++n) {
    for (int64_t c = 0; c < g.in_extent.c; ++c) {
      const int64_t in_plane = n * g.in_stride.n + c * g.in_stride.c;
      const int64_t out_plane = n * g.out_stride.n + c * g.out_stride.c;
      for (int64_t oh = 0; oh < g.out_extent.h; ++oh) {
        for (int64_t ow = 0; ow < g.out_extent.w; ++ow) {
          reduce(in_plane, out_plane + oh * g.out_stride.h + ow * g.out_stride.w, oh, ow, rows, cols);
        }
      }
    }
  }
}

template <class T>
void max_pool(const T* x, T* y, const PoolGeometry& g) {
  const T lowest =
      std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  for_each_window(g, [&](int64_t in_plane, int64_t out_index, int64_t oh, int64_t ow, const WindowTaps& rows,
                         const WindowTaps& cols) {
    const int64_t h0 = oh * g.strides.h - g.padding.top, w0 = ow * g.strides.w - g.padding.left;
    const IndexRange r = rows.inside[oh], c = cols.inside[ow];
    T best = lowest;
    for (int64_t kh = r.begin; kh < r.end; ++kh) {
      const T* row = x + in_plane + (h0 + kh * g.dilation.h) * g.in_stride.h;
      for (int64_t kw = c.begin; kw < c.end; ++kw) {
        const T v = row[(w0 + kw * g.dilation.w) * g.in_stride.w];
        if constexpr (std::is_floating_point_v<T>) {
          if (v > best || std::isnan(v)) best = v;  // a NaN, once taken, stays: it propagates as in PyTorch
        } else {
          best = v > best ? v : best;
        }
      }
    }
    y[out_index] = best;
  });
}

template <class C>
void avg_pool(const C* x, C* y, const PoolGeometry& g, bool count_include_pad) {
  for_each_window(g, [&](int64_t in_plane, int64_t out_index, int64_t oh, int64_t ow, const WindowTaps& rows,
                         const WindowTaps& cols) {
    const int64_t h0 = oh * g.strides.h - g.padding.top, w0 = ow * g.strides.w - g.padding.left;
    const IndexRange r = rows.inside[oh], c = cols.inside[ow];
    C sum = C(0);
    for (int64_t kh = r.begin; kh < r.end; ++kh) {
      const C* row = x + in_plane + (h0 + kh * g.dilation.h) * g.in_stride.h;
      for (int64_t kw = c.begin; kw < c.end; ++kw) sum += row[(w0 + kw * g.dilation.w) * g.in_stride.w];
    }
    const int64_t count =
        count_include_pad ? rows.in_padded[oh] * cols.in_padded[ow] : (r.end - r.begin) * (c.end - c.begin);
    y[out_index] = count > 0 ? sum / static_cast<C>(count) : C(0);
  });
}

void run_max_pool(const NDArray& data, NDArray& out, const PoolGeometry& g) {
  DType t = data.dtype();
  if (t == DType::kFloat16 || t == DType::kBFloat16) {
    ConstView<float> x(data);
    OutView<float> y(out);
    max_pool(x.data(), y.data(), g);
    y.commit();
    return;
  }
  dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
      max_pool(data.data<T>(), out.data<T>(), g);
    else
      throw Error(cat("max pooling does not support dtype ", dtype_name(t)));
  });
}

void run_avg_pool(const NDArray& data, NDArray& out, const PoolGeometry& g, bool count_include_pad) {
  dispatch_compute(data.dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> x(data);
    OutView<C> y(out);
    avg_pool(x.data(), y.data(), g, count_include_pad);
    y.commit();
  });
}

void max_pool2d_kernel(const Pool2DAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  run_max_pool(inputs[0], outputs[0], pool_geometry(attrs, inputs[0].shape(), outputs[0].shape()));
}

void avg_pool2d_kernel(const AvgPool2DAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  run_avg_pool(inputs[0], outputs[0], pool_geometry(attrs, inputs[0].shape(), outputs[0].shape()),
               attrs.count_include_pad);
}

void global_max_pool2d_kernel(const GlobalPool2DAttrs& attrs, std::span<const NDArray> inputs,
                              std::span<NDArray> outputs) {
  run_max_pool(inputs[0], outputs[0], global_pool_geometry(attrs, inputs[0].shape(), outputs[0].shape()));
}

void global_avg_pool2d_kernel(const GlobalPool2DAttrs& attrs, std::span<const NDArray> inputs,
                              std::span<NDArray> outputs) {
  run_avg_pool(inputs[0], outputs[0], global_pool_geometry(attrs, inputs[0].shape(), outputs[0].shape()), false);
}

// `kernel` (a pool of NCHW or NHWC data) run on data in attrs.layout, which may be NCHW{x}c.
template <class A, void (*kernel)(const A&, std::span<const NDArray>, std::span<NDArray>)>
void any_layout(const A& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  if (!Layout::nchw_block(attrs.layout)) return kernel(attrs, inputs, outputs);
  const Layout blocked = Layout::parse(attrs.layout), nchw = Layout::parse("NCHW");
  NDArray plain_in = NDArray::empty(blocked.convert_shape(inputs[0].shape(), nchw), inputs[0].dtype());
  NDArray plain_out = NDArray::empty(blocked.convert_shape(outputs[0].shape(), nchw), outputs[0].dtype());
  copy_between_layouts(inputs[0], blocked, plain_in, nchw);
  A plain = attrs;
  plain.layout = "NCHW";
  plain.out_layout = "";
  kernel(plain, std::span<const NDArray>(&plain_in, 1), std::span<NDArray>(&plain_out, 1));
  copy_between_layouts(plain_out, nchw, outputs[0], blocked);
}

// Pools written once for any number of spatial axes (the 3-D ones and the argmax pool).
// Calls reduce(plane, out_flat, inside_taps, padded_taps) for every output position, where
// inside_taps are the flat input offsets (within the plane) of the taps inside the input and
// padded_taps counts the taps inside the padded input (the count_include_pad divisor).
template <class Fn>
void for_each_window_nd(const WindowNd& w, int64_t planes, Fn&& reduce) {
  const std::vector<std::vector<int64_t>> taps = window_taps(w);
  const int64_t out_plane = num_elements(w.out);
  std::vector<int64_t> pos(w.rank());
  std::vector<int64_t> inside;
  int64_t out_flat = 0;
  for_each_index(w.out, [&](const std::vector<int64_t>& o) {
    inside.clear();
    int64_t padded = 0;
    for (const auto& tap : taps) {
      tap_position(w, o, tap, &pos);
      bool in_padded = true;
      for (size_t k = 0; k < w.rank(); ++k)
        in_padded = in_padded && pos[k] >= -w.pad_before[k] && pos[k] < w.in[k] + w.pad_after[k];
      padded += in_padded ? 1 : 0;
      int64_t in_flat = offset_inside(pos, w.in);
      if (in_flat >= 0) inside.push_back(in_flat);
    }
    for (int64_t p = 0; p < planes; ++p)
      reduce(p, p * out_plane + out_flat, static_cast<const std::vector<int64_t>&>(inside), padded);
    ++out_flat;
  });
}

// A's pool_size, strides, dilation and padding over the spatial axes of (N, C, spatial...) tensors.
template <class A>
WindowNd pool_window_nd(const A& attrs, const Shape& in, const Shape& out) {
  const size_t rank = in.size() - 2;
  return window_nd(window_geometry(attrs.strides, attrs.dilation, attrs.padding, rank), in, out,
                   spatial_values(attrs.pool_size, rank));
}

int64_t planes_of(const Shape& s) { return s[0] * s[1]; }

// The first maximum of the window wins; NaN, once taken, stays (as in PyTorch).
template <class T>
int64_t argmax_of(const T* plane, const std::vector<int64_t>& taps) {
  int64_t best = -1;
  for (int64_t i : taps) {
    if (best < 0) {
      best = i;
      continue;
    }
    const T v = plane[i], b = plane[best];
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(b)) continue;
      if (v > b || std::isnan(v)) best = i;
    } else if (v > b) {
      best = i;
    }
  }
  return best;
}

template <class T>
T lowest_value() {
  return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
}

// Runs fn(tag) with the storage type max pooling compares in: float for 16-bit floats.
template <class Fn>
void dispatch_max_pool(const NDArray& data, NDArray& out, Fn&& fn) {
  DType t = data.dtype();
  if (t == DType::kFloat16 || t == DType::kBFloat16) {
    ConstView<float> x(data);
    OutView<float> y(out);
    fn(x.data(), y.data());
    y.commit();
    return;
  }
  dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
      fn(data.data<T>(), out.data<T>());
    else
      throw Error(cat("max pooling does not support dtype ", dtype_name(t)));
  });
}

void max_pool_nd_kernel(const Pool3DAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray& data = inputs[0];
  WindowNd w = pool_window_nd(attrs, data.shape(), outputs[0].shape());
  const int64_t in_plane = num_elements(w.in);
  dispatch_max_pool(data, outputs[0], [&](const auto* x, auto* y) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(y)>>;
    for_each_window_nd(w, planes_of(data.shape()),
                       [&](int64_t p, int64_t o, const std::vector<int64_t>& taps, int64_t) {
                         const T* plane = x + p * in_plane;
                         int64_t best = argmax_of(plane, taps);
                         y[o] = best < 0 ? lowest_value<T>() : plane[best];
                       });
  });
}

void avg_pool_nd_kernel(const AvgPool3DAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray& data = inputs[0];
  WindowNd w = pool_window_nd(attrs, data.shape(), outputs[0].shape());
  const int64_t in_plane = num_elements(w.in);
  const bool count_include_pad = attrs.count_include_pad;
  dispatch_compute(data.dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> x(data);
    OutView<C> y(outputs[0]);
    for_each_window_nd(w, planes_of(data.shape()),
                       [&](int64_t p, int64_t o, const std::vector<int64_t>& taps, int64_t padded) {
                         const C* plane = x.data() + p * in_plane;
                         double sum = 0;
                         for (int64_t i : taps) sum += plane[i];
                         const int64_t count = count_include_pad ? padded : static_cast<int64_t>(taps.size());
                         y.data()[o] = count > 0 ? static_cast<C>(sum / static_cast<double>(count)) : C(0);
                       });
    y.commit();
  });
}

// ONNX's indices: flat positions in the whole input tensor; with column_major, the spatial
// part of the position is counted column-major (the last axis varies slowest).
int64_t argmax_position(int64_t plane, int64_t in_flat, const Shape& spatial, bool column_major) {
  int64_t plane_size = num_elements(spatial);
  if (!column_major) return plane * plane_size + in_flat;
  std::vector<int64_t> index = unravel(in_flat, spatial);
  int64_t flat = 0;
  for (size_t k = spatial.size(); k > 0; --k) flat = flat * spatial[k - 1] + index[k - 1];
  return plane * plane_size + flat;
}

void max_pool_with_argmax_kernel(const MaxPool2DWithArgmaxAttrs& attrs, std::span<const NDArray> inputs,
                                 std::span<NDArray> outputs) {
  const NDArray& data = inputs[0];
  WindowNd w = pool_window_nd(attrs, data.shape(), outputs[0].shape());
  const int64_t in_plane = num_elements(w.in);
  const bool column_major = attrs.column_major;
  int64_t* indices = outputs[1].data<int64_t>();
  dispatch_max_pool(data, outputs[0], [&](const auto* x, auto* y) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(y)>>;
    for_each_window_nd(w, planes_of(data.shape()),
                       [&](int64_t p, int64_t o, const std::vector<int64_t>& taps, int64_t) {
                         const T* plane = x + p * in_plane;
                         int64_t best = argmax_of(plane, taps);
                         y[o] = best < 0 ? lowest_value<T>() : plane[best];
                         indices[o] = best < 0 ? -1 : argmax_position(p, best, w.in, column_major);
                       });
  });
}

// out = zeros; out.flat[indices[i]] = data[i], where indices count in index_shape when given.
void max_unpool_kernel(const MaxUnpoolAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray& data = inputs[0];
  const NDArray& indices = inputs[1];
  NDArray& out = outputs[0];
  const size_t element = dtype_bytes(data.dtype());
  const auto* src = static_cast<const std::byte*>(data.raw());
  auto* dst = static_cast<std::byte*>(out.raw());
  std::fill(dst, dst + out.nbytes(), std::byte{0});
  const Shape index_shape = attrs.index_shape.value_or(out.shape());
  const int64_t index_limit = num_elements(index_shape);
  for (int64_t i = 0; i < data.numel(); ++i) {
    const int64_t index = indices.int_at(i);
    const int64_t target =
        index < 0 || index >= index_limit ? -1 : offset_inside(unravel(index, index_shape), out.shape());
    if (target < 0)
      throw std::move(Error(cat("index ", index, " at flat position ", i, " of 'indices' ", shape_str(indices.shape()),
                                " lies outside the output ", shape_str(out.shape())))
                          .expected(cat("a position within ", shape_str(index_shape)), cat(index)));
    std::copy(src + i * static_cast<int64_t>(element), src + (i + 1) * static_cast<int64_t>(element),
              dst + target * static_cast<int64_t>(element));
  }
}

}  // namespace

void register_nn_pool_kernels(KernelRegistry& registry) {
  registry.add<Pool2DAttrs>("nn.max_pool2d", any_layout<Pool2DAttrs, max_pool2d_kernel>);
  registry.add<AvgPool2DAttrs>("nn.avg_pool2d", any_layout<AvgPool2DAttrs, avg_pool2d_kernel>);
  registry.add<GlobalPool2DAttrs>("nn.global_max_pool2d", any_layout<GlobalPool2DAttrs, global_max_pool2d_kernel>);
  registry.add<GlobalPool2DAttrs>("nn.global_avg_pool2d", any_layout<GlobalPool2DAttrs, global_avg_pool2d_kernel>);
  registry.add<Pool3DAttrs>("nn.max_pool3d", max_pool_nd_kernel);
  registry.add<AvgPool3DAttrs>("nn.avg_pool3d", avg_pool_nd_kernel);
  registry.add<MaxPool2DWithArgmaxAttrs>("nn.max_pool2d_with_argmax", max_pool_with_argmax_kernel);
  registry.add<MaxUnpoolAttrs>("nn.max_unpool", max_unpool_kernel);
}

}  // namespace kiln
