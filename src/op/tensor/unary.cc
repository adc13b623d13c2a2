// Ops: sigmoid, tanh, exp, log, sqrt, rsqrt, erf, the trigonometric and hyperbolic
// functions and their inverses, floor, ceil, round, trunc (float dtypes); abs, negative,
// sign, clip (every dtype but bool); isnan, isinf, isfinite (float dtypes, bool result);
// logical_not (bool); cast (any dtype to any dtype). All are elementwise and keep the
// shape of their argument; cast and the is* predicates change the dtype.
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

Type cast_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const std::string& name = attrs.get_string("dtype");
  DType dtype;
  if (!try_parse_dtype(name, &dtype))
    throw std::move(
        Error("attribute 'dtype' is not a dtype").expected("a dtype such as \"int64\"", cat('"', name, '"')));
  return tensor_type(data.shape, dtype);
}

// Float math that the C library computes as the reference kernels' std:: functions do.
void add_math_compute(const std::string& name, const std::string& intrinsic) {
  StrategyRegistry::global().set_compute(name, [intrinsic](const ComputeInput& call) {
    const te::Tensor x = call.args[0];
    return std::vector<te::Tensor>{te::compute(
        x.shape(), call.name, [&](const te::Indices& i) { return tir::call(intrinsic, {x(index_exprs(i))}); })};
  });
}

}  // namespace

void register_tensor_unary_ops(OpRegistry& registry) {
  for (const char* name : {"exp", "log", "sqrt", "tanh", "erf", "sin", "cos"}) add_math_compute(name, name);
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
      .required_attr("a_min", AttrKind::kFloat)
      .required_attr("a_max", AttrKind::kFloat)
      .set_relation(unary_relation("clip", DTypeClass::kNumeric))
      .set_pattern(OpPattern::kElemwise);

  registry.add("cast")
      .describe(
          "Converts to attribute dtype. Float to integer truncates toward zero and saturates at the "
          "integer range (NaN gives 0); integer to integer wraps; anything to bool is x != 0.")
      .arg("data")
      .required_attr("dtype", AttrKind::kString)
      .set_relation(named_relation("cast", cast_relation))
      .set_pattern(OpPattern::kElemwise);
}

}  // namespace kiln
