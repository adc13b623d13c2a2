// Ops: nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d, nn.global_max_pool2d.
// Data is NCHW or NHWC; windows follow window_output_size() (ceil_mode as PyTorch and ONNX:
// a last window that would start in the trailing padding is dropped).
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

Shape with_spatial(const Shape& data, const Layout2D& layout, int64_t h, int64_t w) {
  Shape out = data;
  out[layout.h] = h;
  out[layout.w] = w;
  return out;
}

Type pool2d_relation(const std::vector<Type>& args, const Attrs& attrs) {
  Layout2D layout = layout_attr(attrs, "layout", {"NCHW", "NHWC"});
  choice_attr(attrs, "out_layout", {"", attrs.get_string("layout")});
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", 4, attrs.get_string("layout"));
  check_numeric_arg(data, "data");
  Pair2D pool = pair_attr(attrs, "pool_size", 1);
  Pair2D strides = pair_attr(attrs, "strides", 1);
  Pair2D dilation = pair_attr(attrs, "dilation", 1);
  Padding2D pad = padding_attr(attrs);
  bool ceil_mode = attrs.get_bool("ceil_mode");
  const Shape& x = data.shape;
  int64_t h = window_extent("height", x, x[layout.h], pool.h, strides.h, dilation.h, pad.top, pad.bottom, ceil_mode);
  int64_t w = window_extent("width", x, x[layout.w], pool.w, strides.w, dilation.w, pad.left, pad.right, ceil_mode);
  return tensor_type(with_spatial(x, layout, h, w), data.dtype);
}

Type global_pool2d_relation(const std::vector<Type>& args, const Attrs& attrs) {
  Layout2D layout = layout_attr(attrs, "layout", {"NCHW", "NHWC"});
  choice_attr(attrs, "out_layout", {"", attrs.get_string("layout")});
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", 4, attrs.get_string("layout"));
  check_numeric_arg(data, "data");
  return tensor_type(with_spatial(data.shape, layout, 1, 1), data.dtype);
}

OpDef& add_pool_attrs(OpDef& def) {
  return def.arg("data")
      .attr("pool_size", AttrKind::kInts, std::vector<int64_t>{1, 1})
      .attr("strides", AttrKind::kInts, std::vector<int64_t>{1, 1})
      .attr("dilation", AttrKind::kInts, std::vector<int64_t>{1, 1})
      .attr("padding", AttrKind::kInts, std::vector<int64_t>{0, 0})
      .attr("layout", AttrKind::kString, "NCHW")
      .attr("out_layout", AttrKind::kString, "")
      .attr("ceil_mode", AttrKind::kBool, false)
      .set_relation(pool2d_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);
}

OpDef& add_global_pool_attrs(OpDef& def) {
  return def.arg("data")
      .attr("layout", AttrKind::kString, "NCHW")
      .attr("out_layout", AttrKind::kString, "")
      .set_relation(global_pool2d_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);
}

}  // namespace

void register_nn_pool_ops(OpRegistry& registry) {
  add_pool_attrs(registry.add("nn.max_pool2d").describe("2-D max pooling; padding never wins (it is -inf)."));
  add_pool_attrs(registry.add("nn.avg_pool2d")
                     .describe("2-D average pooling; count_include_pad counts padding positions in the divisor."))
      .attr("count_include_pad", AttrKind::kBool, false);
  add_global_pool_attrs(registry.add("nn.global_avg_pool2d").describe("Mean over the spatial axes, kept as 1 x 1."));
  add_global_pool_attrs(registry.add("nn.global_max_pool2d").describe("Maximum over the spatial axes, kept as 1 x 1."));
}

}  // namespace kiln
