// Ops: nn.conv2d, nn.conv2d_transpose (NCHW data; OIHW and IOHW weights, as Relay and ONNX),
// nn.conv3d, nn.conv3d_transpose (NCDHW data; OIDHW and IODHW weights).
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

void check_conv_dtypes(const std::vector<Type>& args, const TensorTypeNode& data, const TensorTypeNode& weight) {
  check_numeric_arg(data, "data");
  if (weight.dtype != data.dtype)
    throw std::move(Error(cat("dtypes of 'data' ", type_str(args[0]), " and 'weight' ", type_str(args[1]), " differ"))
                        .expected(std::string(dtype_name(data.dtype)), std::string(dtype_name(weight.dtype))));
}

int64_t groups_attr(const Attrs& attrs) {
  int64_t groups = attrs.get_int("groups");
  if (groups < 1) throw std::move(Error("attribute 'groups' must be positive").expected(">= 1", cat(groups)));
  return groups;
}

struct ConvArgs {
  const TensorTypeNode& data;
  const TensorTypeNode& weight;
  Pair2D strides, dilation;
  Padding2D padding;
  int64_t groups;
};

ConvArgs conv_args(const std::vector<Type>& args, const Attrs& attrs, const char* kernel_layout) {
  layout_attr(attrs, "data_layout", {"NCHW"});
  choice_attr(attrs, "kernel_layout", {kernel_layout});
  choice_attr(attrs, "out_layout", {"", "NCHW"});
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", 4, "NCHW");
  const TensorTypeNode& weight = arg_tensor_of_rank(args, 1, "weight", 4, kernel_layout);
  check_conv_dtypes(args, data, weight);
  return {data,
          weight,
          pair_attr(attrs, "strides", 1),
          pair_attr(attrs, "dilation", 1),
          padding_attr(attrs),
          groups_attr(attrs)};
}

// Both known and a not divisible by b.
bool known_indivisible(int64_t a, int64_t b) { return a >= 0 && a % b != 0; }

void check_divisible_by_groups(int64_t extent, int64_t groups, const std::string& what, const std::string& arg_name,
                               const Shape& shape) {
  if (known_indivisible(extent, groups))
    throw std::move(Error(cat(what, " of '", arg_name, "' ", shape_str(shape), " is not divisible by groups=", groups))
                        .expected(cat("a multiple of ", groups), cat(extent)));
}

// The optional 'channels' and 'kernel_size' attributes must agree with the weight.
void check_weight_attrs(const Attrs& attrs, int64_t out_channels, const TensorTypeNode& weight) {
  if (!attrs.is_none("channels")) {
    int64_t channels = attrs.get_int("channels");
    if (out_channels >= 0 && channels != out_channels)
      throw std::move(Error(cat("attribute 'channels' disagrees with 'weight' ", shape_str(weight.shape)))
                          .expected(cat(out_channels), cat(channels)));
  }
  if (!attrs.is_none("kernel_size")) {
    Pair2D k = pair_attr(attrs, "kernel_size", 1);
    int64_t kh = weight.shape[2], kw = weight.shape[3];
    if ((kh >= 0 && k.h != kh) || (kw >= 0 && k.w != kw))
      throw std::move(Error(cat("attribute 'kernel_size' disagrees with 'weight' ", shape_str(weight.shape)))
                          .expected(shape_str({kh, kw}), shape_str({k.h, k.w})));
  }
}

Type conv2d_relation(const std::vector<Type>& args, const Attrs& attrs) {
  ConvArgs a = conv_args(args, attrs, "OIHW");
  const Shape& x = a.data.shape;
  const Shape& w = a.weight.shape;
  check_divisible_by_groups(x[1], a.groups, "input channels", "data", x);
  check_divisible_by_groups(w[0], a.groups, "output channels", "weight", w);
  int64_t weight_in_channels = w[1] < 0 ? kAnyDim : w[1] * a.groups;
  check_same_extent(x[1], weight_in_channels, "input channels (weight axis 1 times groups)", "data", x, "weight", w);
  check_weight_attrs(attrs, w[0], a.weight);
  int64_t out_h = window_extent("height", x, x[2], w[2], a.strides.h, a.dilation.h, a.padding.top, a.padding.bottom);
  int64_t out_w = window_extent("width", x, x[3], w[3], a.strides.w, a.dilation.w, a.padding.left, a.padding.right);
  return tensor_type({x[0], w[0], out_h, out_w}, out_dtype_attr(attrs, a.data.dtype));
}

// Extent of a transposed convolution's output along one axis.
int64_t transposed_extent(const std::string& axis_name, const Shape& data_shape, int64_t in, int64_t kernel,
                          int64_t stride, int64_t dilation, int64_t pad_before, int64_t pad_after,
                          int64_t output_padding) {
  if (in < 0 || kernel < 0) return kAnyDim;
  int64_t out = (in - 1) * stride - pad_before - pad_after + dilation * (kernel - 1) + output_padding + 1;
  if (out <= 0)
    throw std::move(Error(cat(axis_name, " of argument 'data' ", shape_str(data_shape),
                              ": padding leaves no output of the transposed convolution"))
                        .expected("a positive extent", cat(out)));
  return out;
}

Type conv2d_transpose_relation(const std::vector<Type>& args, const Attrs& attrs) {
  ConvArgs a = conv_args(args, attrs, "IOHW");
  const Shape& x = a.data.shape;
  const Shape& w = a.weight.shape;
  check_divisible_by_groups(x[1], a.groups, "input channels", "data", x);
  check_same_extent(x[1], w[0], "input channels (weight axis 0)", "data", x, "weight", w);
  int64_t out_channels = w[1] < 0 ? kAnyDim : w[1] * a.groups;
  check_weight_attrs(attrs, out_channels, a.weight);
  Pair2D output_padding = pair_attr(attrs, "output_padding", 0);
  if (output_padding.h >= std::max(a.strides.h, a.dilation.h) ||
      output_padding.w >= std::max(a.strides.w, a.dilation.w))
    throw std::move(Error("attribute 'output_padding' must be smaller than the stride or the dilation")
                        .expected(cat("values below strides=", attrs.get("strides").to_string(),
                                      " or dilation=", attrs.get("dilation").to_string()),
                                  attrs.get("output_padding").to_string()));
  int64_t out_h = transposed_extent("height", x, x[2], w[2], a.strides.h, a.dilation.h, a.padding.top, a.padding.bottom,
                                    output_padding.h);
  int64_t out_w = transposed_extent("width", x, x[3], w[3], a.strides.w, a.dilation.w, a.padding.left, a.padding.right,
                                    output_padding.w);
  return tensor_type({x[0], out_channels, out_h, out_w}, out_dtype_attr(attrs, a.data.dtype));
}

// The 3-D ops, written for any number of spatial axes (NC + spatial data layouts).
struct ConvNdArgs {
  const TensorTypeNode& data;
  const TensorTypeNode& weight;
  std::vector<int64_t> strides, dilation, padding;  // padding: begins, then ends
  int64_t groups;
};

const char* const kSpatialAxisNames[] = {"depth", "height", "width"};

ConvNdArgs conv_nd_args(const std::vector<Type>& args, const Attrs& attrs, size_t rank, const char* data_layout,
                        const char* kernel_layout) {
  choice_attr(attrs, "data_layout", {data_layout});
  choice_attr(attrs, "kernel_layout", {kernel_layout});
  choice_attr(attrs, "out_layout", {"", data_layout});
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", static_cast<int64_t>(rank + 2), data_layout);
  const TensorTypeNode& weight = arg_tensor_of_rank(args, 1, "weight", static_cast<int64_t>(rank + 2), kernel_layout);
  check_conv_dtypes(args, data, weight);
  return {data,
          weight,
          spatial_attr(attrs, "strides", rank, 1),
          spatial_attr(attrs, "dilation", rank, 1),
          padding_nd_attr(attrs, rank),
          groups_attr(attrs)};
}

void check_weight_attrs_nd(const Attrs& attrs, int64_t out_channels, const TensorTypeNode& weight, size_t rank) {
  if (!attrs.is_none("channels")) {
    int64_t channels = attrs.get_int("channels");
    if (out_channels >= 0 && channels != out_channels)
      throw std::move(Error(cat("attribute 'channels' disagrees with 'weight' ", shape_str(weight.shape)))
                          .expected(cat(out_channels), cat(channels)));
  }
  if (attrs.is_none("kernel_size")) return;
  std::vector<int64_t> kernel = spatial_attr(attrs, "kernel_size", rank, 1);
  Shape taps(weight.shape.begin() + 2, weight.shape.end());
  for (size_t i = 0; i < rank; ++i)
    if (taps[i] >= 0 && taps[i] != kernel[i])
      throw std::move(Error(cat("attribute 'kernel_size' disagrees with 'weight' ", shape_str(weight.shape)))
                          .expected(shape_str(taps), shape_str(kernel)));
}

const char* axis_name(size_t rank, size_t i) { return kSpatialAxisNames[3 - rank + i]; }

Type conv3d_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const size_t rank = 3;
  ConvNdArgs a = conv_nd_args(args, attrs, rank, "NCDHW", "OIDHW");
  const Shape& x = a.data.shape;
  const Shape& w = a.weight.shape;
  check_divisible_by_groups(x[1], a.groups, "input channels", "data", x);
  check_divisible_by_groups(w[0], a.groups, "output channels", "weight", w);
  int64_t weight_in_channels = w[1] < 0 ? kAnyDim : w[1] * a.groups;
  check_same_extent(x[1], weight_in_channels, "input channels (weight axis 1 times groups)", "data", x, "weight", w);
  check_weight_attrs_nd(attrs, w[0], a.weight, rank);
  Shape out{x[0], w[0]};
  for (size_t i = 0; i < rank; ++i)
    out.push_back(window_extent(axis_name(rank, i), x, x[i + 2], w[i + 2], a.strides[i], a.dilation[i], a.padding[i],
                                a.padding[i + rank]));
  return tensor_type(out, out_dtype_attr(attrs, a.data.dtype));
}

Type conv3d_transpose_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const size_t rank = 3;
  ConvNdArgs a = conv_nd_args(args, attrs, rank, "NCDHW", "IODHW");
  const Shape& x = a.data.shape;
  const Shape& w = a.weight.shape;
  check_divisible_by_groups(x[1], a.groups, "input channels", "data", x);
  check_same_extent(x[1], w[0], "input channels (weight axis 0)", "data", x, "weight", w);
  int64_t out_channels = w[1] < 0 ? kAnyDim : w[1] * a.groups;
  check_weight_attrs_nd(attrs, out_channels, a.weight, rank);
  std::vector<int64_t> output_padding = spatial_attr(attrs, "output_padding", rank, 0);
  Shape out{x[0], out_channels};
  for (size_t i = 0; i < rank; ++i) {
    if (output_padding[i] >= std::max(a.strides[i], a.dilation[i]))
      throw std::move(Error("attribute 'output_padding' must be smaller than the stride or the dilation")
                          .expected(cat("values below strides=", attrs.get("strides").to_string(),
                                        " or dilation=", attrs.get("dilation").to_string()),
                                    attrs.get("output_padding").to_string()));
    out.push_back(transposed_extent(axis_name(rank, i), x, x[i + 2], w[i + 2], a.strides[i], a.dilation[i],
                                    a.padding[i], a.padding[i + rank], output_padding[i]));
  }
  return tensor_type(out, out_dtype_attr(attrs, a.data.dtype));
}

OpDef& add_conv3d_attrs(OpDef& def, const char* kernel_layout) {
  return def.attr("strides", AttrKind::kInts, std::vector<int64_t>{1, 1, 1})
      .attr("padding", AttrKind::kInts, std::vector<int64_t>{0, 0, 0})
      .attr("dilation", AttrKind::kInts, std::vector<int64_t>{1, 1, 1})
      .attr("groups", AttrKind::kInt, 1)
      .attr("channels", AttrKind::kInt, AttrValue())
      .attr("kernel_size", AttrKind::kInts, AttrValue())
      .attr("data_layout", AttrKind::kString, "NCDHW")
      .attr("kernel_layout", AttrKind::kString, kernel_layout)
      .attr("out_layout", AttrKind::kString, "")
      .attr("out_dtype", AttrKind::kString, "");
}

OpDef& add_conv_attrs(OpDef& def, const char* kernel_layout) {
  return def.attr("strides", AttrKind::kInts, std::vector<int64_t>{1, 1})
      .attr("padding", AttrKind::kInts, std::vector<int64_t>{0, 0})
      .attr("dilation", AttrKind::kInts, std::vector<int64_t>{1, 1})
      .attr("groups", AttrKind::kInt, 1)
      .attr("channels", AttrKind::kInt, AttrValue())
      .attr("kernel_size", AttrKind::kInts, AttrValue())
      .attr("data_layout", AttrKind::kString, "NCHW")
      .attr("kernel_layout", AttrKind::kString, kernel_layout)
      .attr("out_layout", AttrKind::kString, "")
      .attr("out_dtype", AttrKind::kString, "");
}

}  // namespace

void register_nn_conv_ops(OpRegistry& registry) {
  add_conv_attrs(registry.add("nn.conv2d")
                     .describe("2-D convolution of NCHW data with OIHW weights (grouped, strided, dilated, padded).")
                     .arg("data")
                     .arg("weight"),
                 "OIHW")
      .set_relation(conv2d_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);

  add_conv_attrs(registry.add("nn.conv2d_transpose")
                     .describe("2-D transposed convolution of NCHW data with IOHW weights "
                               "(in_channels, out_channels / groups, kh, kw).")
                     .arg("data")
                     .arg("weight"),
                 "IOHW")
      .attr("output_padding", AttrKind::kInts, std::vector<int64_t>{0, 0})
      .set_relation(conv2d_transpose_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);

  add_conv3d_attrs(
      registry.add("nn.conv3d")
          .describe("3-D convolution of NCDHW data with OIDHW weights (grouped, strided, dilated, padded).")
          .arg("data")
          .arg("weight"),
      "OIDHW")
      .set_relation(conv3d_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);

  add_conv3d_attrs(registry.add("nn.conv3d_transpose")
                       .describe("3-D transposed convolution of NCDHW data with IODHW weights "
                                 "(in_channels, out_channels / groups, kd, kh, kw).")
                       .arg("data")
                       .arg("weight"),
                   "IODHW")
      .attr("output_padding", AttrKind::kInts, std::vector<int64_t>{0, 0, 0})
      .set_relation(conv3d_transpose_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);
}

}  // namespace kiln
