// Ops: image.resize2d.
// Semantics follow ONNX Resize (opset 11 to 19) restricted to the two spatial axes, with
// Relay's attribute names. One extension: 'scales' ([scale_h, scale_w], output / input),
// which ONNX models give instead of sizes; when set, the coordinate transformation uses
// these ratios rather than size / input extent, exactly as ONNX does.
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

Type resize2d_relation(const std::vector<Type>& args, const Attrs& attrs) {
  Layout2D layout = layout_attr(attrs, "layout", {"NCHW", "NHWC"});
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", 4, attrs.get_string("layout"));
  check_numeric_arg(data, "data");
  choice_attr(attrs, "method", {"nearest_neighbor", "linear", "cubic"});
  choice_attr(attrs, "coordinate_transformation_mode",
              {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn",
               "tf_crop_and_resize", "half_pixel_symmetric"});
  choice_attr(attrs, "rounding_method", {"", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"});
  std::vector<int64_t> size = attrs.get_ints("size");
  if (size.size() != 2 || size[0] < 1 || size[1] < 1)
    throw std::move(Error("attribute 'size' must hold the output height and width")
                        .expected("[h, w] with h, w >= 1", attrs.get("size").to_string()));
  std::vector<double> roi = attrs.get_doubles("roi");
  if (roi.size() != 4)
    throw std::move(Error("attribute 'roi' must have 4 values")
                        .expected("[start_h, start_w, end_h, end_w]", attrs.get("roi").to_string()));
  if (!attrs.is_none("scales")) {
    std::vector<double> scales = attrs.get_doubles("scales");
    if (scales.size() != 2 || !(scales[0] > 0) || !(scales[1] > 0))
      throw std::move(Error("attribute 'scales' must hold two positive ratios")
                          .expected("[scale_h, scale_w] > 0", attrs.get("scales").to_string()));
  }
  Shape out = data.shape;
  out[layout.h] = size[0];
  out[layout.w] = size[1];
  return tensor_type(out, out_dtype_attr(attrs, data.dtype));
}

}  // namespace

void register_image_resize_ops(OpRegistry& registry) {
  registry.add("image.resize2d")
      .describe("Resizes the spatial axes to 'size' by nearest, linear or cubic interpolation (ONNX Resize).")
      .arg("data")
      .required_attr("size", AttrKind::kInts)
      .attr("roi", AttrKind::kFloats, std::vector<double>{0, 0, 0, 0})
      .attr("layout", AttrKind::kString, "NCHW")
      .attr("method", AttrKind::kString, "linear")
      .attr("coordinate_transformation_mode", AttrKind::kString, "half_pixel")
      .attr("rounding_method", AttrKind::kString, "")
      .attr("cubic_alpha", AttrKind::kFloat, -0.5)
      .attr("cubic_exclude", AttrKind::kInt, 0)
      .attr("extrapolation_value", AttrKind::kFloat, 0.0)
      .attr("out_dtype", AttrKind::kString, "")
      .attr("scales", AttrKind::kFloats, AttrValue())
      .set_relation(resize2d_relation)
      .set_pattern(OpPattern::kInjective);
}

}  // namespace kiln
