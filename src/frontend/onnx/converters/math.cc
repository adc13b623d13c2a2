// Converters: trigonometric and hyperbolic functions, Floor, Ceil, Round, Celu, Mod,
// BitShift, CumSum, Hardmax, TopK, Einsum, Det.
#include <string>
#include <tuple>
#include <vector>

#include "frontend/onnx/converters/converter_util.h"
#include "kiln/attrs/dyn.h"
#include "kiln/attrs/reduce.h"
#include "kiln/attrs/tensor.h"
#include "kiln/attrs/transform.h"

namespace kiln::frontend {

namespace {

Expr scalar_like(ConvertContext& c, const Expr& x, double value) {
  return scalar_constant(c.tensor_type_of(x, "input").dtype, value);
}

// max(x, 0) + min(0, alpha * (exp(x / alpha) - 1)), as the ONNX function body says.
ConvertResult convert_celu(ConvertContext& c) {
  Expr x = c.input(0);
  const double alpha = c.attrs().get_float("alpha", 1.0);
  check(alpha != 0, "Celu's alpha must not be 0");
  Expr expm1 =
      call_op("subtract", {call_op("exp", {call_op("divide", {x, scalar_like(c, x, alpha)})}), scalar_like(c, x, 1)});
  Expr negative_part =
      call_op("minimum", {call_op("multiply", {scalar_like(c, x, alpha), expm1}), scalar_like(c, x, 0)});
  return call_op("add", {call_op("maximum", {x, scalar_like(c, x, 0)}), negative_part});
}

// fmod=1: the remainder takes the dividend's sign (C fmod); fmod=0: the divisor's (Python
// %), which ONNX defines for integers and numpy for floats alike.
ConvertResult convert_mod(ConvertContext& c) {
  const int64_t fmod = c.attrs().get_int("fmod", 0);
  check(fmod == 0 || fmod == 1, "Mod's fmod must be 0 or 1, found ", fmod);
  return call_op(fmod ? "mod" : "floor_mod", {c.input(0), c.input(1)});
}

ConvertResult convert_bit_shift(ConvertContext& c) {
  const std::string& direction = c.attrs().get_string("direction");
  if (direction != "LEFT" && direction != "RIGHT")
    throw std::move(Error("BitShift's direction is neither \"LEFT\" nor \"RIGHT\"")
                        .expected("\"LEFT\" or \"RIGHT\"", cat('"', direction, '"')));
  return call_op(direction == "LEFT" ? "left_shift" : "right_shift", {c.input(0), c.input(1)});
}

// The axis is an input (a scalar or one-element tensor), as an attribute when known now.
ConvertResult convert_cumsum(ConvertContext& c) {
  if (!c.constant_input(1))
    return call_op("dyn.cumsum", {c.input(0), c.input(1)},
                   DynCumsumAttrs{.exclusive = c.attrs().get_int("exclusive", 0) != 0,
                                  .reverse = c.attrs().get_int("reverse", 0) != 0});
  std::vector<int64_t> axis = c.require_ints_input(1, "axis");
  check(axis.size() == 1, "CumSum's axis must hold one value, found ", axis.size());
  CumsumAttrs attrs;
  attrs.axis = normalize_onnx_axis(axis[0], c.input_rank(0));
  attrs.exclusive = c.attrs().get_int("exclusive", 0) != 0;
  attrs.reverse = c.attrs().get_int("reverse", 0) != 0;
  return call_op("cumsum", {c.input(0)}, attrs);
}

// one_hot(argmax(x, axis)) with 1 at the first maximum, as TVM converts Hardmax.
Expr hardmax_along(ConvertContext& c, const Expr& x, int64_t axis) {
  const TensorTypeNode& t = c.tensor_type_of(x, "input");
  const int64_t depth = t.shape[static_cast<size_t>(axis)];
  check(depth != kAnyDim, "Hardmax needs a known extent of axis ", axis, ", found shape ", shape_str(t.shape));
  ArgReduceAttrs argmax;
  argmax.axis = std::vector<int64_t>{axis};
  argmax.keepdims = false;
  Expr index = call_op("argmax", {x}, argmax);
  OneHotAttrs attrs;
  attrs.depth = depth;
  attrs.axis = axis;
  attrs.dtype = dtype_name(t.dtype);
  return call_op("one_hot", {index, scalar_like(c, x, 1), scalar_like(c, x, 0)}, attrs);
}

// Opset 13: along one axis (default -1).
ConvertResult convert_hardmax_v13(ConvertContext& c) {
  return hardmax_along(c, c.input(0), normalize_onnx_axis(c.attrs().get_int("axis", -1), c.input_rank(0)));
}

// Opsets 1-12: over the input flattened to 2-D at axis (default 1), every axis from axis on.
ConvertResult convert_hardmax_v1(ConvertContext& c) {
  const Shape& shape = c.input_shape(0);
  const int64_t rank = c.input_rank(0);
  int64_t axis = c.attrs().get_int("axis", 1);
  axis = axis < 0 ? axis + rank : axis;
  check(axis >= 0 && axis <= rank, "Hardmax's axis ", c.attrs().get_int("axis", 1), " is out of range for rank ", rank);
  check(c.input_type(0).is_static(), "Hardmax before opset 13 needs a static input shape, found ", shape_str(shape));
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? rows : cols) *= shape[static_cast<size_t>(d)];
  Expr flat = call_op("reshape", {c.input(0)}, ReshapeAttrs{.newshape = {rows, cols}});
  return call_op("reshape", {hardmax_along(c, flat, 1)}, ReshapeAttrs{.newshape = shape});
}

Expr topk(ConvertContext& c, int64_t k, int64_t axis, bool largest) {
  const int64_t rank = c.input_rank(0);
  axis = normalize_onnx_axis(axis, rank);
  check(k >= 1, "TopK with k = ", k, " is not supported (k must be at least 1)");
  // `sorted` = 0 leaves the order to the implementation; sorted is one such order.
  TopKAttrs attrs;
  attrs.k = k;
  attrs.axis = axis;
  attrs.is_ascend = !largest;
  return call_op("topk", {c.input(0)}, attrs);
}

// Opset 1: k is an attribute.
ConvertResult convert_topk_v1(ConvertContext& c) {
  return topk(c, c.attrs().get_int("k"), c.attrs().get_int("axis", -1), true);
}

// Opset 10: k is a one-element input known at import time; 11 adds largest and sorted.
ConvertResult convert_topk_v10(ConvertContext& c) {
  if (!c.constant_input(1)) {
    DynTopKAttrs attrs;
    attrs.axis = normalize_onnx_axis(c.attrs().get_int("axis", -1), c.input_rank(0));
    attrs.is_ascend = c.attrs().get_int("largest", 1) == 0;
    return call_op("dyn.topk", {c.input(0), c.input(1)}, attrs);
  }
  std::vector<int64_t> k = c.require_ints_input(1, "K");
  check(k.size() == 1, "TopK's K must hold one value, found ", k.size());
  return topk(c, k[0], c.attrs().get_int("axis", -1), c.attrs().get_int("largest", 1) != 0);
}

ConvertResult convert_einsum(ConvertContext& c) {
  std::vector<Expr> operands;
  for (size_t i = 0; i < c.num_inputs(); ++i) operands.push_back(c.input(i));
  return call_op("einsum", {make_tuple(operands)}, EinsumAttrs{.equation = c.attrs().get_string("equation")});
}

}  // namespace

void register_math_converters(ConverterRegistry& r) {
  for (const auto& [onnx_op, op, since] : std::vector<std::tuple<std::string, std::string, int>>{{"Sin", "sin", 7},
                                                                                                 {"Cos", "cos", 7},
                                                                                                 {"Tan", "tan", 7},
                                                                                                 {"Asin", "asin", 7},
                                                                                                 {"Acos", "acos", 7},
                                                                                                 {"Atan", "atan", 7},
                                                                                                 {"Sinh", "sinh", 9},
                                                                                                 {"Cosh", "cosh", 9},
                                                                                                 {"Asinh", "asinh", 9},
                                                                                                 {"Acosh", "acosh", 9},
                                                                                                 {"Atanh", "atanh", 9},
                                                                                                 {"Floor", "floor", 1},
                                                                                                 {"Ceil", "ceil", 1},
                                                                                                 {"Round", "round", 11},
                                                                                                 {"Det", "det", 11}})
    r.add(onnx_op, since, unary_op(op));
  r.add("Celu", 12, convert_celu);
  r.add("Mod", 10, convert_mod);
  r.add("BitShift", 11, convert_bit_shift);
  r.add("CumSum", 11, convert_cumsum);
  r.add("Hardmax", 1, convert_hardmax_v1).add("Hardmax", 13, convert_hardmax_v13);
  r.add("TopK", 1, convert_topk_v1).add("TopK", 10, convert_topk_v10);
  r.add("Einsum", 12, convert_einsum);
}

}  // namespace kiln::frontend
