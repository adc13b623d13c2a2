// SimplifyExpr: removes or merges data-movement and arithmetic that cannot change a value,
// as Relay's SimplifyExpr does, but only where the result is bit-for-bit the same for every
// input of the types involved (Relay also rewrites x + 0, which is not exact for -0.0).
//   reshape/squeeze/expand_dims chain (static result) -> one reshape to the result's shape
//   reshape to the input's static shape, squeeze or expand_dims that keep the rank -> x
//   transpose(transpose(x, p1), p2) -> transpose(x, p1[p2[i]]); identity permutation -> x
//   x * 1, 1 * x, x / 1 -> x; x - 0 -> x; x + 0, 0 + x -> x for integers, and for floats
//     only when the zero is -0.0 (x + +0.0 turns -0.0 into +0.0, x - +0.0 never changes x)
//     — each only when the constant (or ones/zeros call) leaves x's type unchanged
//   cast(x, dtype of x) -> x; cast(cast(x, m), t) -> cast(x, t) when m holds every value
//     of x's dtype and converting to t treats those values as converting from x's dtype does
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "kiln/attrs/transform.h"
#include "kiln/attrs/unary.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"

namespace kiln {

namespace {

const TensorTypeNode* tensor_of(const Expr& e) { return as_tensor(e->checked_type()); }

bool is_reshape_like(const std::string& op) { return op == "reshape" || op == "squeeze" || op == "expand_dims"; }

// Significand bits (with the implicit one) of a float dtype; every integer of at most this
// many bits of magnitude is exact in it.
int precision_bits(DType t) {
  switch (t) {
    case DType::kFloat16: return 11;
    case DType::kBFloat16: return 8;
    case DType::kFloat32: return 24;
    default: return 53;
  }
}

// Whether every value of `from` is exactly a value of `to`.
bool holds_every_value(DType to, DType from) {
  if (to == from || from == DType::kBool) return true;
  if (to == DType::kBool) return false;
  if (is_float(from)) {
    if (!is_float(to)) return false;
    if (to == DType::kFloat64) return true;
    return to == DType::kFloat32 && (from == DType::kFloat16 || from == DType::kBFloat16);
  }
  int from_bits = static_cast<int>(dtype_bytes(from)) * 8;
  int to_bits = static_cast<int>(dtype_bytes(to)) * 8;
  int magnitude_bits = is_signed_int(from) ? from_bits - 1 : from_bits;
  if (is_float(to)) return magnitude_bits <= precision_bits(to);
  if (is_unsigned_int(to)) return is_unsigned_int(from) && to_bits >= from_bits;
  return to_bits > magnitude_bits;
}

// The kernels convert by category: to bool by != 0, float to integer by saturating
// truncation, integer to integer by wrapping; a value held exactly converts alike only if
// the category of the source is the same or the conversion is exact either way.
bool cast_through_is_exact(DType from, DType middle, DType to) {
  if (!holds_every_value(middle, from)) return false;
  if (from == DType::kBool || to == DType::kBool || holds_every_value(to, from)) return true;
  return is_float(middle) == is_float(from);
}

// Whether every element of the constant equals `value`; for floats `negative_zero` asks
// for the sign of zero too.
bool all_elements(const NDArray& data, double value, std::optional<bool> negative_zero = std::nullopt) {
  for (int64_t i = 0, n = data.numel(); i < n; ++i) {
    double v = data.at(i);
    if (v != value) return false;
    if (negative_zero && std::signbit(v) != *negative_zero) return false;
  }
  return true;
}

enum class Fill { kOne, kZero, kNegativeZero, kOther };

// What a constant, or a ones/zeros call, is filled with.
Fill fill_of(const Expr& e) {
  if (const auto* c = as<ConstantNode>(e)) {
    if (c->data.dtype() == DType::kBool) return Fill::kOther;
    if (all_elements(c->data, 1.0)) return Fill::kOne;
    if (!is_float(c->data.dtype())) return all_elements(c->data, 0.0) ? Fill::kZero : Fill::kOther;
    if (all_elements(c->data, 0.0, false)) return Fill::kZero;
    if (all_elements(c->data, 0.0, true)) return Fill::kNegativeZero;
    return Fill::kOther;
  }
  const auto* call = as<CallNode>(e);
  const OpDef* op = call ? call->op() : nullptr;
  const TensorTypeNode* t = tensor_of(e);
  if (!op || !t || t->dtype == DType::kBool) return Fill::kOther;
  if (op->name == "ones") return Fill::kOne;
  if (op->name == "zeros") return Fill::kZero;
  return Fill::kOther;
}

// The operand that a binary arithmetic call returns unchanged, or null.
Expr arithmetic_identity(const std::string& op, const CallNode& call) {
  if (call.args.size() != 2) return nullptr;
  const Expr &lhs = call.args[0], &rhs = call.args[1];
  const TensorTypeNode* t = tensor_of(lhs);
  bool exact_plus_zero = t && !is_float(t->dtype);  // x + +0 is x only without -0.0
  auto zero_for_add = [&](Fill f) { return f == Fill::kNegativeZero || (exact_plus_zero && f == Fill::kZero); };
  Fill left = fill_of(lhs), right = fill_of(rhs);
  if (op == "multiply") return right == Fill::kOne ? lhs : left == Fill::kOne ? rhs : nullptr;
  if (op == "divide") return right == Fill::kOne ? lhs : nullptr;
  if (op == "add") return zero_for_add(right) ? lhs : zero_for_add(left) ? rhs : nullptr;
  if (op == "subtract") return right == Fill::kZero ? lhs : nullptr;
  return nullptr;
}

// Permutation of a transpose of a rank-ndim tensor, with negative axes and None resolved.
std::vector<int64_t> permutation(const CallNode& call, int64_t ndim) {
  auto attrs = attrs_from<TransposeAttrs>(call.attrs, "transpose");
  std::vector<int64_t> perm(static_cast<size_t>(ndim));
  if (!attrs.axes) {
    std::iota(perm.rbegin(), perm.rend(), 0);
    return perm;
  }
  for (size_t i = 0; i < perm.size(); ++i) {
    int64_t a = attrs.axes->at(i);
    perm[i] = a < 0 ? a + ndim : a;
  }
  return perm;
}

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

class ExprSimplifier : public ExprRewriter {
 protected:
  Expr post(const Expr& original, const Expr& rebuilt) override {
    Expr out = simplify(original, rebuilt);
    // Every rewrite keeps the type, and later rewrites of the parents read it.
    if (!out->checked_type()) out->set_checked_type(original->checked_type());
    return out;
  }

 private:
  // `call` is a rebuilt call whose arguments are typed.
  Expr simplify(const Expr& original, const Expr& rebuilt) {
    const auto* call = as<CallNode>(rebuilt);
    const OpDef* op = call ? call->op() : nullptr;
    const TensorTypeNode* out_type = as_tensor(original->checked_type());
    if (!op || !out_type || call->args.empty()) return rebuilt;
    const std::string& name = op->name;
    const Expr& arg = call->args[0];
    const TensorTypeNode* in_type = tensor_of(arg);
    if (!in_type) return rebuilt;
    if (is_reshape_like(name)) return simplify_reshape(*call, rebuilt, *in_type, *out_type);
    if (name == "transpose") return simplify_transpose(*call, rebuilt, *in_type);
    if (name == "cast") return simplify_cast(arg, rebuilt, *in_type, *out_type);
    if (Expr kept = arithmetic_identity(name, *call);
        kept && type_equal(kept->checked_type(), original->checked_type()))
      return kept;
    return rebuilt;
  }

  Expr simplify_reshape(const CallNode& call, const Expr& rebuilt, const TensorTypeNode& in_type,
                        const TensorTypeNode& out_type) {
    const Expr& arg = call.args[0];
    const std::string& name = call.op()->name;
    // Without static shapes these are the no-op spellings; squeeze(axis=None) of a '?' dim
    // keeps the rank in its type yet removes the dim when it is 1 at run time.
    if (name == "squeeze" && attrs_from<SqueezeAttrs>(call.attrs, name).axis == std::vector<int64_t>{}) return arg;
    if (name == "expand_dims" && attrs_from<ExpandDimsAttrs>(call.attrs, name).num_newaxis == 0) return arg;
    if (in_type.is_static() && out_type.is_static() && in_type.shape == out_type.shape) return arg;
    const auto* inner = as<CallNode>(arg);
    const OpDef* inner_op = inner ? inner->op() : nullptr;
    if (!inner_op || !is_reshape_like(inner_op->name) || !out_type.is_static()) return rebuilt;
    const Expr& source = inner->args[0];
    const TensorTypeNode* source_type = tensor_of(source);
    if (!source_type || !source_type->is_static()) return rebuilt;
    if (source_type->shape == out_type.shape) return source;
    bool has_zero = std::find(out_type.shape.begin(), out_type.shape.end(), 0) != out_type.shape.end();
    return call_op("reshape", {source}, ReshapeAttrs{.newshape = out_type.shape, .allowzero = has_zero ? 1 : 0});
  }

  Expr simplify_transpose(const CallNode& call, const Expr& rebuilt, const TensorTypeNode& in_type) {
    const Expr& arg = call.args[0];
    std::vector<int64_t> perm = permutation(call, in_type.ndim());
    if (is_identity(perm)) return arg;
    const auto* inner = as<CallNode>(arg);
    if (!inner || !inner->op() || inner->op()->name != "transpose") return rebuilt;
    const TensorTypeNode* source_type = tensor_of(inner->args[0]);
    if (!source_type) return rebuilt;
    std::vector<int64_t> inner_perm = permutation(*inner, source_type->ndim());
    std::vector<int64_t> composed(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) composed[i] = inner_perm.at(static_cast<size_t>(perm[i]));
    if (is_identity(composed)) return inner->args[0];
    return call_op("transpose", {inner->args[0]}, TransposeAttrs{.axes = composed});
  }

  Expr simplify_cast(const Expr& arg, const Expr& rebuilt, const TensorTypeNode& in_type,
                     const TensorTypeNode& out_type) {
    if (in_type.dtype == out_type.dtype) return arg;
    const auto* inner = as<CallNode>(arg);
    if (!inner || !inner->op() || inner->op()->name != "cast") return rebuilt;
    const Expr& source = inner->args[0];
    const TensorTypeNode* source_type = tensor_of(source);
    if (!source_type || !cast_through_is_exact(source_type->dtype, in_type.dtype, out_type.dtype)) return rebuilt;
    if (source_type->dtype == out_type.dtype) return source;
    return call_op("cast", {source}, CastAttrs{.dtype = std::string(dtype_name(out_type.dtype))});
  }
};

}  // namespace

IRModule simplify_expr_pass(const IRModule& mod) {
  infer_types(mod);  // the rewrites are chosen by the types of the operands
  return infer_types(map_functions(mod, [](const Function& fn) { return as_function(ExprSimplifier().rewrite(fn)); }));
}

}  // namespace kiln
