// Ops: dyn.reshape, dyn.strided_slice, dyn.broadcast_to, dyn.tile, dyn.full, dyn.arange,
// dyn.pad, dyn.topk, dyn.expand_dims, dyn.squeeze, dyn.reduce, dyn.cumsum, dyn.trilu, dyn.split, dyn.one_hot,
// dyn.resize2d -- the static ops with their shape-like operand (shape, slice bounds, repeats, pads, k, axes, depth,
// scales, sizes) given as a tensor argument whose value is known only at run time (Relay's dyn.*; see
// kiln/attrs/dyn.h). The relations know the result's rank from the operand's static length and give '?' for every
// extent the value decides; the kernels size the result at run time. There is no compute: generated code needs static
// shapes, so build() refuses these ops and DynamicToStatic turns every call whose operands are constants back into the
// static op.
#include "kiln/attrs/dyn.h"

#include "op/nn/window_attrs.h"
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {

namespace {

// The static length of a 1-D integer (or, for resize's roi and scales, floating-point)
// operand; a scalar counts as one value.
int64_t operand_length(const std::vector<Type>& args, size_t i, const std::string& name, bool integers = true) {
  const TensorTypeNode& t = arg_tensor(args, i, name);
  if (!integers && !is_float(t.dtype))
    throw std::move(Error(cat("argument '", name, "' must hold floating-point values"))
                        .expected("a float dtype", std::string(dtype_name(t.dtype))));
  if (integers && !is_int(t.dtype))
    throw std::move(Error(cat("argument '", name, "' must hold integers"))
                        .expected("an integer dtype", std::string(dtype_name(t.dtype))));
  if (t.ndim() > 1 || (t.ndim() == 1 && t.shape[0] == kAnyDim))
    throw std::move(Error(cat("argument '", name, "' must be a list of static length"))
                        .expected("a 1-D tensor of known extent", shape_str(t.shape)));
  return t.ndim() == 0 ? 1 : t.shape[0];
}

Shape unknown_dims(int64_t rank) { return Shape(static_cast<size_t>(std::max<int64_t>(rank, 0)), kAnyDim); }

Type dyn_reshape_relation(const std::vector<Type>& args, const DynReshapeAttrs&) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  return tensor_type(unknown_dims(operand_length(args, 1, "shape")), data.dtype);
}

Type dyn_strided_slice_relation(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  int64_t n = operand_length(args, 1, "begin");
  const char* names[] = {"end", "axes", "strides"};
  for (size_t i = 2; i < 5; ++i)
    if (operand_length(args, i, names[i - 2]) != n)
      throw std::move(Error(cat("argument '", names[i - 2], "' must have one value per begin"))
                          .expected(cat(n, " values"), type_str(args[i])));
  return tensor_type(unknown_dims(data.ndim()), data.dtype);
}

// Each result dim is the data's where the data's extent is not 1 (the shape may only be 1
// or equal there); the shape's values decide the others.
Type dyn_broadcast_to_relation(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  int64_t rank = std::max(data.ndim(), operand_length(args, 1, "shape"));
  Shape out = unknown_dims(rank);
  for (int64_t i = 0; i < data.ndim(); ++i) {
    int64_t d = data.shape[static_cast<size_t>(i)];
    if (d != 1 && d != kAnyDim) out[static_cast<size_t>(rank - data.ndim() + i)] = d;
  }
  return tensor_type(out, data.dtype);
}

Type dyn_tile_relation(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  if (operand_length(args, 1, "repeats") != data.ndim())
    throw std::move(Error("argument 'repeats' must have one value per data axis")
                        .expected(cat(data.ndim(), " values"), type_str(args[1])));
  Shape out = unknown_dims(data.ndim());
  for (size_t d = 0; d < out.size(); ++d)
    if (data.shape[d] == 0) out[d] = 0;
  return tensor_type(out, data.dtype);
}

Type dyn_full_relation(const std::vector<Type>& args, const DynFullAttrs& attrs) {
  const TensorTypeNode& fill = arg_tensor(args, 0, "fill_value");
  if (fill.ndim() != 0)
    throw std::move(Error("argument 'fill_value' must be a scalar").expected("shape ()", shape_str(fill.shape)));
  FullAttrs fixed;
  fixed.dtype = attrs.dtype;
  return tensor_type(unknown_dims(operand_length(args, 1, "shape")), fixed.result_dtype(fill.dtype));
}

Type dyn_arange_relation(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& start = arg_tensor(args, 0, "start");
  const char* names[] = {"start", "limit", "delta"};
  for (size_t i = 0; i < 3; ++i) {
    const TensorTypeNode& t = arg_tensor(args, i, names[i]);
    require_dtype(names[i], t.dtype, DTypeClass::kNumeric);
    if (t.ndim() != 0 || t.dtype != start.dtype)
      throw std::move(Error(cat("argument '", names[i], "' must be a scalar of start's dtype"))
                          .expected(cat("Tensor[(), ", std::string(dtype_name(start.dtype)), "]"), type_str(args[i])));
  }
  return tensor_type({kAnyDim}, start.dtype);
}

Type dyn_pad_relation(const std::vector<Type>& args, const DynPadAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& value = arg_tensor(args, 2, "pad_value");
  if (value.ndim() != 0 || value.dtype != data.dtype)
    throw std::move(Error("argument 'pad_value' must be a scalar of the data's dtype")
                        .expected(cat("Tensor[(), ", std::string(dtype_name(data.dtype)), "]"), type_str(args[2])));
  Shape out = data.shape;
  std::vector<int64_t> axes;
  if (attrs.axes)
    for (int64_t a : *attrs.axes) axes.push_back(normalize_axis(a, data.ndim(), "axes"));
  else
    for (int64_t a = 0; a < data.ndim(); ++a) axes.push_back(a);
  if (operand_length(args, 1, "pads") != 2 * static_cast<int64_t>(axes.size()))
    throw std::move(Error("argument 'pads' must hold a begin and an end per padded axis")
                        .expected(cat(2 * axes.size(), " values"), type_str(args[1])));
  for (int64_t a : axes) out[static_cast<size_t>(a)] = kAnyDim;
  return tensor_type(out, data.dtype);
}

Type dyn_topk_relation(const std::vector<Type>& args, const DynTopKAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  require_dtype("data", data.dtype, DTypeClass::kNumeric);
  if (operand_length(args, 1, "k") != 1)
    throw std::move(Error("argument 'k' must be one value").expected("a scalar or 1 value", type_str(args[1])));
  Shape out = data.shape;
  out[static_cast<size_t>(checked_axis(attrs.axis, "axis", data.shape))] = kAnyDim;
  TopKAttrs fixed;
  fixed.ret_type = attrs.ret_type;
  fixed.dtype = attrs.dtype;
  fixed.validate();
  Type values = tensor_type(out, data.dtype), indices = tensor_type(out, fixed.indices_dtype());
  if (!fixed.returns_indices()) return values;
  if (!fixed.returns_values()) return indices;
  return tuple_type({values, indices});
}

Type dyn_expand_dims_relation(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  return tensor_type(unknown_dims(data.ndim() + operand_length(args, 1, "axes")), data.dtype);
}

Type dyn_squeeze_relation(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  int64_t n = operand_length(args, 1, "axes");
  if (n > data.ndim())
    throw std::move(
        Error("argument 'axes' names more axes than the data has").expected(cat("at most ", data.ndim()), cat(n)));
  return tensor_type(unknown_dims(data.ndim() - n), data.dtype);
}

// No axes: the data itself (noop_with_empty_axes) or a reduction of every axis.
Type dyn_reduce_relation(const std::vector<Type>& args, const DynReduceAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  int64_t n = operand_length(args, 1, "axes");
  if (arg_tensor(args, 1, "axes").ndim() == 0)
    throw std::move(Error("argument 'axes' must be a list").expected("a 1-D tensor", type_str(args[1])));
  if (n == 0) {
    if (attrs.noop_with_empty_axes) return tensor_type(data.shape, data.dtype);
    return tensor_type(attrs.keepdims ? Shape(data.shape.size(), 1) : Shape{}, data.dtype);
  }
  if (n > data.ndim())
    throw std::move(
        Error("argument 'axes' names more axes than the data has").expected(cat("at most ", data.ndim()), cat(n)));
  return tensor_type(unknown_dims(attrs.keepdims ? data.ndim() : data.ndim() - n), data.dtype);
}

// cumsum and trilu keep the data's type; the operand is one integer.
Type dyn_same_type_relation(const std::vector<Type>& args, const std::string& operand) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  require_dtype("data", data.dtype, DTypeClass::kNumeric);
  if (operand_length(args, 1, operand) != 1)
    throw std::move(
        Error(cat("argument '", operand, "' must be one value")).expected("a scalar or 1 value", type_str(args[1])));
  return args[0];
}

Type dyn_cumsum_relation(const std::vector<Type>& args, const DynCumsumAttrs&) {
  return dyn_same_type_relation(args, "axis");
}

Type dyn_trilu_relation(const std::vector<Type>& args, const DynTriluAttrs&) {
  if (arg_tensor(args, 0, "data").ndim() < 2)
    throw std::move(Error("argument 'data' must hold matrices").expected("rank >= 2", type_str(args[0])));
  return dyn_same_type_relation(args, "k");
}

// One part per size, each with a '?' extent along the axis.
Type dyn_split_relation(const std::vector<Type>& args, const DynSplitAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const int64_t parts = operand_length(args, 1, "sizes");
  if (parts < 1) throw std::move(Error("argument 'sizes' must not be empty").expected("at least 1 value", "none"));
  Shape part = data.shape;
  part[static_cast<size_t>(checked_axis(attrs.axis, "axis", data.shape))] = kAnyDim;
  return tuple_type(std::vector<Type>(static_cast<size_t>(parts), tensor_type(part, data.dtype)));
}

Type dyn_one_hot_relation(const std::vector<Type>& args, const OneHotAxisAttrs& attrs) {
  const TensorTypeNode& indices = arg_tensor(args, 0, "indices");
  if (!is_int(indices.dtype))
    throw std::move(Error("argument 'indices' must hold integers")
                        .expected("an integer dtype", std::string(dtype_name(indices.dtype))));
  for (size_t i : {1, 2}) {
    const char* name = i == 1 ? "on_value" : "off_value";
    if (arg_tensor(args, i, name).ndim() != 0)
      throw std::move(Error(cat("argument '", name, "' must be a scalar")).expected("shape ()", type_str(args[i])));
  }
  if (operand_length(args, 3, "depth") != 1)
    throw std::move(Error("argument 'depth' must be one value").expected("a scalar or 1 value", type_str(args[3])));
  OneHotAttrs unknown_depth;
  static_cast<OneHotAxisAttrs&>(unknown_depth) = attrs;
  unknown_depth.depth = kAnyDim;
  return tensor_type(unknown_depth.result_shape(indices.shape), parse_dtype(attrs.dtype));
}

// The spatial extents are '?'; the operands' lengths are checked where they are read, as
// an absent one is an empty tensor.
Type dyn_resize2d_relation(const std::vector<Type>& args, const ResizeMethodAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", 4, attrs.layout);
  operand_length(args, 1, "roi", false);
  operand_length(args, 2, "scales", false);
  operand_length(args, 3, "sizes");
  Shape out = data.shape;
  const size_t h = attrs.layout == "NHWC" ? 1 : 2;
  out[h] = out[h + 1] = kAnyDim;
  return tensor_type(out, out_dtype_of(attrs.out_dtype, data.dtype));
}

}  // namespace

void register_dyn_ops(OpRegistry& registry) {
  registry.add("dyn.reshape")
      .describe("reshape with the shape a run-time tensor (ONNX's 0 copies, unless allowzero, and -1 infers).")
      .arg("data")
      .arg("shape")
      .attrs<DynReshapeAttrs>()
      .set_relation<DynReshapeAttrs>(dyn_reshape_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("dyn.strided_slice")
      .describe("strided_slice with begin, end, axes and strides run-time tensors (ONNX Slice).")
      .arg("data")
      .arg("begin")
      .arg("end")
      .arg("axes")
      .arg("strides")
      .set_relation(dyn_strided_slice_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("dyn.broadcast_to")
      .describe("The data broadcast with a run-time shape, each way (ONNX Expand).")
      .arg("data")
      .arg("shape")
      .set_relation(dyn_broadcast_to_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("dyn.tile")
      .describe("The data repeated repeats[d] times along each axis d, repeats a run-time tensor (numpy.tile).")
      .arg("data")
      .arg("repeats")
      .set_relation(dyn_tile_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("dyn.full")
      .describe("full with the shape a run-time tensor (ONNX ConstantOfShape).")
      .arg("fill_value")
      .arg("shape")
      .attrs<DynFullAttrs>()
      .set_relation<DynFullAttrs>(dyn_full_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("dyn.arange")
      .describe(
          "start, start + delta, ... below limit (above it for a negative delta): ONNX Range of run-time scalars.")
      .arg("start")
      .arg("limit")
      .arg("delta")
      .set_relation(dyn_arange_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("dyn.pad")
      .describe("nn.pad with the amounts a run-time tensor: all begins then all ends, over axes (ONNX Pad).")
      .arg("data")
      .arg("pads")
      .arg("pad_value")
      .attrs<DynPadAttrs>()
      .set_relation<DynPadAttrs>(dyn_pad_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("dyn.topk")
      .describe("topk with k a run-time tensor of one value (ONNX TopK).")
      .arg("data")
      .arg("k")
      .attrs<DynTopKAttrs>()
      .set_relation<DynTopKAttrs>(dyn_topk_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("dyn.expand_dims")
      .describe("Unit dims inserted at run-time axes, which index the result (ONNX Unsqueeze).")
      .arg("data")
      .arg("axes")
      .set_relation(dyn_expand_dims_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("dyn.squeeze")
      .describe("The unit dims at run-time axes removed (ONNX Squeeze).")
      .arg("data")
      .arg("axes")
      .set_relation(dyn_squeeze_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("dyn.reduce")
      .describe("The reduction 'reducer' over run-time axes (ONNX ReduceSum from opset 13).")
      .arg("data")
      .arg("axes")
      .attrs<DynReduceAttrs>()
      .set_relation<DynReduceAttrs>(dyn_reduce_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("dyn.cumsum")
      .describe("cumsum along a run-time axis (ONNX CumSum).")
      .arg("data")
      .arg("axis")
      .attrs<DynCumsumAttrs>()
      .set_relation<DynCumsumAttrs>(dyn_cumsum_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("dyn.trilu")
      .describe(
          "The upper (or lower) triangle of the last two axes from a run-time diagonal k, 0 elsewhere (ONNX Trilu).")
      .arg("data")
      .arg("k")
      .attrs<DynTriluAttrs>()
      .set_relation<DynTriluAttrs>(dyn_trilu_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("dyn.split")
      .describe("split into parts of run-time sizes along an axis (ONNX Split with the split input).")
      .arg("data")
      .arg("sizes")
      .attrs<DynSplitAttrs>()
      .set_relation<DynSplitAttrs>(dyn_split_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("dyn.one_hot")
      .describe("one_hot with the depth a run-time value (ONNX OneHot).")
      .arg("indices")
      .arg("on_value")
      .arg("off_value")
      .arg("depth")
      .attrs<OneHotAxisAttrs>()
      .set_relation<OneHotAxisAttrs>(dyn_one_hot_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("dyn.resize2d")
      .describe("image.resize2d with ONNX Resize's roi, scales and sizes run-time tensors (empty when absent).")
      .arg("data")
      .arg("roi")
      .arg("scales")
      .arg("sizes")
      .attrs<ResizeMethodAttrs>()
      .set_relation<ResizeMethodAttrs>(dyn_resize2d_relation)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
