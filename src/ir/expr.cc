#include "kiln/ir/expr.h"

#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/ir/op.h"
#include "kiln/support/error.h"

namespace kiln {

namespace {

// Dropping the last reference to a long chain would free it recursively, one stack frame
// per node, and overflow the stack. Nodes are therefore freed by a deleter that, when a
// free is already in progress on this thread, queues the node instead of recursing; the
// outermost deleter drains the queue in a loop.
//
// Set when this thread's queue is destroyed; a trivially destructible flag stays readable until the
// thread's storage goes, so static Exprs released at exit fall back to plain deletion.
thread_local bool deletion_queue_gone = false;

struct DeletionQueue {
  std::vector<const ExprNode*> pending;
  bool draining = false;
  ~DeletionQueue() { deletion_queue_gone = true; }
};

struct DeferredDelete {
  void operator()(const ExprNode* node) const {
    if (deletion_queue_gone) {
      delete node;
      return;
    }
    thread_local DeletionQueue queue;
    queue.pending.push_back(node);
    if (queue.draining) return;
    queue.draining = true;
    while (!queue.pending.empty()) {
      const ExprNode* next = queue.pending.back();
      queue.pending.pop_back();
      delete next;
    }
    queue.draining = false;
  }
};

template <typename Node, typename... Args>
std::shared_ptr<const Node> new_node(Args&&... args) {
  return std::shared_ptr<const Node>(new Node(std::forward<Args>(args)...), DeferredDelete{});
}

}  // namespace

const std::string& OpNode::name() const { return def->name; }

const OpDef* CallNode::op() const {
  const auto* o = as<OpNode>(callee);
  return o ? o->def : nullptr;
}

bool FunctionNode::is_primitive() const {
  const AttrValue* v = attrs.find("Primitive");
  return v && !v->is_none() && v->as_int() != 0;
}

Var make_var(std::string name, Type type) { return new_node<VarNode>(std::move(name), std::move(type)); }
GlobalVar make_global_var(std::string name) { return new_node<GlobalVarNode>(std::move(name)); }
Expr make_constant(NDArray data) { return new_node<ConstantNode>(std::move(data)); }

Expr op_expr(const std::string& op_name) {
  static std::mutex mu;
  static std::unordered_map<const OpDef*, Expr> nodes;
  const OpDef& def = OpRegistry::global().get(op_name);
  std::lock_guard<std::mutex> lock(mu);
  Expr& node = nodes[&def];
  if (!node) {
    SourceScope shared("");  // one node for every call of the op, from no model node
    node = new_node<OpNode>(&def);
  }
  return node;
}

namespace {
thread_local std::string tls_source;
}  // namespace

SourceScope::SourceScope(std::string name) : saved_(std::move(tls_source)) { tls_source = std::move(name); }
SourceScope::~SourceScope() { tls_source = std::move(saved_); }
const std::string& current_source() { return tls_source; }

Expr make_call(Expr callee, std::vector<Expr> args, Attrs attrs) {
  return new_node<CallNode>(std::move(callee), std::move(args), std::move(attrs));
}

Expr call_op(const std::string& op_name, std::vector<Expr> args, Attrs attrs) {
  return make_call(op_expr(op_name), std::move(args), std::move(attrs));
}

Expr make_tuple(std::vector<Expr> fields) { return new_node<TupleNode>(std::move(fields)); }
Expr make_tuple_get_item(Expr tuple, int index) { return new_node<TupleGetItemNode>(std::move(tuple), index); }

Function make_function(std::vector<Var> params, Expr body, Type ret_type, Attrs attrs) {
  return new_node<FunctionNode>(std::move(params), std::move(body), std::move(ret_type), std::move(attrs));
}

Expr make_let(Var var, Expr value, Expr body) {
  return new_node<LetNode>(std::move(var), std::move(value), std::move(body));
}

Expr make_if(Expr cond, Expr then_branch, Expr else_branch) {
  return new_node<IfNode>(std::move(cond), std::move(then_branch), std::move(else_branch));
}

Expr make_loop(Expr trip_count, Expr cond, std::vector<Expr> inits, Function body) {
  return new_node<LoopNode>(std::move(trip_count), std::move(cond), std::move(inits), std::move(body));
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
    case ExprKind::kLoop: {
      const auto* l = as<LoopNode>(e);
      std::vector<Expr> out{l->trip_count, l->cond};
      out.insert(out.end(), l->inits.begin(), l->inits.end());
      out.push_back(l->body);
      return out;
    }
    default: return {};
  }
}

Expr with_children(const Expr& e, const std::vector<Expr>& nc) {
  std::vector<Expr> old = children(e);
  if (old == nc) return e;
  check_invariant(old.size() == nc.size(), "with_children: wrong number of children");
  SourceScope same_source(e->source);
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
    case ExprKind::kLoop: {
      Function body = as_function(nc.back());
      if (!body) throw Error::bug("with_children: a loop body rewritten into something that is not a function");
      return make_loop(nc[0], nc[1], std::vector<Expr>(nc.begin() + 2, nc.end() - 1), std::move(body));
    }
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
