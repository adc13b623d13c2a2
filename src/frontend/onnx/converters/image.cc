// Converters: Resize, Upsample, as image.resize2d on NCHW tensors (batch and channel
// scales must be 1).
#include "kiln/attrs/image.h"

#include <algorithm>
#include <cmath>

#include "frontend/onnx/converters/converter_util.h"

namespace kiln::frontend {

namespace {

std::string method_of(const std::string& mode) {
  if (mode == "nearest") return "nearest_neighbor";
  if (mode == "linear" || mode == "bilinear") return "linear";
  if (mode == "cubic") return "cubic";
  throw std::move(
      Error("attribute 'mode' has an unsupported value").expected("nearest, linear or cubic", "'" + mode + "'"));
}

const Shape& image_shape(ConvertContext& c) {
  const Shape& shape = c.input_shape(0);
  if (shape.size() != 4)
    throw std::move(Error("only 4-D (N, C, H, W) inputs can be resized").expected("rank 4", shape_str(shape)));
  return shape;
}

// How ONNX's Resize interpolates, with the roi (tf_crop_and_resize) when known at import.
struct ResizeMode {
  ResizeMethodAttrs method;
  std::vector<double> roi{0, 0, 0, 0};
};

Resize2DAttrs resize_attrs(int64_t height, int64_t width, const ResizeMode& m) {
  Resize2DAttrs a;
  static_cast<ResizeMethodAttrs&>(a) = m.method;
  a.size = {height, width};
  a.roi = m.roi;
  return a;
}

Expr resize_to_sizes(ConvertContext& c, const std::vector<int64_t>& sizes, const ResizeMode& m) {
  const Shape& shape = image_shape(c);
  check(sizes.size() == 4, "sizes must have 4 values for an input of shape ", shape_str(shape), ", found ",
        sizes.size());
  check(sizes[0] == shape[0] && sizes[1] == shape[1], "resizing the batch or channel axis is not supported: sizes ",
        shape_str(sizes), " for input ", shape_str(shape));
  return call_op("image.resize2d", {c.input(0)}, resize_attrs(sizes[2], sizes[3], m));
}

// Output extents are floor(input * scale); the ratios themselves drive the coordinates.
Expr resize_by_scales(ConvertContext& c, const std::vector<double>& scales, const ResizeMode& m) {
  const Shape& shape = image_shape(c);
  check(scales.size() == 4, "scales must have 4 values for an input of shape ", shape_str(shape), ", found ",
        scales.size());
  check(scales[0] == 1 && scales[1] == 1, "scaling the batch or channel axis is not supported: scales [", join(scales),
        "]");
  check(shape[2] != kAnyDim && shape[3] != kAnyDim, "resizing by scales needs static height and width, found ",
        shape_str(shape));
  Resize2DAttrs attrs = resize_attrs(static_cast<int64_t>(std::floor(static_cast<double>(shape[2]) * scales[2])),
                                     static_cast<int64_t>(std::floor(static_cast<double>(shape[3]) * scales[3])), m);
  attrs.scales = std::vector<double>{scales[2], scales[3]};
  return call_op("image.resize2d", {c.input(0)}, attrs);
}

std::vector<double> doubles_of(const NDArray& a) { return a.to_doubles(); }

// Opset 10: Upsample's semantics (asymmetric coordinates; nearest rounds down when
// enlarging and up when shrinking).
// Run-time scales are taken to enlarge, as Upsample's specification requires.
ResizeMode legacy_mode(ConvertContext& c, const std::vector<double>& scales) {
  ResizeMode m;
  ResizeMethodAttrs& a = m.method;
  a.method = method_of(c.attrs().get_string("mode", "nearest"));
  a.coordinate_transformation_mode = "asymmetric";
  a.cubic_alpha = -0.75;
  bool shrinking = scales.size() == 4 && (scales[2] < 1 || scales[3] < 1);
  a.rounding_method = a.method == "nearest_neighbor" ? (shrinking ? "ceil" : "floor") : "";
  return m;
}

// image.resize2d with roi, scales and sizes run-time tensors (an absent one empty). Opsets 9
// and 10 give the scales as input 1 and have no roi or sizes.
Expr dynamic_resize(ConvertContext& c, const ResizeMethodAttrs& method, bool scales_only = false) {
  image_shape(c);
  auto operand = [&](std::optional<size_t> i, DType dtype) {
    return i && c.has_input(*i) ? c.input(*i) : make_constant(NDArray::empty({0}, dtype));
  };
  auto at = [&](size_t i) { return scales_only ? std::nullopt : std::optional(i); };
  return call_op("dyn.resize2d",
                 {c.input(0), operand(at(1), DType::kFloat32), operand(scales_only ? 1 : 2, DType::kFloat32),
                  operand(at(3), DType::kInt64)},
                 method);
}

ConvertResult convert_upsample_v7(ConvertContext& c) {
  std::vector<double> scales = c.attrs().get_floats("scales");
  return resize_by_scales(c, scales, legacy_mode(c, scales));
}

ConvertResult convert_upsample_v9(ConvertContext& c) {
  if (!c.constant_input(1)) return dynamic_resize(c, legacy_mode(c, {}).method, true);
  std::vector<double> scales = doubles_of(c.require_constant_input(1, "scales"));
  return resize_by_scales(c, scales, legacy_mode(c, scales));
}

ConvertResult convert_resize_v10(ConvertContext& c) { return convert_upsample_v9(c); }

// The axes roi, scales and sizes refer to (opset 18 attribute 'axes'; every axis before).
std::vector<int64_t> resize_axes(ConvertContext& c) {
  const int64_t rank = c.input_rank(0);
  if (c.opset() >= 18 && c.attrs().has("axes")) {
    std::vector<int64_t> axes = normalize_onnx_axes(c.attrs().get_ints("axes"), rank);
    std::vector<int64_t> sorted = axes;
    std::sort(sorted.begin(), sorted.end());
    check(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "Resize's axes repeat an axis: [",
          join(axes), "]");
    return axes;
  }
  std::vector<int64_t> all;
  for (int64_t a = 0; a < rank; ++a) all.push_back(a);
  return all;
}

// `values` (one per entry of `axes`) spread over every axis, `fill(axis)` elsewhere.
template <class T, class Fill>
std::vector<T> over_all_axes(const std::vector<T>& values, const std::vector<int64_t>& axes, int64_t rank,
                             const std::string& what, Fill fill) {
  check(values.size() == axes.size(), "Resize's ", what, " must have one value per resized axis (", axes.size(),
        "), found ", values.size());
  std::vector<T> out;
  for (int64_t a = 0; a < rank; ++a) out.push_back(fill(a));
  for (size_t i = 0; i < axes.size(); ++i) out[static_cast<size_t>(axes[i])] = values[i];
  return out;
}

// roi [starts..., ends...] over `axes` -> image.resize2d's [start_h, start_w, end_h, end_w].
std::vector<double> roi_of(ConvertContext& c, const std::vector<int64_t>& axes) {
  std::vector<double> roi = c.require_constant_input(1, "roi").to_doubles();
  const int64_t rank = c.input_rank(0);
  const size_t k = axes.size();
  check(roi.size() == 2 * k, "roi must have 2 values per resized axis (", 2 * k, "), found ", roi.size());
  std::vector<double> starts(roi.begin(), roi.begin() + static_cast<std::ptrdiff_t>(k));
  std::vector<double> ends(roi.begin() + static_cast<std::ptrdiff_t>(k), roi.end());
  starts = over_all_axes(starts, axes, rank, "roi", [](int64_t) { return 0.0; });
  ends = over_all_axes(ends, axes, rank, "roi", [](int64_t) { return 1.0; });
  check(rank == 4, "roi needs a 4-D input");
  return {starts[2], starts[3], ends[2], ends[3]};
}

// keep_aspect_ratio_policy (opset 18) with sizes: not_larger / not_smaller scale every resized
// axis by the smallest / largest of the ratios sizes / input, rounding the extents half up.
Expr resize_keeping_aspect(ConvertContext& c, const std::vector<int64_t>& sizes, const std::vector<int64_t>& axes,
                           const std::string& policy, const ResizeMode& m) {
  const Shape& shape = image_shape(c);
  check(c.input_type(0).is_static(), "Resize with keep_aspect_ratio_policy needs a static input shape, found ",
        shape_str(shape));
  double scale = policy == "not_larger" ? INFINITY : 0.0;
  for (int64_t a : axes) {
    const double ratio = static_cast<double>(sizes[static_cast<size_t>(a)]) / static_cast<double>(shape[a]);
    scale = policy == "not_larger" ? std::min(scale, ratio) : std::max(scale, ratio);
  }
  std::vector<double> scales(4, 1.0);
  std::vector<int64_t> out = shape;
  for (int64_t a : axes) {
    scales[static_cast<size_t>(a)] = scale;
    out[static_cast<size_t>(a)] = static_cast<int64_t>(std::floor(scale * static_cast<double>(shape[a]) + 0.5));
  }
  check(out[0] == shape[0] && out[1] == shape[1], "resizing the batch or channel axis is not supported: ", policy,
        " gives ", shape_str(out), " for input ", shape_str(shape));
  Resize2DAttrs attrs = resize_attrs(out[2], out[3], m);
  attrs.scales = std::vector<double>{scales[2], scales[3]};
  return call_op("image.resize2d", {c.input(0)}, attrs);
}

ResizeMethodAttrs resize_method(ConvertContext& c) {
  ResizeMethodAttrs m;
  m.method = method_of(c.attrs().get_string("mode", "nearest"));
  m.coordinate_transformation_mode = c.attrs().get_string("coordinate_transformation_mode", "half_pixel");
  check(m.coordinate_transformation_mode != "half_pixel_symmetric" || c.opset() >= 19,
        "coordinate_transformation_mode half_pixel_symmetric needs opset 19, found opset ", c.opset());
  m.rounding_method = m.method == "nearest_neighbor" ? c.attrs().get_string("nearest_mode", "round_prefer_floor") : "";
  m.cubic_alpha = c.attrs().get_float("cubic_coeff_a", -0.75);
  m.cubic_exclude = c.attrs().get_int("exclude_outside", 0);
  m.extrapolation_value = c.attrs().get_float("extrapolation_value", 0.0);
  // nearest has no filter to stretch: antialias leaves it as it is.
  m.antialias = c.opset() >= 18 && c.attrs().get_int("antialias", 0) != 0 && m.method != "nearest_neighbor";
  return m;
}

// Whether roi, scales or sizes is known only at run time. The run-time form takes a value per
// axis and stretches: opset 18's axes and keep_aspect_ratio_policy need them at import.
bool resize_operands_dynamic(ConvertContext& c, const ResizeMethodAttrs& m) {
  auto dynamic = [&](size_t i) { return c.has_input(i) && !c.constant_input(i); };
  bool sizes_given = c.has_input(3) && (dynamic(3) || c.constant_input(3)->numel() > 0);
  bool runtime = (m.coordinate_transformation_mode == "tf_crop_and_resize" && dynamic(1)) || dynamic(3) ||
                 (!sizes_given && dynamic(2));
  if (runtime && c.opset() >= 18) {
    check(!c.attrs().has("axes"), "Resize's axes need scales or sizes known at import time");
    check(c.attrs().get_string("keep_aspect_ratio_policy", "stretch") == "stretch",
          "Resize's keep_aspect_ratio_policy needs sizes known at import time");
  }
  return runtime;
}

// Opset 11 on: X, roi, scales, sizes (one of scales and sizes non-empty); opset 18 adds
// antialias, axes and keep_aspect_ratio_policy, 19 the half_pixel_symmetric mode.
ConvertResult convert_resize_v11(ConvertContext& c) {
  ResizeMode m{resize_method(c)};
  if (resize_operands_dynamic(c, m.method)) return dynamic_resize(c, m.method);
  const std::vector<int64_t> axes = resize_axes(c);
  const int64_t rank = c.input_rank(0);
  if (m.method.coordinate_transformation_mode == "tf_crop_and_resize") m.roi = roi_of(c, axes);
  if (c.has_input(3)) {
    NDArray sizes_value = c.require_constant_input(3, "sizes");
    if (sizes_value.numel() > 0) {
      const Shape& shape = c.input_shape(0);
      std::vector<int64_t> sizes = over_all_axes(sizes_value.to_ints(), axes, rank, "sizes",
                                                 [&](int64_t a) { return shape[static_cast<size_t>(a)]; });
      const std::string policy =
          c.opset() >= 18 ? c.attrs().get_string("keep_aspect_ratio_policy", "stretch") : "stretch";
      if (policy == "not_larger" || policy == "not_smaller") return resize_keeping_aspect(c, sizes, axes, policy, m);
      check(policy == "stretch", "keep_aspect_ratio_policy must be stretch, not_larger or not_smaller, found '", policy,
            "'");
      return resize_to_sizes(c, sizes, m);
    }
  }
  NDArray scales = c.require_constant_input(2, "scales");
  check(scales.numel() > 0, "Resize needs scales or sizes");
  return resize_by_scales(c, over_all_axes(doubles_of(scales), axes, rank, "scales", [](int64_t) { return 1.0; }), m);
}

}  // namespace

void register_image_converters(ConverterRegistry& r) {
  r.add("Upsample", 7, convert_upsample_v7).add("Upsample", 9, convert_upsample_v9);
  r.add("Resize", 10, convert_resize_v10).add("Resize", 11, convert_resize_v11).add("Resize", 13, convert_resize_v11);
  r.add("Resize", 18, convert_resize_v11).add("Resize", 19, convert_resize_v11);
}

}  // namespace kiln::frontend
