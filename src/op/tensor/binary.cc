// Ops: add, subtract, multiply, divide, power, maximum, minimum, mod, floor_mod (result has
// the operands' dtype), left_shift, right_shift (integer dtypes) and the comparisons equal, not_equal, less,
// less_equal, greater, greater_equal (result bool). Operands must have the same dtype and broadcast numpy-style.
//
// Integer divide truncates toward zero, as C and ONNX's Div do; integer add/subtract/
// multiply/power wrap around on overflow. See src/runtime/kernels/tensor/binary.cc.
#include <functional>

#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {
namespace {

enum class Result : uint8_t { kSameDType, kBool };

// The shifts take integers only; DTypeClass has no such class, so they check here.
void require_integer(const std::string& arg_name, DType t) {
  if (!is_int(t))
    throw std::move(Error(cat("argument '", arg_name, "' has an unsupported dtype"))
                        .expected("an integer dtype", std::string(dtype_name(t))));
}

Type binary_relation(const std::vector<Type>& args, DTypeClass accepted, Result result, bool integers_only = false) {
  const TensorTypeNode& lhs = arg_tensor(args, 0, "lhs");
  const TensorTypeNode& rhs = arg_tensor(args, 1, "rhs");
  require_same_dtype("lhs", lhs.dtype, "rhs", rhs.dtype);
  require_dtype("lhs", lhs.dtype, accepted);
  if (integers_only) require_integer("lhs", lhs.dtype);
  Shape shape = broadcast_args("lhs", lhs.shape, "rhs", rhs.shape);
  return tensor_type(std::move(shape), result == Result::kBool ? DType::kBool : lhs.dtype);
}

void add_binary_op(OpRegistry& registry, const std::string& name, const std::string& doc, DTypeClass accepted,
                   Result result, bool integers_only = false) {
  registry.add(name)
      .describe(doc)
      .arg("lhs")
      .arg("rhs")
      .set_relation(named_relation(name,
                                   [accepted, result, integers_only](const std::vector<Type>& args, const Attrs&) {
                                     return binary_relation(args, accepted, result, integers_only);
                                   }))
      .set_pattern(OpPattern::kBroadcast);
}

// out[i] = combine(lhs[i'], rhs[i'']) with numpy broadcasting.
void add_binary_compute(OpRegistry& registry, const std::string& name,
                        std::function<tir::PrimExpr(tir::PrimExpr, tir::PrimExpr)> combine, ComputeLimit limit = {}) {
  set_compute(
      registry.get_mutable(name),
      [combine](const ComputeInput& call) {
        const TensorTypeNode& out = expect_tensor(call.out_type, "result");
        const te::Tensor a = call.args[0], b = call.args[1];
        return std::vector<te::Tensor>{te::compute(out.shape, call.name, [&](const te::Indices& i) {
          return combine(broadcast_read(a, i), broadcast_read(b, i));
        })};
      },
      std::move(limit));
}

// NaN in lhs wins; otherwise the comparison picks (NaN in rhs makes it pick rhs), as the
// reference kernels' Maximum/Minimum do.
tir::PrimExpr nan_aware_pick(tir::PrimExpr a, tir::PrimExpr b, bool is_max) {
  if (!is_float(a.dtype())) return is_max ? tir::max(a, b) : tir::min(a, b);
  const tir::PrimExpr pick = tir::select(is_max ? tir::gt(a, b) : tir::lt(a, b), a, b);
  return tir::select(tir::ne(a, a), a, pick);
}

// fmod's remainder moved to the sign of the divisor (Python's %), as the reference kernel.
tir::PrimExpr floor_mod(tir::PrimExpr a, tir::PrimExpr b) {
  const tir::PrimExpr r = tir::call("fmod", {a, b}), zero = tir::make_const(a.dtype(), 0);
  const tir::PrimExpr signs_differ = tir::ne(tir::lt(r, zero), tir::lt(b, zero));
  return tir::select(tir::logical_and(tir::ne(r, zero), signs_differ), r + b, r);
}

// The C operators compute these exactly as the reference kernels do (generated code is
// built with -fwrapv, so integers wrap). Integer divide and power stay on the reference
// kernels, which report division by zero.
void add_binary_computes(OpRegistry& registry) {
  add_binary_compute(registry, "add", tir::add);
  add_binary_compute(registry, "subtract", tir::sub);
  add_binary_compute(registry, "multiply", tir::mul);
  add_binary_compute(registry, "divide", tir::div, only_float_data);
  add_binary_compute(
      registry, "power",
      [](tir::PrimExpr a, tir::PrimExpr b) {
        return tir::call("pow", {a, b});
      },
      only_float_data);
  add_binary_compute(
      registry, "mod",
      [](tir::PrimExpr a, tir::PrimExpr b) {
        return tir::call("fmod", {a, b});
      },
      only_float_data);
  add_binary_compute(registry, "floor_mod", floor_mod, only_float_data);
  add_binary_compute(registry, "maximum", [](tir::PrimExpr a, tir::PrimExpr b) { return nan_aware_pick(a, b, true); });
  add_binary_compute(registry, "minimum", [](tir::PrimExpr a, tir::PrimExpr b) { return nan_aware_pick(a, b, false); });
  add_binary_compute(registry, "equal", tir::eq);
  add_binary_compute(registry, "not_equal", tir::ne);
  add_binary_compute(registry, "less", tir::lt);
  add_binary_compute(registry, "less_equal", tir::le);
  add_binary_compute(registry, "greater", tir::gt);
  add_binary_compute(registry, "greater_equal", tir::ge);
}

}  // namespace

void register_tensor_binary_ops(OpRegistry& registry) {
  const DTypeClass numeric = DTypeClass::kNumeric;
  const Result same = Result::kSameDType;
  add_binary_op(registry, "add", "lhs + rhs, broadcasting; integers wrap on overflow.", numeric, same);
  add_binary_op(registry, "subtract", "lhs - rhs, broadcasting; integers wrap on overflow.", numeric, same);
  add_binary_op(registry, "multiply", "lhs * rhs, broadcasting; integers wrap on overflow.", numeric, same);
  add_binary_op(registry, "divide", "lhs / rhs, broadcasting; integer division truncates toward zero (as ONNX Div).",
                numeric, same);
  add_binary_op(registry, "power", "lhs ** rhs, broadcasting.", numeric, same);
  add_binary_op(registry, "maximum", "Elementwise maximum, broadcasting; NaN propagates.", numeric, same);
  add_binary_op(registry, "minimum", "Elementwise minimum, broadcasting; NaN propagates.", numeric, same);
  add_binary_op(registry, "mod",
                "Remainder of truncating division (C fmod): the result has the sign of lhs. Integer "
                "division by zero is an error.",
                numeric, same);
  add_binary_op(registry, "floor_mod",
                "Remainder of flooring division (Python %): the result has the sign of rhs. Integer "
                "division by zero is an error.",
                numeric, same);
  add_binary_op(registry, "left_shift",
                "lhs << rhs for integers; bits shifted past the width are lost (a shift by the width or "
                "more gives 0). A negative shift is an error.",
                numeric, same, true);
  add_binary_op(registry, "right_shift",
                "lhs >> rhs for integers, arithmetic for signed types (a shift by the width or more "
                "gives 0, or -1 for negative lhs). A negative shift is an error.",
                numeric, same, true);

  const DTypeClass any = DTypeClass::kAny;
  const Result boolean = Result::kBool;
  add_binary_op(registry, "equal", "lhs == rhs, broadcasting; bool result.", any, boolean);
  add_binary_op(registry, "not_equal", "lhs != rhs, broadcasting; bool result.", any, boolean);
  add_binary_op(registry, "less", "lhs < rhs, broadcasting; bool result.", any, boolean);
  add_binary_op(registry, "less_equal", "lhs <= rhs, broadcasting; bool result.", any, boolean);
  add_binary_op(registry, "greater", "lhs > rhs, broadcasting; bool result.", any, boolean);
  add_binary_op(registry, "greater_equal", "lhs >= rhs, broadcasting; bool result.", any, boolean);
  add_binary_computes(registry);
}

}  // namespace kiln
