// Reference kernels: image.resize2d.
// Each output row and column is first mapped to the input coordinate it samples (ONNX's
// coordinate transformations, computed in double) and from there to a few taps (input
// offset, weight): 1 for nearest, 2 for linear, 4 for cubic. Taps outside the input are
// clamped to the edge, or dropped with the weights renormalised when cubic_exclude is set.
// The 2-D interpolation is the product of the two 1-D ones.
#include "kiln/attrs/image.h"
#include "kiln/attrs/layout.h"
#include "kiln/runtime/resize_coordinate.h"
#include "runtime/kernels/nn/compute_view.h"

namespace kiln {

namespace {

using CoordMode = ResizeCoordMode;
using Rounding = ResizeRounding;

// Keys' cubic convolution kernel with parameter alpha (ONNX's cubic_coeff_a).
double cubic_weight(double s, double alpha) {
  s = std::abs(s);
  if (s <= 1) return ((alpha + 2) * s - (alpha + 3)) * s * s + 1;
  if (s < 2) return ((alpha * s - 5 * alpha) * s + 8 * alpha) * s - 4 * alpha;
  return 0;
}

struct ResizeParams {
  int taps;  // 1 nearest, 2 linear, 4 cubic
  CoordMode mode;
  Rounding round;
  double alpha;
  bool exclude_outside;
  bool antialias;
};

// Taps of every output index along one axis: element offsets (index times `stride`) and
// weights, `taps` per index; `outside` marks indices that take the extrapolation value.
template <class C>
struct AxisTaps {
  int taps = 0;
  std::vector<int64_t> offset;
  std::vector<C> weight;
  std::vector<uint8_t> outside;
};

// The interpolation filter of linear (a triangle of radius 1) or cubic (radius 2) taps.
double filter_weight(double s, const ResizeParams& p) {
  if (p.taps == 4) return cubic_weight(s, p.alpha);
  s = std::abs(s);
  return s < 1 ? 1 - s : 0;
}

// Antialiasing (ONNX Resize 18, as ONNX Runtime computes it): shrinking by scale s < 1
// stretches the filter by 1 / s, so its support covers every input element between two
// outputs; taps run over the whole support and are normalised to sum 1.
template <class C>
AxisTaps<C> antialias_taps(const ResizeAxis& a, int64_t stride, const ResizeParams& p) {
  const double radius = p.taps / 2.0;
  const double stretch = a.scale < 1 ? 1 / a.scale : 1.0;
  const double support = radius * stretch;
  AxisTaps<C> t;
  t.taps = 2 * static_cast<int>(std::ceil(support)) + 1;
  for (int64_t o = 0; o < a.out; ++o) {
    double x = resize_source_coordinate(static_cast<double>(o), a, p.mode);
    const bool outside =
        p.mode == CoordMode::kTfCropAndResize && (x < 0 || x > static_cast<double>(a.in - 1) || std::isnan(x));
    t.outside.push_back(outside ? 1 : 0);
    x = std::isnan(x) ? 0.0 : std::clamp(x, -support - 1, static_cast<double>(a.in) + support);
    const double center = x + 0.5;
    const auto first = static_cast<int64_t>(std::floor(center - support + 0.5));
    const auto end = static_cast<int64_t>(std::floor(center + support + 0.5));
    std::vector<double> weight(static_cast<size_t>(t.taps), 0.0);
    double total = 0;
    for (int64_t i = first; i < end && i - first < t.taps; ++i) {
      if (p.exclude_outside && (i < 0 || i >= a.in)) continue;
      const double w = filter_weight((static_cast<double>(i) - center + 0.5) / stretch, p);
      weight[static_cast<size_t>(i - first)] = w;
      total += w;
    }
    for (int k = 0; k < t.taps; ++k) {
      t.offset.push_back(std::clamp<int64_t>(first + k, 0, a.in - 1) * stride);
      t.weight.push_back(static_cast<C>(total == 0 ? 0.0 : weight[static_cast<size_t>(k)] / total));
    }
  }
  return t;
}

template <class C>
AxisTaps<C> axis_taps(const ResizeAxis& a, int64_t stride, const ResizeParams& p) {
  if (p.antialias && p.taps > 1) return antialias_taps<C>(a, stride, p);
  AxisTaps<C> t;
  t.taps = p.taps;
  for (int64_t o = 0; o < a.out; ++o) {
    double x = resize_source_coordinate(static_cast<double>(o), a, p.mode);
    const bool outside =
        p.mode == CoordMode::kTfCropAndResize && (x < 0 || x > static_cast<double>(a.in - 1) || std::isnan(x));
    t.outside.push_back(outside ? 1 : 0);
    // Beyond this band every tap clamps to the same edge element; clamping keeps the
    // integer conversions below defined for extreme scales.
    x = std::isnan(x) ? 0.0 : std::clamp(x, -4.0, static_cast<double>(a.in) + 3.0);
    int64_t index[4];
    double weight[4];
    if (p.taps == 1) {
      index[0] = static_cast<int64_t>(resize_round(x, p.round));
      weight[0] = 1;
    } else {
      const double lower = std::floor(x), frac = x - lower;
      const int64_t first = static_cast<int64_t>(lower) - (p.taps == 4 ? 1 : 0);
      for (int k = 0; k < p.taps; ++k) index[k] = first + k;
      if (p.taps == 2) {
        weight[0] = 1 - frac;
        weight[1] = frac;
      } else {
        for (int k = 0; k < 4; ++k) weight[k] = cubic_weight(frac + 1 - k, p.alpha);
      }
      if (p.exclude_outside) {
        double sum = 0;
        for (int k = 0; k < p.taps; ++k) {
          if (index[k] < 0 || index[k] >= a.in) weight[k] = 0;
          sum += weight[k];
        }
        if (sum != 0)
          for (int k = 0; k < p.taps; ++k) weight[k] /= sum;
      }
    }
    for (int k = 0; k < p.taps; ++k) {
      t.offset.push_back(std::clamp<int64_t>(index[k], 0, a.in - 1) * stride);
      t.weight.push_back(static_cast<C>(weight[k]));
    }
  }
  return t;
}

// kTaps taps on both axes, known at compile time so the inner loops unroll; 0 reads each
// axis's count at run time (antialiasing makes them differ between the axes).
template <class C, int kTaps>
void resize(const C* x, C* y, const Axes4D& in_stride, const Axes4D& out_extent, const Axes4D& out_stride,
            const AxisTaps<C>& rows, const AxisTaps<C>& cols, C extrapolation) {
  const int row_taps = kTaps ? kTaps : rows.taps, col_taps = kTaps ? kTaps : cols.taps;
  for (int64_t n = 0; n < out_extent.n; ++n) {
    for (int64_t c = 0; c < out_extent.c; ++c) {
      const C* plane = x + n * in_stride.n + c * in_stride.c;
      C* out_plane = y + n * out_stride.n + c * out_stride.c;
      for (int64_t oh = 0; oh < out_extent.h; ++oh) {
        C* out_row = out_plane + oh * out_stride.h;
        const int64_t* row_offset = &rows.offset[oh * row_taps];
        const C* row_weight = &rows.weight[oh * row_taps];
        for (int64_t ow = 0; ow < out_extent.w; ++ow) {
          if (rows.outside[oh] || cols.outside[ow]) {
            out_row[ow * out_stride.w] = extrapolation;
            continue;
          }
          const int64_t* col_offset = &cols.offset[ow * col_taps];
          const C* col_weight = &cols.weight[ow * col_taps];
          C sum = C(0);
          for (int i = 0; i < row_taps; ++i) {
            const C* row = plane + row_offset[i];
            C row_sum = C(0);
            for (int j = 0; j < col_taps; ++j) row_sum += col_weight[j] * row[col_offset[j]];
            sum += row_weight[i] * row_sum;
          }
          out_row[ow * out_stride.w] = sum;
        }
      }
    }
  }
}

// NCHW{x}c data (N, C/x, H, W, x) is NHWC data of N·C/x images of x channels.
bool blocked(const std::string& layout) { return Layout::nchw_block(layout) > 0; }
Axes4D resize_extents(const Shape& shape, const std::string& layout) {
  if (!blocked(layout)) return layout_extents(shape, layout);
  return {shape.at(0) * shape.at(1), shape.at(4), shape.at(2), shape.at(3)};
}
Axes4D resize_strides(const Shape& shape, const std::string& layout) {
  if (!blocked(layout)) return layout_strides(shape, layout);
  return {shape.at(2) * shape.at(3) * shape.at(4), 1, shape.at(3) * shape.at(4), shape.at(4)};
}

void resize2d_kernel(const Resize2DAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray& data = inputs[0];
  NDArray& out = outputs[0];
  const std::string& layout = attrs.layout;
  const std::string& method = attrs.method;
  ResizeParams p;
  p.taps = method == "nearest_neighbor" ? 1 : method == "linear" ? 2 : 4;
  p.mode = resize_coord_mode(attrs.coordinate_transformation_mode);
  p.round = resize_rounding(attrs.rounding_method, p.mode);
  p.alpha = attrs.cubic_alpha;
  p.exclude_outside = attrs.cubic_exclude != 0;
  p.antialias = attrs.antialias;

  const Axes4D in_extent = resize_extents(data.shape(), layout), out_extent = resize_extents(out.shape(), layout);
  const Axes4D in_stride = resize_strides(data.shape(), layout), out_stride = resize_strides(out.shape(), layout);
  const std::vector<double>& roi = attrs.roi;
  double scale_h = static_cast<double>(out_extent.h) / static_cast<double>(std::max<int64_t>(in_extent.h, 1));
  double scale_w = static_cast<double>(out_extent.w) / static_cast<double>(std::max<int64_t>(in_extent.w, 1));
  if (attrs.scales) {
    scale_h = (*attrs.scales)[0];
    scale_w = (*attrs.scales)[1];
  }
  if (out.numel() == 0) return;
  check(in_extent.h > 0 && in_extent.w > 0, "image.resize2d: cannot resize an empty image");
  const ResizeAxis axis_h{in_extent.h, out_extent.h, scale_h, roi[0], roi[2]};
  const ResizeAxis axis_w{in_extent.w, out_extent.w, scale_w, roi[1], roi[3]};

  dispatch_compute(data.dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> x(data);
    OutView<C> y(out);
    AxisTaps<C> rows = axis_taps<C>(axis_h, in_stride.h, p), cols = axis_taps<C>(axis_w, in_stride.w, p);
    const C extrapolation = static_cast<C>(attrs.extrapolation_value);
    if (rows.taps != p.taps || cols.taps != p.taps) {
      resize<C, 0>(x.data(), y.data(), in_stride, out_extent, out_stride, rows, cols, extrapolation);
      y.commit();
      return;
    }
    switch (p.taps) {
      case 1: resize<C, 1>(x.data(), y.data(), in_stride, out_extent, out_stride, rows, cols, extrapolation); break;
      case 2: resize<C, 2>(x.data(), y.data(), in_stride, out_extent, out_stride, rows, cols, extrapolation); break;
      default: resize<C, 4>(x.data(), y.data(), in_stride, out_extent, out_stride, rows, cols, extrapolation); break;
    }
    y.commit();
  });
}

}  // namespace

void register_image_resize_kernels(KernelRegistry& registry) {
  registry.add<Resize2DAttrs>("image.resize2d", resize2d_kernel);
}

}  // namespace kiln
