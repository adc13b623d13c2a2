// Ops: sigmoid, tanh, exp, log, sqrt, rsqrt, erf, the trigonometric and hyperbolic
// functions and their inverses, floor, ceil, round, trunc (float dtypes); abs, negative,
// sign, clip (every dtype but bool); isnan, isinf, isfinite (float dtypes, bool result);
// logical_not (bool); cast (any dtype to any dtype). All are elementwise and keep the
// shape of their argument; cast and the is* predicates change the dtype.
#include "kiln/attrs/unary.h"

#include <cmath>
#include <functional>
#include <limits>

#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {
namespace {

TypeRelation unary_relation(const std::string& name, DTypeClass accepted) {
  return named_relation(name, [accepted](const std::vector<Type>& args, const Attrs&) {
    const TensorTypeNode& data = arg_tensor(args, 0, "data");
    require_dtype("data", data.dtype, accepted);
    return args[0];
  });
}

void add_unary_op(OpRegistry& registry, const std::string& name, const std::string& doc, DTypeClass accepted) {
  registry.add(name)
      .describe(doc)
      .arg("data")
      .set_relation(unary_relation(name, accepted))
      .set_pattern(OpPattern::kElemwise);
}

// Predicates on float data: same shape, bool result.
TypeRelation predicate_relation(const std::string& name) {
  return named_relation(name, [](const std::vector<Type>& args, const Attrs&) {
    const TensorTypeNode& data = arg_tensor(args, 0, "data");
    require_dtype("data", data.dtype, DTypeClass::kFloat);
    return tensor_type(data.shape, DType::kBool);
  });
}

void add_predicate_op(OpRegistry& registry, const std::string& name, const std::string& doc) {
  registry.add(name).describe(doc).arg("data").set_relation(predicate_relation(name)).set_pattern(OpPattern::kElemwise);
}

Type logical_not_relation(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  if (data.dtype != DType::kBool)
    throw std::move(Error("argument 'data' must be bool").expected("bool", std::string(dtype_name(data.dtype))));
  return args[0];
}

Type cast_relation(const std::vector<Type>& args, const CastAttrs& attrs) {
  return tensor_type(arg_tensor(args, 0, "data").shape, attrs.to());
}

void add_map_compute(OpRegistry& registry, const std::string& name, ElementFn fn, ComputeLimit limit = {}) {
  set_compute(registry.get_mutable(name), elementwise_compute(std::move(fn)), std::move(limit));
}

// x rounded toward zero into the range of an integer dtype other than uint64 (as the
// reference kernels' saturating_trunc).
int64_t saturate(double x, DType dtype) {
  const IntegerRange r = integer_range(dtype);
  if (x <= r.low) return r.low_bits;
  if (x >= r.high) return r.high_bits;
  return static_cast<int64_t>(x);
}

std::string no_64_bit_unsigned(const std::vector<Type>& args, const Type& out, const Attrs&) {
  for (const Type& t : {args[0], out})
    if (expect_tensor(t, "tensor").dtype == DType::kUInt64) return "uint64 bounds do not fit its int64 constants";
  return "";
}

// A clip bound as the reference kernel has it: floats beyond the dtype's range become
// infinite, integer bounds round inward and saturate.
tir::PrimExpr clip_bound(DType dtype, double bound, bool is_lower) {
  if (is_float(dtype)) {
    const double largest =
        dtype == DType::kFloat32 ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
    if (bound > largest) bound = std::numeric_limits<double>::infinity();
    if (bound < -largest) bound = -std::numeric_limits<double>::infinity();
    return tir::make_const(dtype, bound);
  }
  return tir::int_imm(saturate(is_lower ? std::ceil(bound) : std::floor(bound), dtype), dtype);
}

tir::PrimExpr clip_element(tir::PrimExpr v, const ClipAttrs& attrs) {
  const tir::PrimExpr lo = clip_bound(v.dtype(), attrs.a_min, true);
  const tir::PrimExpr hi = clip_bound(v.dtype(), attrs.a_max, false);
  // Lower bound first, then upper: a_min > a_max gives a_max; NaN stays NaN.
  const tir::PrimExpr low_clipped = tir::select(tir::lt(v, lo), lo, v);
  return tir::select(tir::gt(low_clipped, hi), hi, low_clipped);
}

tir::PrimExpr cast_element(tir::PrimExpr v, const ComputeInput& call) {
  return saturating_cast(v, expect_tensor(call.out_type, "result").dtype);
}

tir::PrimExpr abs_element(tir::PrimExpr v, const ComputeInput&) {
  return is_unsigned_int(v.dtype()) ? v : tir::call("abs", {v});
}

void add_unary_computes(OpRegistry& registry) {
  for (const char* name : {"exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "erf", "sin", "cos", "tan", "atan",
                           "floor", "ceil", "round", "trunc"})
    // The math intrinsic of the same name: the C library (or kiln_expf, within 2 ulp) computes
    // what the reference kernels' std:: functions do.
    add_map_compute(registry, name, [name](tir::PrimExpr v, const ComputeInput&) { return tir::call(name, {v}); });
  add_map_compute(registry, "abs", abs_element);
  add_map_compute(registry, "negative", [](tir::PrimExpr v, const ComputeInput&) { return -v; });
  set_compute<ClipAttrs>(
      registry.get_mutable("clip"),
      [](const ComputeInput& call, const ClipAttrs& attrs) {
        return elementwise_compute([&attrs](tir::PrimExpr v, const ComputeInput&) { return clip_element(v, attrs); })(
            call);
      },
      no_64_bit_unsigned);
  // float16/bfloat16 casts never get here: compile_obstacle keeps those dtypes on reference kernels.
  add_map_compute(registry, "cast", cast_element, no_64_bit_unsigned);
}

}  // namespace

void register_tensor_unary_ops(OpRegistry& registry) {
  const DTypeClass fp = DTypeClass::kFloat;
  add_unary_op(registry, "sigmoid", "1 / (1 + exp(-x)).", fp);
  add_unary_op(registry, "tanh", "Hyperbolic tangent.", fp);
  add_unary_op(registry, "exp", "e ** x.", fp);
  add_unary_op(registry, "log", "Natural logarithm.", fp);
  add_unary_op(registry, "sqrt", "Square root.", fp);
  add_unary_op(registry, "rsqrt", "1 / sqrt(x).", fp);
  add_unary_op(registry, "erf", "Gauss error function.", fp);
  add_unary_op(registry, "sin", "Sine (radians).", fp);
  add_unary_op(registry, "cos", "Cosine (radians).", fp);
  add_unary_op(registry, "tan", "Tangent (radians).", fp);
  add_unary_op(registry, "asin", "Arcsine; NaN outside [-1, 1].", fp);
  add_unary_op(registry, "acos", "Arccosine; NaN outside [-1, 1].", fp);
  add_unary_op(registry, "atan", "Arctangent.", fp);
  add_unary_op(registry, "sinh", "Hyperbolic sine.", fp);
  add_unary_op(registry, "cosh", "Hyperbolic cosine.", fp);
  add_unary_op(registry, "asinh", "Inverse hyperbolic sine.", fp);
  add_unary_op(registry, "acosh", "Inverse hyperbolic cosine; NaN below 1.", fp);
  add_unary_op(registry, "atanh", "Inverse hyperbolic tangent; +-inf at +-1, NaN outside [-1, 1].", fp);
  add_unary_op(registry, "floor", "Largest integer value not above x.", fp);
  add_unary_op(registry, "ceil", "Smallest integer value not below x.", fp);
  add_unary_op(registry, "round", "Nearest integer value; halves round to even (as ONNX Round and numpy).", fp);
  add_unary_op(registry, "trunc", "Integer part of x (rounds toward zero).", fp);
  add_unary_op(registry, "sign", "-1, 0 or 1 by the sign of x; NaN stays NaN.", DTypeClass::kNumeric);
  add_predicate_op(registry, "isnan", "True where x is NaN.");
  add_predicate_op(registry, "isinf", "True where x is +inf or -inf.");
  add_predicate_op(registry, "isfinite", "True where x is neither infinite nor NaN.");
  registry.add("logical_not")
      .describe("Boolean negation of bool data.")
      .arg("data")
      .set_relation(named_relation("logical_not", logical_not_relation))
      .set_pattern(OpPattern::kElemwise);
  add_unary_op(registry, "abs", "|x|; for integers the minimum value wraps to itself.", DTypeClass::kNumeric);
  add_unary_op(registry, "negative", "-x; integers wrap.", DTypeClass::kNumeric);

  registry.add("clip")
      .describe(
          "min(max(x, a_min), a_max): when a_min > a_max every element becomes a_max (as ONNX Clip). "
          "For integer data the bounds are rounded inward to integers.")
      .arg("data")
      .attrs<ClipAttrs>()
      .set_relation(unary_relation("clip", DTypeClass::kNumeric))
      .set_pattern(OpPattern::kElemwise);

  registry.add("cast")
      .describe(
          "Converts to attribute dtype. Float to integer truncates toward zero and saturates at the "
          "integer range (NaN gives 0); integer to integer wraps; anything to bool is x != 0.")
      .arg("data")
      .attrs<CastAttrs>()
      .set_relation<CastAttrs>(cast_relation)
      .set_pattern(OpPattern::kElemwise);
  add_unary_computes(registry);
}

}  // namespace kiln
