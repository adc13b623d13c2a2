// Ops: image.resize2d.
// Semantics follow ONNX Resize (opset 11 to 19) restricted to the two spatial axes, with
// Relay's attribute names. Extensions: 'scales' ([scale_h, scale_w], output / input), which
// ONNX models give instead of sizes; when set, the coordinate transformation uses these ratios
// rather than size / input extent, exactly as ONNX does. 'antialias' (ONNX opset 18).
#include "kiln/attrs/image.h"
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

Type resize2d_relation(const std::vector<Type>& args, const Resize2DAttrs& attrs) {
  const Layout2D layout = layout_2d(attrs.layout);
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", 4, attrs.layout);
  check_numeric_arg(data, "data");
  Shape out = data.shape;
  out[layout.h] = attrs.size[0];
  out[layout.w] = attrs.size[1];
  return tensor_type(out, out_dtype_of(attrs.out_dtype, data.dtype));
}

}  // namespace

void register_image_resize_ops(OpRegistry& registry) {
  registry.add("image.resize2d")
      .describe("Resizes the spatial axes to 'size' by nearest, linear or cubic interpolation (ONNX Resize).")
      .arg("data")
      .attrs<Resize2DAttrs>()
      .set_relation<Resize2DAttrs>(resize2d_relation)
      .set_pattern(OpPattern::kInjective);
}

}  // namespace kiln
