#include "kiln/ir/expr.h"

#include <mutex>
#include <unordered_map>

#include "kiln/ir/op.h"
#include "kiln/support/error.h"

namespace kiln {

const std::string& OpNode::name() const { return def->name; }

const OpDef* CallNode::op() const {
  const auto* o = as<OpNode>(callee);
  return o ? o->def : nullptr;
}

bool FunctionNode::is_primitive() const {
  const AttrValue* v = attrs.find("Primitive");
  return v && !v->is_none() && v->as_int() != 0;
}

Var make_var(std::string name, Type type) { return std::make_shared<VarNode>(std::move(name), std::move(type)); }
GlobalVar make_global_var(std::string name) { return std::make_shared<GlobalVarNode>(std::move(name)); }
Expr make_constant(NDArray data) { return std::make_shared<ConstantNode>(std::move(data)); }

Expr op_expr(const std::string& op_name) {
  static std::mutex mu;
  static std::unordered_map<const OpDef*, Expr> nodes;
  const OpDef& def = OpRegistry::global().get(op_name);
  std::lock_guard<std::mutex> lock(mu);
  Expr& node = nodes[&def];
  if (!node) node = std::make_shared<OpNode>(&def);
  return node;
}

Expr make_call(Expr callee, std::vector<Expr> args, Attrs attrs) {
  return std::make_shared<CallNode>(std::move(callee), std::move(args), std::move(attrs));
}

Expr call_op(const std::string& op_name, std::vector<Expr> args, Attrs attrs) {
  return make_call(op_expr(op_name), std::move(args), std::move(attrs));
}

Expr make_tuple(std::vector<Expr> fields) { return std::make_shared<TupleNode>(std::move(fields)); }
Expr make_tuple_get_item(Expr tuple, int index) { return std::make_shared<TupleGetItemNode>(std::move(tuple), index); }

Function make_function(std::vector<Var> params, Expr body, Type ret_type, Attrs attrs) {
  return std::make_shared<FunctionNode>(std::move(params), std::move(body), std::move(ret_type), std::move(attrs));
}

Expr make_let(Var var, Expr value, Expr body) {
  return std::make_shared<LetNode>(std::move(var), std::move(value), std::move(body));
}

Expr make_if(Expr cond, Expr then_branch, Expr else_branch) {
  return std::make_shared<IfNode>(std::move(cond), std::move(then_branch), std::move(else_branch));
}

std::vector<Expr> children(const Expr& e) {
  switch (e->kind) {
    case ExprKind::kCall: {
      const auto* c = as<CallNode>(e);
      std::vector<Expr> out;
      out.reserve(c->args.size() + 1);
      if (c->callee->kind != ExprKind::kOp) out.push_back(c->callee);
      out.insert(out.end(), c->args.begin(), c->args.end());
      return out;
    }
    case ExprKind::kTuple: return as<TupleNode>(e)->fields;
    case ExprKind::kTupleGetItem: return {as<TupleGetItemNode>(e)->tuple};
    case ExprKind::kFunction: return {as<FunctionNode>(e)->body};
    case ExprKind::kLet: return {as<LetNode>(e)->value, as<LetNode>(e)->body};
    case ExprKind::kIf: {
      const auto* i = as<IfNode>(e);
      return {i->cond, i->then_branch, i->else_branch};
    }
    default: return {};
  }
}

Expr with_children(const Expr& e, const std::vector<Expr>& nc) {
  std::vector<Expr> old = children(e);
  if (old == nc) return e;
  check(old.size() == nc.size(), "with_children: wrong number of children");
  switch (e->kind) {
    case ExprKind::kCall: {
      const auto* c = as<CallNode>(e);
      bool op_callee = c->callee->kind == ExprKind::kOp;
      Expr callee = op_callee ? c->callee : nc[0];
      std::vector<Expr> args(nc.begin() + (op_callee ? 0 : 1), nc.end());
      return make_call(callee, std::move(args), c->attrs);
    }
    case ExprKind::kTuple: return make_tuple(nc);
    case ExprKind::kTupleGetItem: return make_tuple_get_item(nc[0], as<TupleGetItemNode>(e)->index);
    case ExprKind::kFunction: {
      const auto* f = as<FunctionNode>(e);
      return make_function(f->params, nc[0], f->ret_type, f->attrs);
    }
    case ExprKind::kLet: return make_let(as<LetNode>(e)->var, nc[0], nc[1]);
    case ExprKind::kIf: return make_if(nc[0], nc[1], nc[2]);
    default: return e;
  }
}

Var as_var(const Expr& e) {
  return e && e->kind == ExprKind::kVar ? std::static_pointer_cast<const VarNode>(e) : nullptr;
}
Function as_function(const Expr& e) {
  return e && e->kind == ExprKind::kFunction ? std::static_pointer_cast<const FunctionNode>(e) : nullptr;
}
GlobalVar as_global_var(const Expr& e) {
  return e && e->kind == ExprKind::kGlobalVar ? std::static_pointer_cast<const GlobalVarNode>(e) : nullptr;
}

}  // namespace kiln
