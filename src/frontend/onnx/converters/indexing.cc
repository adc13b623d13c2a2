// Converters: indexing, scatter/gather and data-dependent ops (GatherElements,
// ScatterElements, Scatter, GatherND, ScatterND, OneHot, Compress, NonZero, Unique, EyeLike,
// ReverseSequence, TfIdfVectorizer).
//
// NonZero, Unique and Compress have results whose extent depends on the data: their IR types
// carry '?' there. When the deciding input is known at import time they fold to Constants
// (or to a static take), so what follows stays static.
#include "kiln/attrs/indexing.h"

#include <cmath>

#include "frontend/onnx/converters/converter_util.h"
#include "frontend/onnx/graph_eval.h"
#include "kiln/attrs/dyn.h"
#include "kiln/attrs/transform.h"
#include "kiln/attrs/unary.h"

namespace kiln::frontend {

namespace {

// The value of `e` now when everything it reads is a Constant, else `e` itself.
Expr fold_if_known(const Expr& e) {
  std::optional<NDArray> value = evaluate_at_import(e, {});
  return value ? make_constant(*value) : e;
}

// ONNX's reduction names -> the kiln ops' ("none" replaces): add and mul from opset 16, max
// and min from opset 18.
std::string reduction_of(ConvertContext& c) {
  const std::string onnx = c.attrs().get_string("reduction", "none");
  if (onnx == "none") return "update";
  if (onnx == "add" || onnx == "mul") return onnx;
  if ((onnx == "max" || onnx == "min") && c.opset() >= 18) return onnx;
  throw std::move(Error(cat(c.op_type(), "'s reduction '", onnx, "' is not supported at opset ", c.opset()))
                      .expected(c.opset() >= 18 ? "none, add, mul, max or min" : "none, add or mul", onnx));
}

// ONNX puts the M coordinates of an index last, kiln (as Relay) first.
Expr coordinates_first(ConvertContext& c, size_t input) {
  int64_t rank = c.input_rank(input);
  check(rank >= 1, c.op_type(), "'s indices must have at least one axis, found shape ",
        shape_str(c.input_shape(input)));
  if (rank == 1) return c.input(input);
  std::vector<int64_t> axes{rank - 1};
  for (int64_t a = 0; a + 1 < rank; ++a) axes.push_back(a);
  return call_op("transpose", {c.input(input)}, TransposeAttrs{.axes = axes});
}

ConvertResult convert_gather_nd(ConvertContext& c) {
  GatherNDAttrs attrs;
  attrs.batch_dims = c.attrs().get_int("batch_dims", 0);
  return call_op("gather_nd", {c.input(0), coordinates_first(c, 1)}, attrs);
}

// Opset 11: replaces; 16 adds reduction.
ConvertResult convert_scatter_nd(ConvertContext& c) {
  check(c.opset() >= 16 || !c.attrs().has("reduction"), "ScatterND has a reduction from opset 16");
  ScatterNDAttrs attrs;
  attrs.mode = reduction_of(c);
  return call_op("scatter_nd", {c.input(0), coordinates_first(c, 1), c.input(2)}, attrs);
}

// OneHot: indices of any numeric type become int64, negative ones count from the end (opset
// 11); values = [off_value, on_value]. A depth known only at run time (of any numeric type)
// makes dyn.one_hot.
ConvertResult convert_one_hot(ConvertContext& c) {
  std::optional<NDArray> depth_value = c.constant_input(1);
  Expr depth;  // an int64 scalar
  if (depth_value) {
    check(depth_value->numel() == 1, "OneHot's depth must hold one value, found shape ",
          shape_str(depth_value->shape()));
    check(depth_value->at(0) >= 1, "OneHot's depth must be positive, found ", depth_value->at(0));
    depth = scalar_constant(DType::kInt64, std::floor(depth_value->at(0)));
  } else {
    ReshapeAttrs scalar;
    scalar.newshape = {};
    depth = call_op("reshape", {c.input(1)}, scalar);
    if (c.input_dtype(1) != DType::kInt64) depth = call_op("cast", {depth}, CastAttrs{.dtype = "int64"});
  }
  check(c.input_type(2).shape == Shape{2} || c.input_type(2).shape == Shape{kAnyDim},
        "OneHot's values must be [off_value, on_value], found shape ", shape_str(c.input_shape(2)));
  Expr indices = c.input(0);
  if (c.input_dtype(0) != DType::kInt64) indices = call_op("cast", {indices}, CastAttrs{.dtype = "int64"});
  Expr negative = call_op("less", {indices, scalar_constant(DType::kInt64, 0)});
  indices = call_op("where", {negative, call_op("add", {indices, depth}), indices});
  auto value_at = [&](int64_t i) {
    return call_op("take", {c.input(2), make_constant(NDArray::scalar(DType::kInt64, static_cast<double>(i)))},
                   TakeAttrs{.axis = 0});
  };
  OneHotAxisAttrs layout;
  layout.axis = c.attrs().get_int("axis", -1);
  layout.dtype = dtype_name(c.input_dtype(2));
  if (!depth_value) return call_op("dyn.one_hot", {indices, value_at(1), value_at(0), depth}, layout);
  OneHotAttrs attrs;
  static_cast<OneHotAxisAttrs&>(attrs) = layout;
  attrs.depth = static_cast<int64_t>(depth_value->at(0));
  return call_op("one_hot", {indices, value_at(1), value_at(0)}, attrs);
}

// Compress: take the entries whose condition holds along `axis` (of the flattened data
// when absent). A condition shorter than the axis drops the entries past its end.
ConvertResult convert_compress(ConvertContext& c) {
  Expr data = c.input(0);
  int64_t axis = 0;
  if (c.attrs().has("axis")) {
    axis = normalize_onnx_axis(c.attrs().get_int("axis"), c.input_rank(0));
  } else {
    data = call_op("reshape", {data}, ReshapeAttrs{.newshape = {-1}});
  }
  const Shape& data_shape = c.tensor_type_of(data, "data").shape;
  int64_t extent = data_shape[axis];
  check(c.input_rank(1) == 1, "Compress's condition must be 1-D, found shape ", shape_str(c.input_shape(1)));
  int64_t length = c.input_shape(1)[0];
  if (std::optional<NDArray> condition = c.constant_input(1)) {
    std::vector<int64_t> kept;
    for (int64_t i = 0; i < condition->numel(); ++i)
      if (condition->at(i) != 0) kept.push_back(i);
    check(kept.empty() || extent == kAnyDim || kept.back() < extent, "Compress's condition selects entry ",
          kept.empty() ? 0 : kept.back(), " of an axis of extent ", extent);
    return call_op("take", {data, ints_constant(kept)}, TakeAttrs{.axis = axis});
  }
  check(length != kAnyDim && extent != kAnyDim, "Compress with a run-time condition needs static extents, found ",
        shape_str(c.input_shape(1)), " for data ", shape_str(data_shape));
  check(length <= extent, "Compress's condition of length ", length, " is longer than axis ", axis, " of ",
        shape_str(data_shape));
  if (length < extent) data = slice_axis(data, axis, 0, length);
  Expr positions =
      call_op("squeeze", {call_op("argwhere", {c.input(1)})}, SqueezeAttrs{.axis = std::vector<int64_t>{1}});
  return call_op("take", {data, positions}, TakeAttrs{.axis = axis});
}

// NonZero: one row of coordinates per axis, (rank, count) int64.
ConvertResult convert_non_zero(ConvertContext& c) {
  Expr coordinates = call_op("argwhere", {c.input(0)});
  return fold_if_known(call_op("transpose", {coordinates}, TransposeAttrs{.axes = std::vector<int64_t>{1, 0}}));
}

ConvertResult convert_unique(ConvertContext& c) {
  UniqueAttrs attrs{.sorted = c.attrs().get_int("sorted", 1) != 0};
  if (c.attrs().has("axis")) attrs.axis = normalize_onnx_axis(c.attrs().get_int("axis"), c.input_rank(0));
  Expr unique = call_op("unique", {c.input(0)}, attrs);
  std::vector<Expr> outputs;
  for (int i = 0; i < 4; ++i) outputs.push_back(fold_if_known(make_tuple_get_item(unique, i)));
  outputs.resize(std::max<size_t>(1, std::min<size_t>(4, c.num_outputs())));
  return outputs;
}

// EyeLike: the input's (static) shape filled with ones on diagonal k, as a Constant.
ConvertResult convert_eye_like(ConvertContext& c) {
  const TensorTypeNode& t = c.input_type(0);
  check(t.ndim() == 2 && t.is_static(), "EyeLike needs a static 2-D input, found ", shape_str(t.shape));
  DType dtype =
      c.attrs().has("dtype") ? parse_dtype(dtype_name_of_onnx_type(c.attrs().get_int("dtype"), "dtype")) : t.dtype;
  int64_t k = c.attrs().get_int("k", 0), rows = t.shape[0], cols = t.shape[1];
  NDArray eye = NDArray::empty(t.shape, dtype);
  for (int64_t i = 0; i < rows; ++i)
    if (i + k >= 0 && i + k < cols) store_from_int(eye.raw(), dtype, static_cast<size_t>(i * cols + i + k), 1);
  return make_constant(eye);
}

// Scatter (opset 9) and ScatterElements; reduction from opset 16.
ConvertResult convert_scatter_elements(ConvertContext& c) {
  check(c.opset() >= 16 || !c.attrs().has("reduction"), "ScatterElements has a reduction from opset 16");
  ScatterElementsAttrs attrs;
  attrs.axis = c.attrs().get_int("axis", 0);
  attrs.reduction = reduction_of(c);
  return call_op("scatter_elements", {c.input(0), c.input(1), c.input(2)}, attrs);
}

ConvertResult convert_gather_elements(ConvertContext& c) {
  GatherElementsAttrs attrs;
  attrs.axis = c.attrs().get_int("axis", 0);
  return call_op("gather_elements", {c.input(0), c.input(1)}, attrs);
}

}  // namespace

void register_indexing_converters(ConverterRegistry& r) {
  r.add("GatherElements", 11, convert_gather_elements);
  r.add("ScatterElements", 11, convert_scatter_elements)
      .add("ScatterElements", 16, convert_scatter_elements)
      .add("ScatterElements", 18, convert_scatter_elements);
  r.add("Scatter", 9, convert_scatter_elements);
  r.add("GatherND", 11, convert_gather_nd);
  r.add("ScatterND", 11, convert_scatter_nd)
      .add("ScatterND", 16, convert_scatter_nd)
      .add("ScatterND", 18, convert_scatter_nd);
  r.add("OneHot", 9, convert_one_hot);
  r.add("Compress", 9, convert_compress);
  r.add("NonZero", 9, convert_non_zero);
  r.add("Unique", 11, convert_unique);
  r.add("EyeLike", 9, convert_eye_like);
  r.add("ReverseSequence", 10,
        AttrConverter("reverse_sequence")
            .rename("time_axis", "seq_axis", int64_t{0})
            .rename("batch_axis", "batch_axis", int64_t{1}));
  r.add("TfIdfVectorizer", 9,
        AttrConverter("tfidf_vectorizer").forbid("pool_strings", "string tokens are not supported"));
}

}  // namespace kiln::frontend
