#include "frontend/onnx/graph_eval.h"

#include <map>
#include <utility>
#include <vector>

#include "kiln/interp/interpreter.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"
#include "transform/substitute.h"

namespace kiln::frontend {

namespace {

Type op_call_type(const CallNode& call) {
  const OpDef& def = *call.op();
  std::vector<Type> arg_types;
  for (const auto& a : call.args) arg_types.push_back(a->checked_type());
  try {
    def.check_arity(arg_types.size());
    return def.relation(arg_types, def.normalize(call.attrs));
  } catch (const Error& e) {
    throw Error(cat(def.name, ": ", e.what()));
  }
}

Type tuple_item_type(const TupleGetItemNode& item) {
  const TupleTypeNode* tuple = as_tuple(item.tuple->checked_type());
  check(tuple != nullptr, "tuple index .", item.index, " applied to a value of type ",
        type_str(item.tuple->checked_type()));
  check(item.index >= 0 && item.index < static_cast<int>(tuple->fields.size()), "tuple index .", item.index,
        " out of range for ", type_str(item.tuple->checked_type()));
  return tuple->fields[item.index];
}

// The type of a node whose children are typed.
Type node_type(const Expr& e) {
  switch (e->kind) {
    case ExprKind::kVar: {
      const auto& v = *as<VarNode>(e);
      check(v.type_annotation != nullptr, "variable %", v.name, " has no type");
      return v.type_annotation;
    }
    case ExprKind::kConstant: {
      const NDArray& d = as<ConstantNode>(e)->data;
      return tensor_type(d.shape(), d.dtype());
    }
    case ExprKind::kCall:
      if (as<CallNode>(e)->op()) return op_call_type(*as<CallNode>(e));
      break;
    case ExprKind::kTuple: {
      std::vector<Type> fields;
      for (const auto& f : as<TupleNode>(e)->fields) fields.push_back(f->checked_type());
      return tuple_type(std::move(fields));
    }
    case ExprKind::kTupleGetItem: return tuple_item_type(*as<TupleGetItemNode>(e));
    default: break;
  }
  return infer_expr_type(e);  // functions, lets, ifs: rare in converter output
}

bool is_scoped(const Expr& e) {
  return e->kind == ExprKind::kFunction || e->kind == ExprKind::kLet || e->kind == ExprKind::kIf;
}

}  // namespace

Type infer_type_incrementally(const Expr& root) {
  // Post-order over the untyped part only: typed nodes are where the walk stops.
  std::vector<std::pair<Expr, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [e, expanded] = std::move(stack.back());
    stack.pop_back();
    if (e->checked_type()) continue;
    if (expanded || is_scoped(e)) {
      e->set_checked_type(node_type(e));
      continue;
    }
    stack.emplace_back(e, true);
    for (const auto& child : children(e))
      if (!child->checked_type()) stack.emplace_back(child, false);
  }
  return root->checked_type();
}

std::optional<NDArray> evaluate_at_import(const Expr& e, const std::unordered_map<const VarNode*, NDArray>& known) {
  std::map<const VarNode*, Expr> binding;
  bool closed = true;
  post_order_visit(e, [&](const Expr& node) {
    // A call without arguments counts as known, but a nondeterministic op (random draws,
    // the `unreachable` trap of an If branch that did not convert) must run when the
    // model runs, not once now.
    const auto* call = as<CallNode>(node);
    if (call && call->op() && call->op()->nondeterministic) closed = false;
    const auto* v = as<VarNode>(node);
    if (!v) return;
    auto it = known.find(v);
    if (it == known.end()) {
      closed = false;
    } else {
      binding.emplace(v, make_constant(it->second));
    }
  });
  if (!closed) return std::nullopt;
  try {
    Value value = interpret_expr(binding.empty() ? e : substitute(e, binding));
    if (!value.is_tensor()) return std::nullopt;
    return value.tensor();
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace kiln::frontend
