// MoveElementwiseBeforeReshape: the elementwise ops after a reshape of a matrix product move
// before the reshape, so that FuseOps fuses them into the product's epilogue instead of a kernel
// of their own passing over the whole product again:
//   add(%bias, reshape(P, newshape=[197, 1, 2304]))     bias (2304), reshape keeps the last axis
// -> reshape(add(%bias, P), newshape=[197, 1, 2304])
//   f(reshape(A, S), ..., reshape(B, S), scalars)         A, B of one shape, f elementwise
// -> reshape(f(A, ..., B, scalars), S)                   when A and B come from a product
//   reshape(reshape(X, S), shape of X) -> X
// PackDenseWeights leaves torch's MultiheadAttention QKV projection as reshape, dense_packed,
// reshape, then the bias add, and a ConvNeXt MLP (rows of fewer than 32) as dense_packed +
// bias, reshape to (1, 28, 28, 768), GELU (divide, erf, add, two multiplies by scalars), reshape
// back into the next product; moved, GELU joins the first product's epilogue and the two
// reshapes cancel. Each op computes the same values on the same elements in the same order.
#include <algorithm>

#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"
#include "transform/expr_match.h"

namespace kiln {

namespace {

bool is_product(const Expr& e) {
  for (const char* op : {"nn.dense", "nn.dense_packed", "nn.matmul", "nn.batch_matmul"})
    if (call_of(e, op)) return true;
  return false;
}

bool is_scalar(const Expr& e) {
  const TensorTypeNode* t = tensor_of(e);
  return t && t->ndim() == 0;
}

// An elementwise op whose result does not depend on the operands' shape beyond broadcasting:
// no attributes, or attributes about values only.
bool shape_free_elementwise(const CallNode& call) {
  const OpDef* op = call.op();
  if (!op || (op->pattern != OpPattern::kElemwise && op->pattern != OpPattern::kBroadcast)) return false;
  return call.attrs.empty() || op->name == "clip" || op->name == "cast" || op->name == "nn.leaky_relu";
}

// A product, or elementwise ops over one (depth-limited: epilogues are short).
bool from_product(const Expr& e, int depth = 0) {
  if (is_product(e)) return true;
  const auto* call = as<CallNode>(e);
  if (!call || depth > 16 || !shape_free_elementwise(*call)) return false;
  for (const Expr& arg : call->args)
    if (!is_scalar(arg) && from_product(arg, depth + 1)) return true;
  return false;
}

// A reshape of a product's epilogue that keeps the (static) last axis: the reshape, or null.
// The other axes may be run-time ones (a sequence axis): the bias move needs only the last.
const CallNode* reshaped_product(const Expr& e) {
  const CallNode* reshape = call_of(e, "reshape");
  if (!reshape || !from_product(reshape->args[0])) return nullptr;
  const TensorTypeNode* in = tensor_of(reshape->args[0]);
  const TensorTypeNode* out = tensor_of(e);
  if (!in || !out || in->ndim() == 0 || out->ndim() == 0 || in->shape.back() < 0 ||
      in->shape.back() != out->shape.back())
    return nullptr;
  return reshape;
}

// A bias along the last axis only, of no higher rank than `data`: (..., 1, n) or (n).
bool last_axis_bias(const Expr& e, const TensorTypeNode& data) {
  const TensorTypeNode* t = tensor_of(e);
  if (!t || t->dtype != data.dtype || t->ndim() == 0 || t->ndim() > data.ndim() || t->shape.back() != data.shape.back())
    return false;
  return std::all_of(t->shape.begin(), t->shape.end() - 1, [](int64_t d) { return d == 1; });
}

class ElementwiseMover : public ExprRewriter {
 protected:
  // Matches on `rebuilt`, whose arguments are already moved (and typed by typed_reshape).
  Expr post(const Expr& original, const Expr& rebuilt) override {
    // Every move keeps the value's type; a call rebuilt around moved arguments takes it over.
    if (!rebuilt->checked_type()) rebuilt->set_checked_type(original->checked_type());
    const auto* call = as<CallNode>(rebuilt);
    const TensorTypeNode* out = tensor_of(original);
    if (!call || !call->op() || !out) return rebuilt;
    if (call->op()->name == "reshape") return cancel_reshapes(*call, rebuilt, *out);
    if (!shape_free_elementwise(*call)) return rebuilt;
    if (Expr moved = move_bias(*call, *out)) return moved;
    if (Expr moved = move_elementwise(*call, *out)) return moved;
    return rebuilt;
  }

 private:
  // add(bias, reshape(P)) -> reshape(add(bias, P)).
  static Expr move_bias(const CallNode& add, const TensorTypeNode& out) {
    if (add.op()->name != "add") return nullptr;
    for (size_t side = 0; side < 2; ++side) {
      const CallNode* reshape = reshaped_product(add.args[side]);
      const Expr& bias = add.args[1 - side];
      if (!reshape) continue;
      const TensorTypeNode* product = tensor_of(reshape->args[0]);
      // The sum must keep the reshape's shape: the bias broadcasts into it, not the other way.
      if (!last_axis_bias(bias, *product) || out.shape != tensor_of(add.args[side])->shape) continue;
      std::vector<Expr> args(2);
      args[side] = reshape->args[0];
      args[1 - side] = bias;
      return typed_reshape(call_op("add", std::move(args)), *reshape, out);
    }
    return nullptr;
  }

  // f(reshape(A, S), ..., scalars) -> reshape(f(A, ...), S): every tensor operand a reshape to
  // the result's shape from one source shape, at least one of them of a product's epilogue.
  static Expr move_elementwise(const CallNode& call, const TensorTypeNode& out) {
    const CallNode* first = nullptr;
    bool product = false;
    for (const Expr& arg : call.args) {
      if (is_scalar(arg)) continue;
      const CallNode* reshape = call_of(arg, "reshape");
      const TensorTypeNode* t = tensor_of(arg);
      const TensorTypeNode* source = reshape ? tensor_of(reshape->args[0]) : nullptr;
      if (!t || !t->is_static() || t->shape != out.shape || !source || !source->is_static()) return nullptr;
      if (first && source->shape != tensor_of(first->args[0])->shape) return nullptr;
      if (!first) first = reshape;
      product = product || reshaped_product(arg) != nullptr;
    }
    if (!first || !product) return nullptr;
    std::vector<Expr> args;
    for (const Expr& arg : call.args) args.push_back(is_scalar(arg) ? arg : call_of(arg, "reshape")->args[0]);
    return typed_reshape(make_call(call.callee, std::move(args), call.attrs), *first, out);
  }

  // reshape(reshape(X, S), shape of X) -> X: what the moves leave between two products.
  static Expr cancel_reshapes(const CallNode& reshape, const Expr& rebuilt, const TensorTypeNode& out) {
    const CallNode* inner = call_of(reshape.args[0], "reshape");
    const TensorTypeNode* source = inner ? tensor_of(inner->args[0]) : nullptr;
    if (!source || !source->is_static() || !out.is_static() || source->shape != out.shape) return rebuilt;
    return inner->args[0];
  }

  // The reshape of `value` as `like` does it, both typed: the parents' matches read them.
  static Expr typed_reshape(Expr value, const CallNode& like, const TensorTypeNode& out) {
    value->set_checked_type(tensor_type(tensor_of(like.args[0])->shape, out.dtype));
    Expr reshaped = make_call(like.callee, {std::move(value)}, like.attrs);
    reshaped->set_checked_type(tensor_type(out.shape, out.dtype));
    return reshaped;
  }
};

}  // namespace

IRModule move_elementwise_before_reshape_pass(const IRModule& mod) {
  return infer_types(map_functions(infer_types(mod), [](const Function& fn) {
    ElementwiseMover mover;
    return as_function(mover.rewrite(fn));
  }));
}

}  // namespace kiln
