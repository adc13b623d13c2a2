// Ops: nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d, nn.global_max_pool2d, and the
// NCDHW nn.max_pool3d, nn.avg_pool3d; nn.max_pool2d_with_argmax (also the flat input positions of
// the maxima, as ONNX MaxPool's Indices) and its inverse nn.max_unpool.
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

Type pool3d_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const size_t rank = 3;
  choice_attr(attrs, "layout", {"NCDHW"});
  choice_attr(attrs, "out_layout", {"", "NCDHW"});
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", 5, "NCDHW");
  check_numeric_arg(data, "data");
  std::vector<int64_t> pool = spatial_attr(attrs, "pool_size", rank, 1);
  std::vector<int64_t> strides = spatial_attr(attrs, "strides", rank, 1);
  std::vector<int64_t> dilation = spatial_attr(attrs, "dilation", rank, 1);
  std::vector<int64_t> pad = padding_nd_attr(attrs, rank);
  bool ceil_mode = attrs.get_bool("ceil_mode");
  const char* axis_names[] = {"depth", "height", "width"};
  Shape out{data.shape[0], data.shape[1]};
  for (size_t i = 0; i < rank; ++i)
    out.push_back(window_extent(axis_names[i], data.shape, data.shape[i + 2], pool[i], strides[i], dilation[i], pad[i],
                                pad[i + rank], ceil_mode));
  return tensor_type(out, data.dtype);
}

OpDef& add_pool3d_attrs(OpDef& def) {
  return def.arg("data")
      .attr("pool_size", AttrKind::kInts, std::vector<int64_t>{1, 1, 1})
      .attr("strides", AttrKind::kInts, std::vector<int64_t>{1, 1, 1})
      .attr("dilation", AttrKind::kInts, std::vector<int64_t>{1, 1, 1})
      .attr("padding", AttrKind::kInts, std::vector<int64_t>{0, 0, 0})
      .attr("layout", AttrKind::kString, "NCDHW")
      .attr("out_layout", AttrKind::kString, "")
      .attr("ceil_mode", AttrKind::kBool, false)
      .set_relation(pool3d_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);
}

// (pooled, int64 indices of the maxima in the flattened input).
Type max_pool2d_with_argmax_relation(const std::vector<Type>& args, const Attrs& attrs) {
  choice_attr(attrs, "layout", {"NCHW"});
  Type pooled = pool2d_relation(args, attrs);
  return tuple_type({pooled, tensor_type(as_tensor(pooled)->shape, DType::kInt64)});
}

Type max_unpool_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& indices = arg_tensor(args, 1, "indices");
  if (!is_int(indices.dtype))
    throw std::move(Error("argument 'indices' must hold integers")
                        .expected("an integer dtype", std::string(dtype_name(indices.dtype))));
  if (indices.ndim() != data.ndim())
    throw std::move(
        Error(cat("shapes of 'data' ", shape_str(data.shape), " and 'indices' ", shape_str(indices.shape), " differ"))
            .expected(shape_str(data.shape), shape_str(indices.shape)));
  for (int64_t i = 0; i < data.ndim(); ++i)
    check_same_extent(data.shape[i], indices.shape[i], cat("axis ", i), "data", data.shape, "indices", indices.shape);
  std::vector<int64_t> output_shape = attrs.get_ints("output_shape");
  if (static_cast<int64_t>(output_shape.size()) != data.ndim())
    throw std::move(
        Error(cat("attribute 'output_shape' must have one extent per axis of 'data' ", shape_str(data.shape)))
            .expected(cat(data.ndim(), " values"), shape_str(output_shape)));
  for (int64_t e : output_shape)
    if (e < 0)
      throw std::move(
          Error("attribute 'output_shape' must not be negative").expected("extents >= 0", shape_str(output_shape)));
  if (!attrs.is_none("index_shape") && attrs.get_ints("index_shape").size() != output_shape.size())
    throw std::move(Error("attribute 'index_shape' must have the rank of 'output_shape'")
                        .expected(cat(output_shape.size(), " values"), attrs.get("index_shape").to_string()));
  return tensor_type(output_shape, data.dtype);
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
  add_pool3d_attrs(registry.add("nn.max_pool3d").describe("3-D max pooling of NCDHW data; padding never wins."));
  add_pool3d_attrs(registry.add("nn.avg_pool3d")
                       .describe("3-D average pooling of NCDHW data; count_include_pad counts padding positions."))
      .attr("count_include_pad", AttrKind::kBool, false);
  add_pool_attrs(registry.add("nn.max_pool2d_with_argmax")
                     .describe("2-D max pooling of NCHW data returning (values, int64 flat input positions of the "
                               "maxima); column_major counts positions within a plane column by column."))
      .attr("column_major", AttrKind::kBool, false)
      .set_relation(max_pool2d_with_argmax_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("nn.max_unpool")
      .describe(
          "Inverse of max pooling: zeros of output_shape, with data[i] written at flat position indices[i]. "
          "With index_shape (same rank), indices are flat positions in that shape, written at the same "
          "multi-index of the output.")
      .arg("data")
      .arg("indices")
      .required_attr("output_shape", AttrKind::kInts)
      .attr("index_shape", AttrKind::kInts, AttrValue())
      .set_relation(max_unpool_relation)
      .set_pattern(OpPattern::kOpaque);
  add_global_pool_attrs(registry.add("nn.global_avg_pool2d").describe("Mean over the spatial axes, kept as 1 x 1."));
  add_global_pool_attrs(registry.add("nn.global_max_pool2d").describe("Maximum over the spatial axes, kept as 1 x 1."));
}

}  // namespace kiln
