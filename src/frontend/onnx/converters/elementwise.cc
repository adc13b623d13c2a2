// Converters: elementwise arithmetic, comparisons, logic, activations, Clip, Cast, Where,
// Identity, Dropout.
#include <onnx/onnx_pb.h>

#include <limits>

#include "frontend/onnx/converters/converter_util.h"
#include "kiln/attrs/nn.h"
#include "kiln/attrs/tensor.h"
#include "kiln/attrs/transform.h"
#include "kiln/attrs/unary.h"

namespace kiln::frontend {

namespace {

Expr scalar_like(ConvertContext& c, const Expr& x, double value) {
  return scalar_constant(c.tensor_type_of(x, "input").dtype, value);
}

// Opsets 1-6 broadcast B only when broadcast=1, aligning it with A at `axis` (default:
// the trailing axes, which is numpy broadcasting).
ConvertFn legacy_broadcast_op(std::string op) {
  return [op = std::move(op)](ConvertContext& c) -> ConvertResult {
    Expr a = c.input(0), b = c.input(1);
    if (c.attrs().get_int("broadcast", 0) != 0 && c.attrs().has("axis")) {
      int64_t rank_a = c.input_rank(0), rank_b = c.input_rank(1);
      int64_t axis = normalize_onnx_axis(c.attrs().get_int("axis"), rank_a);
      int64_t trailing = rank_a - axis - rank_b;
      if (trailing > 0) b = call_op("expand_dims", {b}, ExpandDimsAttrs{.axis = rank_b, .num_newaxis = trailing});
    }
    return call_op(op, {a, b});
  };
}

// Binary ops: numpy broadcasting from opset 7 on, the legacy rule before.
void add_binary(ConverterRegistry& r, const std::string& onnx_op, const std::string& op, bool has_legacy_form = true) {
  if (has_legacy_form) r.add(onnx_op, 1, legacy_broadcast_op(op));
  r.add(onnx_op, has_legacy_form ? 7 : 1, binary_op(op));
}

// Pow from opset 12 accepts an exponent of another numeric type than the base.
ConvertResult convert_pow(ConvertContext& c) {
  Expr base = c.input(0), exponent = c.input(1);
  DType base_dtype = c.input_dtype(0);
  if (c.input_dtype(1) != base_dtype)
    exponent = call_op("cast", {exponent}, CastAttrs{.dtype = std::string(dtype_name(base_dtype))});
  return call_op("power", {base, exponent});
}

// Sum, Max, Min, Mean take any number of inputs.
ConvertFn variadic(std::string op) {
  return [op = std::move(op)](ConvertContext& c) -> ConvertResult {
    std::vector<Expr> operands;
    for (size_t i = 0; i < c.num_inputs(); ++i) operands.push_back(c.input(i));
    return fold_binary(op, operands);
  };
}

ConvertResult convert_mean(ConvertContext& c) {
  Expr sum = variadic("add")(c).outputs[0];
  return call_op("divide", {sum, scalar_like(c, c.input(0), static_cast<double>(c.num_inputs()))});
}

// Clips on one side with maximum/minimum, on both with clip.
Expr clip_between(ConvertContext& c, const Expr& x, std::optional<double> low, std::optional<double> high) {
  if (low && high) return call_op("clip", {x}, ClipAttrs{.a_min = *low, .a_max = *high});
  if (low) return call_op("maximum", {x, scalar_like(c, x, *low)});
  if (high) return call_op("minimum", {x, scalar_like(c, x, *high)});
  return x;
}

// Opsets 1-10: bounds are attributes.
ConvertResult convert_clip_v1(ConvertContext& c) {
  std::optional<double> low, high;
  if (c.attrs().has("min")) low = c.attrs().get_float("min");
  if (c.attrs().has("max")) high = c.attrs().get_float("max");
  return clip_between(c, c.input(0), low, high);
}

// Opset 11 on: bounds are optional scalar inputs, constant or computed.
ConvertResult convert_clip_v11(ConvertContext& c) {
  Expr x = c.input(0);
  std::optional<double> bound[2];
  Expr computed[2];
  for (size_t i = 0; i < 2; ++i) {
    if (!c.has_input(i + 1)) continue;
    if (auto value = c.constant_input(i + 1)) {
      check(value->numel() == 1, "Clip bound (input ", i + 1, ") must be a scalar, found shape ",
            shape_str(value->shape()));
      bound[i] = value->at(0);
    } else {
      computed[i] = c.input(i + 1);
    }
  }
  Expr out = clip_between(c, x, bound[0], bound[1]);
  if (computed[0]) out = call_op("maximum", {out, computed[0]});
  if (computed[1]) out = call_op("minimum", {out, computed[1]});
  return out;
}

Expr cast_to(const Expr& x, DType from, DType to) {
  if (from == to) return x;
  CastAttrs attrs;
  attrs.dtype = std::string(dtype_name(to));
  return call_op("cast", {x}, attrs);
}

// kiln has no float8 (opset 19) nor 4-bit (opset 21) dtypes, the only targets that 'saturate'
// (opset 19) changes; for every other target it has no effect and is accepted.
void reject_narrow_float_target(int onnx_type) {
  const char* name = onnx_type == 17   ? "FLOAT8E4M3FN"
                     : onnx_type == 18 ? "FLOAT8E4M3FNUZ"
                     : onnx_type == 19 ? "FLOAT8E5M2"
                     : onnx_type == 20 ? "FLOAT8E5M2FNUZ"
                     : onnx_type == 21 ? "UINT4"
                     : onnx_type == 22 ? "INT4"
                     : onnx_type == 23 ? "FLOAT4E2M1"
                                       : nullptr;
  if (name)
    throw std::move(Error(cat("Cast to ", name, " is not supported: kiln has no float8 or 4-bit dtypes"))
                        .expected("a target dtype kiln has (float16/32/64, bfloat16, integers, bool)", name));
}

ConvertResult convert_cast(ConvertContext& c) {
  const OnnxAttr* to = c.attrs().find("to");
  check(to != nullptr, "required attribute 'to' is missing");
  int onnx_type = static_cast<int>(to->i);
  // Opset 1 names the type as a string ("FLOAT").
  if (to->kind == OnnxAttr::Kind::kString) {
    onnx::TensorProto_DataType parsed = onnx::TensorProto::UNDEFINED;
    check(onnx::TensorProto_DataType_Parse(to->s, &parsed), "attribute 'to' names unknown type '", to->s, "'");
    onnx_type = parsed;
  }
  reject_narrow_float_target(onnx_type);
  DType target = parse_dtype(dtype_name_of_onnx_type(onnx_type, "attribute 'to'"));
  return cast_to(c.input(0), c.input_dtype(0), target);
}

ConvertResult convert_cast_like(ConvertContext& c) { return cast_to(c.input(0), c.input_dtype(0), c.input_dtype(1)); }

ConvertResult convert_identity(ConvertContext& c) { return c.input(0); }

// Inference dropout is the identity; its optional mask output is all true.
ConvertResult convert_dropout(ConvertContext& c) {
  if (c.opset() >= 12 && c.has_input(2)) {
    std::optional<NDArray> training = c.constant_input(2);
    check(training.has_value(), "Dropout's training_mode (input 2) must be known at import time");
    check(training->numel() == 1 && training->at(0) == 0, "Dropout in training mode is not supported");
  }
  // Both outputs built at once: a push_back here trips GCC 12's -Warray-bounds (a false positive).
  if (c.num_outputs() <= 1) return std::vector<Expr>{c.input(0)};
  const TensorTypeNode& t = c.input_type(0);
  check(t.is_static(), "Dropout's mask output needs a static input shape, found ", shape_str(t.shape));
  return std::vector<Expr>{c.input(0), call_op("ones", {}, ConstantFillAttrs{.shape = t.shape, .dtype = "bool"})};
}

// PRelu's slope broadcasts to X. A per-channel slope (C at axis 1, ones elsewhere) is
// nn.prelu; any other shape is where(x < 0, x * slope, x).
ConvertResult convert_prelu(ConvertContext& c) {
  Expr x = c.input(0), slope = c.input(1);
  const Shape& xs = c.input_shape(0);
  Shape ss = c.input_shape(1);
  // Before opset 7 a 1-D slope is per channel; later it broadcasts numpy-style.
  if (c.opset() < 7 && ss.size() == 1 && xs.size() >= 2) ss.resize(xs.size() - 1, 1);
  while (ss.size() < xs.size()) ss.insert(ss.begin(), 1);
  bool per_channel = xs.size() >= 2 && ss.size() == xs.size() && xs[1] != kAnyDim && ss[1] == xs[1];
  for (size_t d = 0; per_channel && d < ss.size(); ++d) per_channel = d == 1 || ss[d] == 1;
  if (per_channel)
    return call_op("nn.prelu", {x, call_op("reshape", {slope}, ReshapeAttrs{.newshape = {xs[1]}})},
                   PReluAttrs{.axis = 1});
  Expr negative = call_op("less", {x, scalar_like(c, x, 0)});
  return call_op("where", {negative, call_op("multiply", {x, slope}), x});
}

// where(x < 0, alpha * (exp(x) - 1), x)
ConvertResult convert_elu(ConvertContext& c) {
  Expr x = c.input(0);
  double alpha = c.attrs().get_float("alpha", 1.0);
  Expr expm1 = call_op("subtract", {call_op("exp", {x}), scalar_like(c, x, 1)});
  return call_op(
      "where", {call_op("less", {x, scalar_like(c, x, 0)}), call_op("multiply", {scalar_like(c, x, alpha), expm1}), x});
}

// gamma * where(x <= 0, alpha * exp(x) - alpha, x)
ConvertResult convert_selu(ConvertContext& c) {
  Expr x = c.input(0);
  double alpha = c.attrs().get_float("alpha", 1.67326319217681884765625);
  double gamma = c.attrs().get_float("gamma", 1.05070102214813232421875);
  Expr neg = call_op("subtract",
                     {call_op("multiply", {scalar_like(c, x, alpha), call_op("exp", {x})}), scalar_like(c, x, alpha)});
  Expr inner = call_op("where", {call_op("less_equal", {x, scalar_like(c, x, 0)}), neg, x});
  return call_op("multiply", {scalar_like(c, x, gamma), inner});
}

// max(0, min(1, alpha * x + beta))
Expr hard_sigmoid(ConvertContext& c, const Expr& x, double alpha, double beta) {
  Expr linear = call_op("add", {call_op("multiply", {x, scalar_like(c, x, alpha)}), scalar_like(c, x, beta)});
  return call_op("clip", {linear}, ClipAttrs{.a_min = 0.0, .a_max = 1.0});
}

ConvertResult convert_hard_sigmoid(ConvertContext& c) {
  return hard_sigmoid(c, c.input(0), c.attrs().get_float("alpha", 0.2), c.attrs().get_float("beta", 0.5));
}

ConvertResult convert_hard_swish(ConvertContext& c) {
  return call_op("multiply", {c.input(0), hard_sigmoid(c, c.input(0), 1.0 / 6, 0.5)});
}

// log(exp(x) + 1)
Expr softplus(ConvertContext& c, const Expr& x) {
  return call_op("log", {call_op("add", {call_op("exp", {x}), scalar_like(c, x, 1)})});
}

ConvertResult convert_softplus(ConvertContext& c) { return softplus(c, c.input(0)); }

ConvertResult convert_softsign(ConvertContext& c) {
  Expr x = c.input(0);
  return call_op("divide", {x, call_op("add", {scalar_like(c, x, 1), call_op("abs", {x})})});
}

ConvertResult convert_thresholded_relu(ConvertContext& c) {
  Expr x = c.input(0);
  double alpha = c.attrs().get_float("alpha", 1.0);
  return call_op("where", {call_op("greater", {x, scalar_like(c, x, alpha)}), x, scalar_like(c, x, 0)});
}

ConvertResult convert_reciprocal(ConvertContext& c) {
  return call_op("divide", {scalar_like(c, c.input(0), 1), c.input(0)});
}

// And/Or through where, which accepts bools.
ConvertResult convert_and(ConvertContext& c) {
  return call_op("where", {c.input(0), c.input(1), scalar_constant(DType::kBool, 0)});
}
ConvertResult convert_or(ConvertContext& c) {
  return call_op("where", {c.input(0), scalar_constant(DType::kBool, 1), c.input(1)});
}

ConvertResult convert_is_inf(ConvertContext& c) {
  Expr x = c.input(0);
  bool positive = c.attrs().get_int("detect_positive", 1) != 0, negative = c.attrs().get_int("detect_negative", 1) != 0;
  Expr is_pos = call_op("equal", {x, scalar_like(c, x, std::numeric_limits<double>::infinity())});
  Expr is_neg = call_op("equal", {x, scalar_like(c, x, -std::numeric_limits<double>::infinity())});
  if (positive && negative) return call_op("where", {is_pos, scalar_constant(DType::kBool, 1), is_neg});
  if (positive) return is_pos;
  if (negative) return is_neg;
  return call_op("not_equal", {is_pos, is_pos});  // detects nothing: all false
}

// x + bias below -lambd, x - bias above lambd, 0 between.
ConvertResult convert_shrink(ConvertContext& c) {
  Expr x = c.input(0);
  double lambd = c.attrs().get_float("lambd", 0.5), bias = c.attrs().get_float("bias", 0.0);
  Expr above = call_op("where", {call_op("greater", {x, scalar_like(c, x, lambd)}),
                                 call_op("subtract", {x, scalar_like(c, x, bias)}), scalar_like(c, x, 0)});
  return call_op(
      "where", {call_op("less", {x, scalar_like(c, x, -lambd)}), call_op("add", {x, scalar_like(c, x, bias)}), above});
}

ConvertResult convert_where(ConvertContext& c) { return call_op("where", {c.input(0), c.input(1), c.input(2)}); }

}  // namespace

void register_elementwise_converters(ConverterRegistry& r) {
  add_binary(r, "Add", "add");
  add_binary(r, "Sub", "subtract");
  add_binary(r, "Mul", "multiply");
  add_binary(r, "Div", "divide");
  add_binary(r, "Equal", "equal");
  add_binary(r, "Less", "less");
  add_binary(r, "Greater", "greater");
  add_binary(r, "Xor", "not_equal");
  r.add("LessOrEqual", 12, binary_op("less_equal"));
  r.add("GreaterOrEqual", 12, binary_op("greater_equal"));
  r.add("Pow", 1, legacy_broadcast_op("power")).add("Pow", 7, convert_pow);
  r.add("Not", 1, unary_op("logical_not"));
  r.add("And", 1, convert_and);
  r.add("Or", 1, convert_or);

  r.add("Sum", 1, variadic("add"));
  r.add("Max", 1, variadic("maximum"));
  r.add("Min", 1, variadic("minimum"));
  r.add("Mean", 1, convert_mean);

  // Opset 1 forms only add the legacy consumed_inputs attribute, which means nothing here.
  for (const auto& [onnx_op, op] : std::vector<std::pair<std::string, std::string>>{{"Relu", "nn.relu"},
                                                                                    {"Sigmoid", "sigmoid"},
                                                                                    {"Tanh", "tanh"},
                                                                                    {"Exp", "exp"},
                                                                                    {"Log", "log"},
                                                                                    {"Sqrt", "sqrt"},
                                                                                    {"Abs", "abs"},
                                                                                    {"Neg", "negative"},
                                                                                    {"Erf", "erf"}})
    r.add(onnx_op, 1, unary_op(op));
  r.add("Reciprocal", 1, convert_reciprocal);
  r.add("Sign", 9, unary_op("sign"));
  r.add("LeakyRelu", 1, AttrConverter("nn.leaky_relu").rename("alpha", "alpha", 0.01).ignore("consumed_inputs"));
  r.add("PRelu", 1, convert_prelu);
  r.add("Elu", 1, convert_elu);
  r.add("Selu", 1, convert_selu);
  r.add("HardSigmoid", 1, convert_hard_sigmoid);
  r.add("HardSwish", 14, convert_hard_swish);
  r.add("Softplus", 1, convert_softplus);
  r.add("Softsign", 1, convert_softsign);
  r.add("ThresholdedRelu", 10, convert_thresholded_relu);

  r.add("Clip", 1, convert_clip_v1).add("Clip", 11, convert_clip_v11);
  r.add("Cast", 1, convert_cast).add("Cast", 19, convert_cast).add("Cast", 21, convert_cast);
  r.add("CastLike", 15, convert_cast_like)
      .add("CastLike", 19, convert_cast_like)
      .add("CastLike", 21, convert_cast_like);
  r.add("IsNaN", 9, unary_op("isnan"));
  r.add("IsInf", 10, convert_is_inf);
  r.add("Shrink", 9, convert_shrink);
  r.add("Where", 9, convert_where);
  r.add("Identity", 1, convert_identity);
  r.add("Dropout", 1, convert_dropout);
}

}  // namespace kiln::frontend
