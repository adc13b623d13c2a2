// Converters: shape and layout ops (Reshape, Transpose, Concat, Split, Squeeze, Unsqueeze,
// Slice, Gather, Expand, Pad), tensor makers (Shape, Size, Constant, ConstantOfShape,
// Range) and reductions (Reduce*, ArgMax, ArgMin).
//
// Inputs that ONNX passes as tensors but kiln's ops take as attributes (shapes, axes, slice
// bounds, pads, repeats) become those attributes when known at import time (with static input
// shapes Shape is a Constant and shape arithmetic folds as it is converted); otherwise the
// node becomes the dyn.* op (kiln/attrs/dyn.h) that takes them as run-time tensors.
#include "kiln/attrs/tensor.h"

#include <cmath>

#include "frontend/onnx/converters/converter_util.h"
#include "kiln/attrs/dyn.h"
#include "kiln/attrs/indexing.h"
#include "kiln/attrs/pad.h"
#include "kiln/attrs/reduce.h"
#include "kiln/attrs/transform.h"

namespace kiln::frontend {

namespace {

// ---- Shape and layout ----

// ONNX's 0 (copy the input extent unless allowzero) and -1 (inferred) mean the same in
// kiln's reshape; Relay's other special values must not leak in.
Expr reshape(const Expr& x, const std::vector<int64_t>& shape, bool allowzero) {
  for (int64_t d : shape)
    if (d < -1)
      throw std::move(Error("Reshape's shape holds an invalid extent").expected("extents >= -1", shape_str(shape)));
  return call_op("reshape", {x}, ReshapeAttrs{.newshape = shape, .allowzero = int64_t{allowzero}});
}

ConvertResult convert_reshape_v1(ConvertContext& c) { return reshape(c.input(0), c.attrs().get_ints("shape"), false); }

// True when input i is absent or known now, so the static op can take it as an attribute.
bool known_now(ConvertContext& c, size_t i) { return !c.has_input(i) || c.constant_input(i).has_value(); }

ConvertResult convert_reshape_v5(ConvertContext& c) {
  int64_t allowzero = c.attrs().get_int("allowzero", 0) != 0;
  if (!known_now(c, 1))
    return call_op("dyn.reshape", {c.input(0), c.input(1)}, DynReshapeAttrs{.allowzero = allowzero});
  return reshape(c.input(0), c.require_ints_input(1, "shape"), allowzero != 0);
}

ConvertResult convert_concat(ConvertContext& c) {
  std::vector<Expr> parts;
  for (size_t i = 0; i < c.num_inputs(); ++i) parts.push_back(c.input(i));
  int64_t axis = normalize_onnx_axis(c.attrs().get_int("axis", 1), c.input_rank(0));
  return call_op("concatenate", {make_tuple(parts)}, ConcatenateAttrs{.axis = axis});
}

// Split by explicit sizes, or into num_outputs parts (the last may be smaller, as opset 18 says).
ConvertResult split(ConvertContext& c, std::optional<std::vector<int64_t>> sizes) {
  Expr x = c.input(0);
  size_t parts = c.num_outputs();
  if (parts == 1 && !sizes) return x;
  const Shape& shape = c.input_shape(0);
  int64_t axis = normalize_onnx_axis(c.attrs().get_int("axis", 0), static_cast<int64_t>(shape.size()));
  int64_t extent = shape[axis];
  if (!sizes) {
    if (extent == kAnyDim)
      return call_op("split", {x}, SplitAttrs{.indices_or_sections = static_cast<int64_t>(parts), .axis = axis});
    int64_t each = (extent + static_cast<int64_t>(parts) - 1) / static_cast<int64_t>(parts);
    sizes = std::vector<int64_t>(parts, each);
    sizes->back() = extent - each * static_cast<int64_t>(parts - 1);
    if (sizes->back() < 0)
      throw std::move(
          Error(cat("axis ", axis, " of ", shape_str(shape), " cannot be split into ", parts, " parts of ", each,
                    " elements and a smaller last one"))
              .expected(cat("at least ", each * static_cast<int64_t>(parts - 1), " elements"), cat(extent)));
  }
  check(sizes->size() == parts, "split lists ", sizes->size(), " sizes for ", parts, " outputs");
  std::vector<int64_t> indices;
  int64_t at = 0;
  for (size_t i = 0; i + 1 < sizes->size(); ++i) indices.push_back(at += (*sizes)[i]);
  int64_t total = at + sizes->back();
  if (extent != kAnyDim && total != extent)
    throw std::move(Error(cat("split sizes do not add up to axis ", axis, " of ", shape_str(shape)))
                        .expected(cat(extent), cat(total)));
  Expr out = call_op("split", {x}, SplitAttrs{.indices_or_sections = AttrValue(indices), .axis = axis});
  return parts == 1 ? make_tuple_get_item(out, 0) : out;
}

// Split's sizes as a run-time tensor: dyn.split, a part per size.
ConvertResult dynamic_split(ConvertContext& c) {
  const int64_t axis = normalize_onnx_axis(c.attrs().get_int("axis", 0), c.input_rank(0));
  Expr out = call_op("dyn.split", {c.input(0), c.input(1)}, DynSplitAttrs{.axis = axis});
  return c.num_outputs() == 1 ? make_tuple_get_item(out, 0) : out;
}

ConvertResult convert_split_v1(ConvertContext& c) {
  if (c.has_input(1) && !known_now(c, 1)) return dynamic_split(c);
  if (c.has_input(1)) return split(c, c.require_ints_input(1, "split"));
  if (c.attrs().has("split")) return split(c, c.attrs().get_ints("split"));
  return split(c, std::nullopt);
}

ConvertResult convert_split_v2(ConvertContext& c) {
  return split(c, c.attrs().has("split") ? std::optional(c.attrs().get_ints("split")) : std::nullopt);
}

// Before opset 18 a split without sizes must be even.
ConvertResult convert_split_v13(ConvertContext& c) {
  if (c.has_input(1) && !known_now(c, 1)) return dynamic_split(c);
  if (c.has_input(1)) return split(c, c.require_ints_input(1, "split"));
  const int64_t axis = normalize_onnx_axis(c.attrs().get_int("axis", 0), c.input_rank(0));
  const int64_t extent = c.input_shape(0)[static_cast<size_t>(axis)];
  const auto parts = static_cast<int64_t>(c.num_outputs());
  if (extent != kAnyDim && extent % parts != 0)
    throw std::move(Error(cat("Split into ", parts, " equal parts needs axis ", axis, " of ",
                              shape_str(c.input_shape(0)), " to divide evenly (uneven parts need opset 18)"))
                        .expected(cat("a multiple of ", parts), cat(extent)));
  return split(c, std::nullopt);
}

// Opset 18: without sizes, num_outputs (required then) gives the number of parts; each but the
// last has ceil(extent / num_outputs) elements.
ConvertResult convert_split_v18(ConvertContext& c) {
  const bool has_sizes = c.has_input(1);
  if (c.attrs().has("num_outputs")) {
    check(!has_sizes, "Split takes either the split input or the num_outputs attribute, not both");
    const int64_t n = c.attrs().get_int("num_outputs");
    if (n != static_cast<int64_t>(c.num_outputs()))
      throw std::move(
          Error("Split's num_outputs differs from its number of outputs").expected(cat(c.num_outputs()), cat(n)));
  } else {
    check(has_sizes, "Split at opset 18 needs the split input or the num_outputs attribute");
    if (!known_now(c, 1)) return dynamic_split(c);
  }
  return split(c, has_sizes ? std::optional(c.require_ints_input(1, "split")) : std::nullopt);
}

// Axes given as an attribute (early opsets) or as an optional input (later ones).
std::optional<std::vector<int64_t>> axes_of(ConvertContext& c, bool from_input, const std::string& name = "axes") {
  if (from_input) return c.has_input(1) ? std::optional(c.require_ints_input(1, name)) : std::nullopt;
  return c.attrs().has(name) ? std::optional(c.attrs().get_ints(name)) : std::nullopt;
}

ConvertFn squeeze(bool axes_from_input) {
  return [axes_from_input](ConvertContext& c) -> ConvertResult {
    if (axes_from_input && !known_now(c, 1)) return call_op("dyn.squeeze", {c.input(0), c.input(1)});
    SqueezeAttrs attrs;
    if (auto axes = axes_of(c, axes_from_input)) attrs.axis = normalize_onnx_axes(*axes, c.input_rank(0));
    return call_op("squeeze", {c.input(0)}, attrs);
  };
}

// Axes refer to the output; inserting them in ascending order puts each where it belongs.
ConvertFn unsqueeze(bool axes_from_input) {
  return [axes_from_input](ConvertContext& c) -> ConvertResult {
    if (axes_from_input && !known_now(c, 1)) return call_op("dyn.expand_dims", {c.input(0), c.input(1)});
    auto axes = axes_of(c, axes_from_input);
    check(axes.has_value(), "Unsqueeze needs axes");
    int64_t out_rank = c.input_rank(0) + static_cast<int64_t>(axes->size());
    std::vector<int64_t> sorted = normalize_onnx_axes(*axes, out_rank);
    std::sort(sorted.begin(), sorted.end());
    check(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "Unsqueeze axes repeat an axis");
    Expr x = c.input(0);
    for (size_t i = 0; i < sorted.size();) {
      size_t run = 1;
      while (i + run < sorted.size() && sorted[i + run] == sorted[i] + static_cast<int64_t>(run)) ++run;
      x = call_op("expand_dims", {x}, ExpandDimsAttrs{.axis = sorted[i], .num_newaxis = static_cast<int64_t>(run)});
      i += run;
    }
    return x;
  };
}

Expr strided_slice(const Expr& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                   const std::optional<std::vector<int64_t>>& axes, const std::optional<std::vector<int64_t>>& steps) {
  check(starts.size() == ends.size(), "Slice has ", starts.size(), " starts but ", ends.size(), " ends");
  StridedSliceAttrs attrs;
  attrs.begin = starts;
  attrs.end = ends;
  attrs.axes = axes;
  if (steps)
    for (int64_t s : *steps) check(s != 0, "Slice steps must not be 0");
  attrs.strides = steps;
  return call_op("strided_slice", {x}, attrs);
}

ConvertResult convert_slice_v1(ConvertContext& c) {
  return strided_slice(c.input(0), c.attrs().get_ints("starts"), c.attrs().get_ints("ends"), axes_of(c, false),
                       std::nullopt);
}

// Slice with bounds known at run time: axes default to the leading ones, steps to 1.
ConvertResult dyn_strided_slice(ConvertContext& c) {
  int64_t n = c.tensor_type_of(c.input(1), "starts").ndim() == 1 ? c.tensor_type_of(c.input(1), "starts").shape[0] : -1;
  check(n != kAnyDim, "Slice's starts must be a list of static length, found ", type_str(c.type_of(c.input(1))));
  auto list = [&](size_t i, auto value_at) {
    if (c.has_input(i)) return c.input(i);
    std::vector<int64_t> values;
    for (int64_t k = 0; k < n; ++k) values.push_back(value_at(k));
    return make_constant(NDArray::from_vector<int64_t>({n}, values));
  };
  Expr axes = list(3, [](int64_t k) { return k; });
  Expr steps = list(4, [](int64_t) { return int64_t{1}; });
  return call_op("dyn.strided_slice", {c.input(0), c.input(1), c.input(2), axes, steps});
}

ConvertResult convert_slice_v10(ConvertContext& c) {
  if (!known_now(c, 1) || !known_now(c, 2) || !known_now(c, 3) || !known_now(c, 4)) return dyn_strided_slice(c);
  std::optional<std::vector<int64_t>> axes, steps;
  if (c.has_input(3)) axes = c.require_ints_input(3, "axes");
  if (c.has_input(4)) steps = c.require_ints_input(4, "steps");
  return strided_slice(c.input(0), c.require_ints_input(1, "starts"), c.require_ints_input(2, "ends"), axes, steps);
}

// Negative indices count from the end, which take's wrap mode gives.
ConvertResult convert_gather(ConvertContext& c) {
  TakeAttrs attrs;
  attrs.axis = c.attrs().get_int("axis", 0);
  attrs.mode = "wrap";
  return call_op("take", {c.input(0), c.input(1)}, attrs);
}

// Broadcasting x against a shape: where(all-true of that shape, x, x) broadcasts any dtype.
ConvertResult convert_expand(ConvertContext& c) {
  if (!known_now(c, 1)) return call_op("dyn.broadcast_to", {c.input(0), c.input(1)});
  std::vector<int64_t> shape = c.require_ints_input(1, "shape");
  Expr mask = call_op("ones", {}, ConstantFillAttrs{.shape = shape, .dtype = "bool"});
  return call_op("where", {mask, c.input(0), c.input(0)});
}

// numpy.tile with repeats known now: r copies concatenated along each axis.
ConvertResult convert_tile(ConvertContext& c) {
  if (!known_now(c, 1)) return call_op("dyn.tile", {c.input(0), c.input(1)});
  std::vector<int64_t> repeats = c.require_ints_input(1, "repeats");
  check(static_cast<int64_t>(repeats.size()) == c.input_rank(0), "Tile needs one repeat per axis of ",
        shape_str(c.input_shape(0)), ", found ", repeats.size());
  Expr x = c.input(0);
  for (size_t axis = 0; axis < repeats.size(); ++axis) {
    check(repeats[axis] >= 0, "Tile repeats must not be negative, found ", repeats[axis]);
    if (repeats[axis] == 1) continue;
    check(repeats[axis] > 0, "Tile with a zero repeat is not supported");
    x = call_op("concatenate", {make_tuple(std::vector<Expr>(static_cast<size_t>(repeats[axis]), x))},
                ConcatenateAttrs{.axis = static_cast<int64_t>(axis)});
  }
  return x;
}

// Keeps the upper (or lower) triangle of the last two axes: where(mask, x, 0), with the
// mask computed now from the static matrix extents and k.
ConvertResult convert_trilu(ConvertContext& c) {
  const Shape shape = c.input_shape(0);
  check(shape.size() >= 2 && shape[shape.size() - 2] != kAnyDim && shape.back() != kAnyDim,
        "Trilu needs static matrix extents (the last two axes), found ", shape_str(shape));
  if (!known_now(c, 1))
    return call_op("dyn.trilu", {c.input(0), c.input(1)}, DynTriluAttrs{.upper = c.attrs().get_int("upper", 1) != 0});
  int64_t k = 0;
  if (c.has_input(1)) {
    NDArray k_value = c.require_constant_input(1, "k");
    check(k_value.numel() == 1, "Trilu's k must be a scalar, found shape ", shape_str(k_value.shape()));
    k = k_value.int_at(0);
  }
  bool upper = c.attrs().get_int("upper", 1) != 0;
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  NDArray mask = NDArray::empty({rows, cols}, DType::kBool);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) mask.data<bool>()[i * cols + j] = upper ? j - i >= k : j - i <= k;
  return call_op("where", {make_constant(mask), c.input(0), scalar_constant(c.input_dtype(0), 0)});
}

// DepthToSpace and SpaceToDepth are a reshape, a transpose and a reshape of NCHW data.
Expr regroup(const Expr& x, const Shape& split, const std::vector<int64_t>& perm, const Shape& merged) {
  Expr y = call_op("reshape", {x}, ReshapeAttrs{.newshape = split});
  y = call_op("transpose", {y}, TransposeAttrs{.axes = perm});
  return call_op("reshape", {y}, ReshapeAttrs{.newshape = merged});
}

const Shape& static_nchw(ConvertContext& c) {
  const TensorTypeNode& t = c.input_type(0);
  check(t.ndim() == 4 && t.is_static(), c.op_type(), " needs a static (N, C, H, W) input, found ", shape_str(t.shape));
  return t.shape;
}

ConvertResult convert_depth_to_space(ConvertContext& c) {
  const Shape& s = static_nchw(c);
  int64_t b = c.attrs().get_int("blocksize");
  check(b > 0 && s[1] % (b * b) == 0, "DepthToSpace blocksize ", b, " must divide the channels of ", shape_str(s));
  int64_t n = s[0], ch = s[1] / (b * b), h = s[2], w = s[3];
  Shape merged{n, ch, h * b, w * b};
  if (c.attrs().get_string("mode", "DCR") == "DCR")
    return regroup(c.input(0), {n, b, b, ch, h, w}, {0, 3, 4, 1, 5, 2}, merged);
  return regroup(c.input(0), {n, ch, b, b, h, w}, {0, 1, 4, 2, 5, 3}, merged);
}

ConvertResult convert_space_to_depth(ConvertContext& c) {
  const Shape& s = static_nchw(c);
  int64_t b = c.attrs().get_int("blocksize");
  check(b > 0 && s[2] % b == 0 && s[3] % b == 0, "SpaceToDepth blocksize ", b, " must divide the height and width of ",
        shape_str(s));
  int64_t n = s[0], ch = s[1], h = s[2] / b, w = s[3] / b;
  return regroup(c.input(0), {n, ch, h, b, w, b}, {0, 3, 5, 1, 2, 4}, {n, ch * b * b, h, w});
}

// The modes of Pad: wrap from opset 19.
void check_pad_mode(ConvertContext& c, const std::string& mode) {
  if (mode == "constant" || mode == "reflect" || mode == "edge") return;
  if (mode == "wrap" && c.opset() >= 19) return;
  throw std::move(Error(cat("Pad mode '", mode, "' is not supported at opset ", c.opset()))
                      .expected(c.opset() >= 19 ? "constant, reflect, edge or wrap" : "constant, reflect or edge",
                                "'" + mode + "'"));
}

// pads [b0, b1, ..., e0, e1, ...] over `axes` (all axes by default) -> nn.pad's pairs.
Expr pad(ConvertContext& c, const std::vector<int64_t>& pads, const std::string& mode, Expr value,
         std::optional<std::vector<int64_t>> axes) {
  int64_t rank = c.input_rank(0);
  if (!axes) {
    axes.emplace();
    for (int64_t a = 0; a < rank; ++a) axes->push_back(a);
  }
  size_t k = axes->size();
  check(pads.size() == 2 * k, "pads must have 2 values per padded axis: ", 2 * k, ", found ", pads.size());
  std::vector<std::pair<int64_t, int64_t>> pairs(static_cast<size_t>(rank), {0, 0});
  for (size_t i = 0; i < k; ++i) pairs[normalize_onnx_axis((*axes)[i], rank)] = {pads[i], pads[i + k]};
  check_pad_mode(c, mode);
  if (!value) value = scalar_constant(c.input_dtype(0), 0);
  PadAttrs attrs;
  attrs.pad_width = PadAttrs::width_of(pairs);
  attrs.pad_mode = mode;
  return call_op("nn.pad", {c.input(0), value}, attrs);
}

ConvertResult convert_pad_v1(ConvertContext& c) {
  std::vector<int64_t> pads = c.attrs().get_ints(c.opset() < 2 ? "paddings" : "pads");
  Expr value = scalar_constant(c.input_dtype(0), c.attrs().get_float("value", 0.0));
  return pad(c, pads, c.attrs().get_string("mode", "constant"), value, std::nullopt);
}

// Opset 11: pads and constant_value are inputs; 18 adds the axes input, 19 the wrap mode.
ConvertResult convert_pad_v11(ConvertContext& c) {
  Expr value;
  if (c.has_input(2)) value = call_op("reshape", {c.input(2)}, ReshapeAttrs{.newshape = {}});
  std::optional<std::vector<int64_t>> axes;
  if (c.has_input(3)) axes = c.require_ints_input(3, "axes");
  std::string mode = c.attrs().get_string("mode", "constant");
  if (!known_now(c, 1)) {
    check_pad_mode(c, mode);
    if (!value) value = scalar_constant(c.input_dtype(0), 0);
    DynPadAttrs attrs;
    attrs.pad_mode = mode;
    attrs.axes = axes;
    return call_op("dyn.pad", {c.input(0), c.input(1), value}, attrs);
  }
  return pad(c, c.require_ints_input(1, "pads"), mode, value, axes);
}

// ---- Tensor makers ----

NDArray shape_tensor(const Shape& dims) {
  return NDArray::from_vector<int64_t>({static_cast<int64_t>(dims.size())}, std::vector<int64_t>(dims));
}

// A Constant when the input's shape is static, so shape computations fold; otherwise
// dyn.shape_of (and dyn.size), which DynamicToStatic turns into that constant once the model
// is specialised to static input shapes.
ConvertResult convert_shape(ConvertContext& c) {
  const TensorTypeNode& data = c.input_type(0);
  int64_t rank = data.ndim();
  int64_t start = c.attrs().get_int("start", 0), end = c.attrs().get_int("end", rank);
  start = std::clamp(start < 0 ? start + rank : start, int64_t{0}, rank);
  end = std::clamp(end < 0 ? end + rank : end, int64_t{0}, rank);
  end = std::max(start, end);
  if (data.is_static()) return make_constant(shape_tensor(Shape(data.shape.begin() + start, data.shape.begin() + end)));
  Expr shape = call_op("dyn.shape_of", {c.input(0)});
  if (start == 0 && end == rank) return shape;
  return strided_slice(shape, {start}, {end}, std::vector<int64_t>{0}, std::nullopt);
}

ConvertResult convert_size(ConvertContext& c) {
  const TensorTypeNode& data = c.input_type(0);
  if (!data.is_static()) return call_op("dyn.size", {c.input(0)});
  return make_constant(NDArray::scalar(DType::kInt64, static_cast<double>(num_elements(data.shape))));
}

NDArray scalar_list(DType dtype, const std::vector<double>& values, bool scalar) {
  Shape shape = scalar ? Shape{} : Shape{static_cast<int64_t>(values.size())};
  return NDArray::from_doubles(shape, dtype, values);
}

ConvertResult convert_constant(ConvertContext& c) {
  const OnnxAttrs& a = c.attrs();
  check(a.all().size() == 1, "Constant needs exactly one value attribute, found ", a.all().size());
  if (a.has("value")) return make_constant(a.get_tensor("value"));
  if (a.has("value_float")) return make_constant(scalar_list(DType::kFloat32, {a.get_float("value_float")}, true));
  if (a.has("value_floats")) return make_constant(scalar_list(DType::kFloat32, a.get_floats("value_floats"), false));
  if (a.has("value_int")) return make_constant(NDArray::from_vector<int64_t>({}, {a.get_int("value_int")}));
  if (a.has("value_ints")) {
    std::vector<int64_t> v = a.get_ints("value_ints");
    return make_constant(NDArray::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v));
  }
  throw Error(cat("Constant with attribute '", a.all().begin()->first, "' is not supported"));
}

ConvertResult convert_constant_of_shape(ConvertContext& c) {
  NDArray value = c.attrs().has("value") ? c.attrs().get_tensor("value") : NDArray::scalar(DType::kFloat32, 0);
  check(value.numel() == 1, "ConstantOfShape's value must hold one element, found shape ", shape_str(value.shape()));
  if (!known_now(c, 0)) return call_op("dyn.full", {make_constant(value.reshaped({})), c.input(0)}, DynFullAttrs{});
  std::vector<int64_t> shape = c.require_ints_input(0, "shape");
  return call_op("full", {make_constant(value.reshaped({}))}, FullAttrs{.shape = shape});
}

// Range with inputs known now is a constant (kiln has no arange op yet).
ConvertResult convert_range(ConvertContext& c) {
  if (!known_now(c, 0) || !known_now(c, 1) || !known_now(c, 2)) {
    std::vector<Expr> scalars;
    for (size_t i = 0; i < 3; ++i)
      scalars.push_back(c.input_rank(i) == 0 ? c.input(i)
                                             : call_op("reshape", {c.input(i)}, ReshapeAttrs{.newshape = {}}));
    return call_op("dyn.arange", scalars);
  }
  NDArray start = c.require_constant_input(0, "start"), limit = c.require_constant_input(1, "limit"),
          delta = c.require_constant_input(2, "delta");
  check(start.numel() == 1 && limit.numel() == 1 && delta.numel() == 1, "Range's inputs must be scalars");
  check(delta.at(0) != 0, "Range's delta must not be 0");
  double count = std::ceil((limit.at(0) - start.at(0)) / delta.at(0));
  int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  check(n <= (int64_t{1} << 31), "Range of ", n, " elements is too large");
  NDArray out = NDArray::empty({n}, start.dtype());
  for (int64_t i = 0; i < n; ++i) {
    if (is_int(start.dtype()))
      store_from_int(out.raw(), out.dtype(), static_cast<size_t>(i), start.int_at(0) + i * delta.int_at(0));
    else
      out.set(i, start.at(0) + static_cast<double>(i) * delta.at(0));
  }
  return make_constant(out);
}

// ---- Reductions ----

struct ReduceSpec {
  std::optional<std::vector<int64_t>> axes;  // nullopt: every axis
  bool keepdims = true;
  bool identity = false;  // noop_with_empty_axes and no axes
};

ReduceSpec reduce_spec(ConvertContext& c, bool axes_from_input) {
  ReduceSpec spec;
  spec.axes = axes_of(c, axes_from_input);
  if (spec.axes && spec.axes->empty()) spec.axes.reset();
  spec.keepdims = c.attrs().get_int("keepdims", 1) != 0;
  spec.identity = !spec.axes && c.attrs().get_int("noop_with_empty_axes", 0) != 0;
  return spec;
}

Expr reduce(const std::string& op, const Expr& x, const ReduceSpec& spec, bool keepdims) {
  ReduceAttrs attrs;
  attrs.axis = spec.axes;
  attrs.keepdims = keepdims;
  return call_op(op, {x}, attrs);
}

// A reduction with optional steps before (on each element) and after (on the result).
ConvertFn reduction(std::string op, bool axes_from_input, std::function<Expr(const Expr&)> before = nullptr,
                    std::function<Expr(const Expr&)> after = nullptr) {
  return [=](ConvertContext& c) -> ConvertResult {
    Expr x = before ? before(c.input(0)) : c.input(0);
    if (axes_from_input && !known_now(c, 1)) {
      DynReduceAttrs attrs;
      attrs.reducer = op;
      attrs.keepdims = c.attrs().get_int("keepdims", 1) != 0;
      attrs.noop_with_empty_axes = c.attrs().get_int("noop_with_empty_axes", 0) != 0;
      Expr out = call_op("dyn.reduce", {x, c.input(1)}, attrs);
      return after ? after(out) : out;
    }
    ReduceSpec spec = reduce_spec(c, axes_from_input);
    // noop_with_empty_axes skips only the reduction: ReduceL1 still gives |x|, ReduceLogSum log(x).
    Expr out = spec.identity ? x : reduce(op, x, spec, spec.keepdims);
    return after ? after(out) : out;
  };
}

// Reduction families whose axes moved from an attribute to an input at `input_since`.
void add_reduction(ConverterRegistry& r, const std::string& onnx_op, const std::string& op, int input_since,
                   std::function<Expr(const Expr&)> before = nullptr,
                   std::function<Expr(const Expr&)> after = nullptr) {
  r.add(onnx_op, 1, reduction(op, false, before, after));
  r.add(onnx_op, input_since, reduction(op, true, before, after));
}

Expr square(const Expr& x) { return call_op("multiply", {x, x}); }

// log(sum(exp(x))) computed as max + log(sum(exp(x - max))) so large inputs do not overflow.
ConvertFn log_sum_exp(bool axes_from_input) {
  return [axes_from_input](ConvertContext& c) -> ConvertResult {
    ReduceSpec spec = reduce_spec(c, axes_from_input);
    if (spec.identity) return c.input(0);
    Expr x = c.input(0);
    Expr peak = reduce("max", x, spec, true);
    Expr sum = reduce("sum", call_op("exp", {call_op("subtract", {x, peak})}), spec, spec.keepdims);
    Expr peak_out = spec.keepdims ? peak : reduce("max", x, spec, false);
    return call_op("add", {call_op("log", {sum}), peak_out});
  };
}

// ArgMax/ArgMin: one axis (default 0), keepdims by default, select_last_index from opset 12.
ConvertFn arg_reduce(std::string op) {
  return [op = std::move(op)](ConvertContext& c) -> ConvertResult {
    ArgReduceAttrs attrs;
    attrs.axis = std::vector<int64_t>{c.attrs().get_int("axis", 0)};
    attrs.keepdims = c.attrs().get_int("keepdims", 1) != 0;
    attrs.select_last_index = c.attrs().get_int("select_last_index", 0) != 0;
    return call_op(op, {c.input(0)}, attrs);
  };
}

}  // namespace

void register_tensor_converters(ConverterRegistry& r) {
  r.add("Reshape", 1, convert_reshape_v1).add("Reshape", 5, convert_reshape_v5);
  r.add("Transpose", 1, AttrConverter("transpose").rename("perm", "axes"));
  r.add("Concat", 1, convert_concat);
  r.add("Split", 1, convert_split_v1).add("Split", 2, convert_split_v2).add("Split", 13, convert_split_v13);
  r.add("Split", 18, convert_split_v18);
  r.add("Squeeze", 1, squeeze(false)).add("Squeeze", 13, squeeze(true));
  r.add("Unsqueeze", 1, unsqueeze(false)).add("Unsqueeze", 13, unsqueeze(true));
  r.add("Slice", 1, convert_slice_v1).add("Slice", 10, convert_slice_v10);
  r.add("Gather", 1, convert_gather);
  r.add("Expand", 8, convert_expand);
  r.add("Pad", 1, convert_pad_v1).add("Pad", 11, convert_pad_v11).add("Pad", 18, convert_pad_v11);
  r.add("Pad", 19, convert_pad_v11);
  r.add("Tile", 6, convert_tile);
  r.add("Trilu", 14, convert_trilu);
  r.add("DepthToSpace", 1, convert_depth_to_space);
  r.add("SpaceToDepth", 1, convert_space_to_depth);

  r.add("Shape", 1, convert_shape);
  r.add("Size", 1, convert_size);
  r.add("Constant", 1, convert_constant);
  r.add("ConstantOfShape", 9, convert_constant_of_shape);
  r.add("Range", 11, convert_range);

  add_reduction(r, "ReduceSum", "sum", 13);
  add_reduction(r, "ReduceMean", "mean", 18);
  add_reduction(r, "ReduceMax", "max", 18);
  add_reduction(r, "ReduceMin", "min", 18);
  add_reduction(r, "ReduceProd", "prod", 18);
  add_reduction(r, "ReduceSumSquare", "sum", 18, square);
  add_reduction(r, "ReduceL1", "sum", 18, [](const Expr& x) { return call_op("abs", {x}); });
  add_reduction(r, "ReduceL2", "sum", 18, square, [](const Expr& x) { return call_op("sqrt", {x}); });
  add_reduction(r, "ReduceLogSum", "sum", 18, nullptr, [](const Expr& x) { return call_op("log", {x}); });
  r.add("ReduceLogSumExp", 1, log_sum_exp(false)).add("ReduceLogSumExp", 18, log_sum_exp(true));
  r.add("ArgMax", 1, arg_reduce("argmax"));
  r.add("ArgMin", 1, arg_reduce("argmin"));
}

}  // namespace kiln::frontend
