// Reference kernels: nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d, nn.global_max_pool2d.
// Window taps that fall in the padding are skipped (max pooling pads with -inf); the
// global pools are pools whose window is the whole plane.
#include "runtime/kernels/nn/compute_view.h"

namespace kiln {

namespace {

struct PoolGeometry {
  Axes4D in_extent, in_stride, out_extent, out_stride;
  KernelPair pool, strides, dilation;
  KernelPadding padding;
};

PoolGeometry pool_geometry(const Attrs& attrs, const Shape& in, const Shape& out) {
  const std::string& layout = attrs.get_string("layout");
  return {layout_extents(in, layout),      layout_strides(in, layout),
          layout_extents(out, layout),     layout_strides(out, layout),
          kernel_pair(attrs, "pool_size"), kernel_pair(attrs, "strides"),
          kernel_pair(attrs, "dilation"),  kernel_padding(attrs)};
}

PoolGeometry global_pool_geometry(const Attrs& attrs, const Shape& in, const Shape& out) {
  const std::string& layout = attrs.get_string("layout");
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

void max_pool2d_kernel(const Attrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  run_max_pool(inputs[0], outputs[0], pool_geometry(attrs, inputs[0].shape(), outputs[0].shape()));
}

void avg_pool2d_kernel(const Attrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  run_avg_pool(inputs[0], outputs[0], pool_geometry(attrs, inputs[0].shape(), outputs[0].shape()),
               attrs.get_bool("count_include_pad"));
}

void global_max_pool2d_kernel(const Attrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  run_max_pool(inputs[0], outputs[0], global_pool_geometry(attrs, inputs[0].shape(), outputs[0].shape()));
}

void global_avg_pool2d_kernel(const Attrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  run_avg_pool(inputs[0], outputs[0], global_pool_geometry(attrs, inputs[0].shape(), outputs[0].shape()), false);
}

}  // namespace

void register_nn_pool_kernels(KernelRegistry& registry) {
  registry.add("nn.max_pool2d", max_pool2d_kernel);
  registry.add("nn.avg_pool2d", avg_pool2d_kernel);
  registry.add("nn.global_max_pool2d", global_max_pool2d_kernel);
  registry.add("nn.global_avg_pool2d", global_avg_pool2d_kernel);
}

}  // namespace kiln
