// Converters: Resize, Upsample, as image.resize2d on NCHW tensors (batch and channel
// scales must be 1).
#include <cmath>

#include "frontend/onnx/converters/converter_util.h"

namespace kiln::frontend {

namespace {

// image.resize2d's attributes except the output size.
struct ResizeMode {
  std::string method = "nearest_neighbor";
  std::string coordinates = "half_pixel";
  std::string rounding = "round_prefer_floor";
  double cubic_alpha = -0.75;
  int64_t cubic_exclude = 0;
  double extrapolation = 0.0;
  std::vector<double> roi{0, 0, 0, 0};
};

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

Attrs resize_attrs(int64_t height, int64_t width, const ResizeMode& m) {
  return {{"size", std::vector<int64_t>{height, width}},
          {"roi", m.roi},
          {"method", m.method},
          {"coordinate_transformation_mode", m.coordinates},
          {"rounding_method", m.rounding},
          {"cubic_alpha", m.cubic_alpha},
          {"cubic_exclude", m.cubic_exclude},
          {"extrapolation_value", m.extrapolation}};
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
  Attrs attrs = resize_attrs(static_cast<int64_t>(std::floor(static_cast<double>(shape[2]) * scales[2])),
                             static_cast<int64_t>(std::floor(static_cast<double>(shape[3]) * scales[3])), m);
  attrs.set("scales", std::vector<double>{scales[2], scales[3]});
  return call_op("image.resize2d", {c.input(0)}, attrs);
}

std::vector<double> doubles_of(const NDArray& a) { return a.to_doubles(); }

// Opset 10: Upsample's semantics (asymmetric coordinates; nearest rounds down when
// enlarging and up when shrinking).
ResizeMode legacy_mode(ConvertContext& c, const std::vector<double>& scales) {
  ResizeMode m;
  m.method = method_of(c.attrs().get_string("mode", "nearest"));
  m.coordinates = "asymmetric";
  bool shrinking = scales.size() == 4 && (scales[2] < 1 || scales[3] < 1);
  m.rounding = m.method == "nearest_neighbor" ? (shrinking ? "ceil" : "floor") : "";
  return m;
}

ConvertResult convert_upsample_v7(ConvertContext& c) {
  std::vector<double> scales = c.attrs().get_floats("scales");
  return resize_by_scales(c, scales, legacy_mode(c, scales));
}

ConvertResult convert_upsample_v9(ConvertContext& c) {
  std::vector<double> scales = doubles_of(c.require_constant_input(1, "scales"));
  return resize_by_scales(c, scales, legacy_mode(c, scales));
}

ConvertResult convert_resize_v10(ConvertContext& c) { return convert_upsample_v9(c); }

// Opset 11 on: X, roi, scales, sizes (one of scales and sizes non-empty).
ConvertResult convert_resize_v11(ConvertContext& c) {
  ResizeMode m;
  m.method = method_of(c.attrs().get_string("mode", "nearest"));
  m.coordinates = c.attrs().get_string("coordinate_transformation_mode", "half_pixel");
  m.rounding = m.method == "nearest_neighbor" ? c.attrs().get_string("nearest_mode", "round_prefer_floor") : "";
  m.cubic_alpha = c.attrs().get_float("cubic_coeff_a", -0.75);
  m.cubic_exclude = c.attrs().get_int("exclude_outside", 0);
  m.extrapolation = c.attrs().get_float("extrapolation_value", 0.0);
  if (m.coordinates == "tf_crop_and_resize") {
    std::vector<double> roi = doubles_of(c.require_constant_input(1, "roi"));
    check(roi.size() == 8, "roi must have 8 values for a 4-D input, found ", roi.size());
    m.roi = {roi[2], roi[3], roi[6], roi[7]};
  }
  if (c.has_input(3)) {
    NDArray sizes = c.require_constant_input(3, "sizes");
    if (sizes.numel() > 0) return resize_to_sizes(c, sizes.to_ints(), m);
  }
  NDArray scales = c.require_constant_input(2, "scales");
  check(scales.numel() > 0, "Resize needs scales or sizes");
  return resize_by_scales(c, doubles_of(scales), m);
}

}  // namespace

void register_image_converters(ConverterRegistry& r) {
  r.add("Upsample", 7, convert_upsample_v7).add("Upsample", 9, convert_upsample_v9);
  r.add("Resize", 10, convert_resize_v10).add("Resize", 11, convert_resize_v11);
}

}  // namespace kiln::frontend
