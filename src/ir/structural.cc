// Structural equality walks both DAGs with an explicit stack, pairing nodes; binders
// (function parameters, let variables) are paired when their binding node is reached,
// before any use below it. The hash is computed bottom-up and gives a bound variable the
// hash of its binding position, so alpha-equivalent expressions hash alike.
#include "kiln/ir/structural.h"

#include <cmath>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "kiln/ir/op.h"
#include "kiln/ir/visit.h"

namespace kiln {

namespace {

// The declared return type, else the one InferType found (printing shows either).
Type known_ret(const FunctionNode& f) {
  if (f.ret_type) return f.ret_type;
  if (const auto* ft = as_func(f.checked_type())) return ft->ret;
  return nullptr;
}

// Return types are compared only when both are known: the result type follows from the
// parameters and the body, and a function before InferType equals itself after it.
bool compatible_ret(const FunctionNode& a, const FunctionNode& b) {
  Type ra = known_ret(a), rb = known_ret(b);
  return !ra || !rb || type_equal(ra, rb);
}

template <class T>
const T& node_as(const ExprNode* e) {
  return *static_cast<const T*>(e);
}

class EqualChecker {
 public:
  bool equal(const Expr& a, const Expr& b) {
    stack_.emplace_back(a.get(), b.get());
    while (!stack_.empty()) {
      auto [x, y] = stack_.back();
      stack_.pop_back();
      if (!x || !y) {
        if (x != y) return false;
        continue;
      }
      if (!visited_.insert({x, y}).second) continue;
      if (x->kind != y->kind || !compare(x, y)) return false;
    }
    return true;
  }

 private:
  struct PairHash {
    size_t operator()(const std::pair<const ExprNode*, const ExprNode*>& p) const {
      return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
    }
  };

  void push(const Expr& x, const Expr& y) { stack_.emplace_back(x.get(), y.get()); }

  bool push_all(const std::vector<Expr>& xs, const std::vector<Expr>& ys) {
    if (xs.size() != ys.size()) return false;
    for (size_t i = xs.size(); i-- > 0;) push(xs[i], ys[i]);
    return true;
  }

  bool bind(const VarNode& x, const VarNode& y) {
    if (!type_equal(x.type_annotation, y.type_annotation)) return false;
    auto lx = lhs_to_rhs_.find(&x);
    auto ry = rhs_to_lhs_.find(&y);
    if (lx != lhs_to_rhs_.end() || ry != rhs_to_lhs_.end())
      return lx != lhs_to_rhs_.end() && ry != rhs_to_lhs_.end() && lx->second == &y && ry->second == &x;
    lhs_to_rhs_[&x] = &y;
    rhs_to_lhs_[&y] = &x;
    return true;
  }

  bool same_var(const VarNode& x, const VarNode& y) const {
    auto lx = lhs_to_rhs_.find(&x);
    if (lx != lhs_to_rhs_.end()) return lx->second == &y;
    if (rhs_to_lhs_.count(&y)) return false;
    return &x == &y;  // free variables: the same variable
  }

  bool compare(const ExprNode* x, const ExprNode* y) {
    switch (x->kind) {
      case ExprKind::kVar: return same_var(node_as<VarNode>(x), node_as<VarNode>(y));
      case ExprKind::kGlobalVar: return node_as<GlobalVarNode>(x).name == node_as<GlobalVarNode>(y).name;
      case ExprKind::kConstant: return node_as<ConstantNode>(x).data.same_as(node_as<ConstantNode>(y).data);
      case ExprKind::kOp: return node_as<OpNode>(x).name() == node_as<OpNode>(y).name();
      case ExprKind::kCall: {
        const auto& a = node_as<CallNode>(x);
        const auto& b = node_as<CallNode>(y);
        if (!(a.attrs == b.attrs) || !push_all(a.args, b.args)) return false;
        push(a.callee, b.callee);
        return true;
      }
      case ExprKind::kTuple: return push_all(node_as<TupleNode>(x).fields, node_as<TupleNode>(y).fields);
      case ExprKind::kTupleGetItem: {
        const auto& a = node_as<TupleGetItemNode>(x);
        const auto& b = node_as<TupleGetItemNode>(y);
        if (a.index != b.index) return false;
        push(a.tuple, b.tuple);
        return true;
      }
      case ExprKind::kFunction: {
        const auto& a = node_as<FunctionNode>(x);
        const auto& b = node_as<FunctionNode>(y);
        if (a.params.size() != b.params.size() || !(a.attrs == b.attrs) || !compatible_ret(a, b)) return false;
        for (size_t i = 0; i < a.params.size(); ++i)
          if (!bind(*a.params[i], *b.params[i])) return false;
        push(a.body, b.body);
        return true;
      }
      case ExprKind::kLet: {
        const auto& a = node_as<LetNode>(x);
        const auto& b = node_as<LetNode>(y);
        if (!bind(*a.var, *b.var)) return false;
        push(a.body, b.body);
        push(a.value, b.value);
        return true;
      }
      case ExprKind::kIf: {
        const auto& a = node_as<IfNode>(x);
        const auto& b = node_as<IfNode>(y);
        push(a.else_branch, b.else_branch);
        push(a.then_branch, b.then_branch);
        push(a.cond, b.cond);
        return true;
      }
      case ExprKind::kLoop: {
        const auto& a = node_as<LoopNode>(x);
        const auto& b = node_as<LoopNode>(y);
        push(a.body, b.body);
        if (!push_all(a.inits, b.inits)) return false;
        push(a.cond, b.cond);
        push(a.trip_count, b.trip_count);
        return true;
      }
    }
    return false;
  }

  std::vector<std::pair<const ExprNode*, const ExprNode*>> stack_;
  std::unordered_set<std::pair<const ExprNode*, const ExprNode*>, PairHash> visited_;
  std::unordered_map<const VarNode*, const VarNode*> lhs_to_rhs_;
  std::unordered_map<const VarNode*, const VarNode*> rhs_to_lhs_;
};

size_t combine(size_t seed, size_t value) {
  // 64-bit variant of boost::hash_combine's mixing.
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 12) + (seed >> 4));
}

size_t hash_string(std::string_view s) { return std::hash<std::string_view>()(s); }

size_t hash_type(const Type& t) {
  if (!t) return 0x7e11;
  size_t h = static_cast<size_t>(t->kind) + 1;
  if (const auto* tt = as_tensor(t)) {
    h = combine(h, static_cast<size_t>(tt->dtype));
    for (int64_t d : tt->shape) h = combine(h, static_cast<size_t>(d));
    return combine(h, tt->shape.size());
  }
  if (const auto* tu = as_tuple(t)) {
    for (const auto& f : tu->fields) h = combine(h, hash_type(f));
    return combine(h, tu->fields.size());
  }
  const auto* ft = as_func(t);
  for (const auto& p : ft->params) h = combine(h, hash_type(p));
  return combine(combine(h, ft->params.size()), hash_type(ft->ret));
}

size_t hash_attr_value(const AttrValue& v) {
  size_t h = v.v.index();
  if (v.is_bool()) return combine(h, v.as_bool());
  if (v.is_int()) return combine(h, static_cast<size_t>(v.as_int()));
  if (v.is_float()) {
    double d = v.as_double();
    if (std::isnan(d)) return combine(h, 0x7ff8);
    return combine(h, std::hash<double>()(d == 0 ? 0.0 : d));  // -0.0 == 0.0
  }
  if (v.is_string()) return combine(h, hash_string(v.as_string()));
  if (v.is_list()) {
    for (const auto& item : v.as_list()) h = combine(h, hash_attr_value(item));
    return combine(h, v.as_list().size());
  }
  return h;
}

size_t hash_attrs(const Attrs& attrs) {
  size_t h = attrs.size();
  for (const auto& [key, value] : attrs.entries()) h = combine(combine(h, hash_string(key)), hash_attr_value(value));
  return h;
}

size_t hash_constant(const NDArray& a) {
  size_t h = combine(0xc0, static_cast<size_t>(a.dtype()));
  for (int64_t d : a.shape()) h = combine(h, static_cast<size_t>(d));
  return combine(h, hash_string(std::string_view(static_cast<const char*>(a.raw()), a.nbytes())));
}

class Hasher {
 public:
  size_t hash(const Expr& root) {
    // Binders first: a variable's hash is that of its binding position and type.
    post_order_visit(root, [&](const Expr& e) {
      if (const auto* f = as<FunctionNode>(e)) {
        for (size_t i = 0; i < f->params.size(); ++i)
          binder_[f->params[i].get()] = combine(combine(0xb1, i), hash_type(f->params[i]->type_annotation));
      } else if (const auto* l = as<LetNode>(e)) {
        binder_[l->var.get()] = combine(0x1e7, hash_type(l->var->type_annotation));
      }
    });
    post_order_visit(root, [&](const Expr& e) { memo_[e.get()] = hash_node(e.get()); });
    return memo_.at(root.get());
  }

 private:
  size_t child(const Expr& e) const { return memo_.at(e.get()); }

  size_t hash_node(const ExprNode* e) const {
    size_t h = combine(0x5eed, static_cast<size_t>(e->kind));
    switch (e->kind) {
      case ExprKind::kVar: {
        auto it = binder_.find(static_cast<const VarNode*>(e));
        return combine(h, it != binder_.end() ? it->second : std::hash<const void*>()(e));
      }
      case ExprKind::kGlobalVar: return combine(h, hash_string(node_as<GlobalVarNode>(e).name));
      case ExprKind::kConstant: return combine(h, hash_constant(node_as<ConstantNode>(e).data));
      case ExprKind::kOp: return combine(h, hash_string(node_as<OpNode>(e).name()));
      case ExprKind::kCall: {
        const auto& c = node_as<CallNode>(e);
        h = combine(h, c.callee->kind == ExprKind::kOp ? hash_node(c.callee.get()) : child(c.callee));
        for (const auto& a : c.args) h = combine(h, child(a));
        return combine(combine(h, c.args.size()), hash_attrs(c.attrs));
      }
      case ExprKind::kTuple: {
        const auto& t = node_as<TupleNode>(e);
        for (const auto& f : t.fields) h = combine(h, child(f));
        return combine(h, t.fields.size());
      }
      case ExprKind::kTupleGetItem: {
        const auto& g = node_as<TupleGetItemNode>(e);
        return combine(combine(h, static_cast<size_t>(g.index)), child(g.tuple));
      }
      case ExprKind::kFunction: {
        const auto& f = node_as<FunctionNode>(e);
        h = combine(h, f.params.size());
        for (const auto& p : f.params) h = combine(h, hash_type(p->type_annotation));
        h = combine(h, hash_attrs(f.attrs));  // not the return type: see compatible_ret
        return combine(h, child(f.body));
      }
      case ExprKind::kLet: {
        const auto& l = node_as<LetNode>(e);
        h = combine(h, hash_type(l.var->type_annotation));
        return combine(combine(h, child(l.value)), child(l.body));
      }
      case ExprKind::kIf: {
        const auto& i = node_as<IfNode>(e);
        return combine(combine(combine(h, child(i.cond)), child(i.then_branch)), child(i.else_branch));
      }
      case ExprKind::kLoop: {
        const auto& l = node_as<LoopNode>(e);
        h = combine(combine(h, child(l.trip_count)), child(l.cond));
        for (const auto& v : l.inits) h = combine(h, child(v));
        return combine(combine(h, l.inits.size()), child(l.body));
      }
    }
    return h;
  }

  std::unordered_map<const VarNode*, size_t> binder_;
  std::unordered_map<const ExprNode*, size_t> memo_;
};

}  // namespace

bool structural_equal(const Expr& a, const Expr& b) {
  if (!a || !b) return a == b;
  return EqualChecker().equal(a, b);
}

bool structural_equal(const IRModule& a, const IRModule& b) {
  if (a.functions().size() != b.functions().size()) return false;
  for (const auto& [name, fn] : a.functions()) {
    const Function* other = b.find(name);
    if (!other || !structural_equal(fn, *other)) return false;
  }
  return true;
}

size_t structural_hash(const Expr& e) {
  if (!e) return 0;
  return Hasher().hash(e);
}

}  // namespace kiln
