#include "kiln/ir/type_infer.h"

#include <functional>
#include <set>
#include <unordered_map>

#include "kiln/ir/op.h"
#include "kiln/ir/visit.h"
#include "kiln/support/error.h"

namespace kiln {

namespace {

// True when a value of type `found` may be passed where `expected` is declared:
// equal, except that an unknown dimension in `expected` accepts any extent.
bool type_accepts(const Type& expected, const Type& found) {
  if (!expected || !found || expected->kind != found->kind) return false;
  if (const auto* e = as_tensor(expected)) {
    const auto* f = as_tensor(found);
    if (e->dtype != f->dtype || e->shape.size() != f->shape.size()) return false;
    for (size_t i = 0; i < e->shape.size(); ++i)
      if (e->shape[i] != kAnyDim && e->shape[i] != f->shape[i]) return false;
    return true;
  }
  if (const auto* e = as_tuple(expected)) {
    const auto* f = as_tuple(found);
    if (e->fields.size() != f->fields.size()) return false;
    for (size_t i = 0; i < e->fields.size(); ++i)
      if (!type_accepts(e->fields[i], f->fields[i])) return false;
    return true;
  }
  return type_equal(expected, found);
}

class TypeInferencer {
 public:
  explicit TypeInferencer(const IRModule* mod) : mod_(mod) {}

  Type infer(const Expr& root, const std::string& where) {
    where_ = where;
    collect_let_values(root, nullptr);
    post_order_visit(root, [&](const Expr& e) {
      if (!e->checked_type() || e->kind == ExprKind::kVar) e->set_checked_type(infer_node(e));
    });
    return root->checked_type();
  }

  // Types only the nodes without a type; typed ones and what lies below them are trusted.
  Type infer_untyped(const Expr& root) {
    const auto typed = [](const Expr& e) { return e->checked_type() != nullptr; };
    collect_let_values(root, typed);
    post_order_visit_pruned(root, typed, [&](const Expr& e) { e->set_checked_type(infer_node(e)); });
    return root->checked_type();
  }

  Type global_type(const std::string& name) {
    const Function* fn = mod_ ? mod_->find(name) : nullptr;
    if (!fn) throw Error(cat("call of unknown global function @", name));
    if ((*fn)->checked_type()) return (*fn)->checked_type();
    if (in_progress_.count(name)) {
      // Recursive call: the declared signature is all we can rely on.
      Type declared = declared_type(**fn);
      if (!declared) throw Error(cat("recursive function @", name, " needs a return type annotation"));
      return declared;
    }
    in_progress_.insert(name);
    std::string saved_where = where_;
    auto saved_lets = let_values_;
    TypeInferencer inner(mod_);
    inner.in_progress_ = in_progress_;
    Type t = inner.infer(*fn, "@" + name);
    where_ = saved_where;
    let_values_ = std::move(saved_lets);
    in_progress_.erase(name);
    return t;
  }

 private:
  template <class... Args>
  std::string located(const Args&... args) const {
    return where_.empty() ? cat(args...) : cat(where_, ": ", args...);
  }

  static Type declared_type(const FunctionNode& f) {
    if (!f.ret_type) return nullptr;
    std::vector<Type> params;
    for (const auto& p : f.params) params.push_back(p->type_annotation);
    return func_type(params, f.ret_type);
  }

  void collect_let_values(const Expr& root, const std::function<bool(const Expr&)>& prune) {
    post_order_visit_pruned(root, prune, [&](const Expr& e) {
      if (const auto* let = as<LetNode>(e)) let_values_[let->var.get()] = let->value;
    });
  }

  Type infer_node(const Expr& e) {
    switch (e->kind) {
      case ExprKind::kVar: return var_type(*as<VarNode>(e));
      case ExprKind::kGlobalVar: return global_type(as<GlobalVarNode>(e)->name);
      case ExprKind::kConstant: {
        const NDArray& d = as<ConstantNode>(e)->data;
        return tensor_type(d.shape(), d.dtype());
      }
      case ExprKind::kOp: throw Error(located("op '", as<OpNode>(e)->name(), "' used as a value"));
      case ExprKind::kCall: return call_type(*as<CallNode>(e));
      case ExprKind::kTuple: {
        std::vector<Type> fields;
        for (const auto& f : as<TupleNode>(e)->fields) fields.push_back(f->checked_type());
        return tuple_type(std::move(fields));
      }
      case ExprKind::kTupleGetItem: return get_item_type(*as<TupleGetItemNode>(e));
      case ExprKind::kFunction: return function_type(*as<FunctionNode>(e));
      case ExprKind::kLet: return as<LetNode>(e)->body->checked_type();
      case ExprKind::kIf: return if_type(*as<IfNode>(e));
      case ExprKind::kLoop: return loop_type(*as<LoopNode>(e));
    }
    return nullptr;
  }

  Type var_type(const VarNode& v) {
    auto it = let_values_.find(&v);
    if (it != let_values_.end()) {
      const Type& value_type = it->second->checked_type();
      if (v.type_annotation && !type_accepts(v.type_annotation, value_type))
        throw std::move(Error(located("let %", v.name, " has the wrong type"))
                            .expected(type_str(v.type_annotation), type_str(value_type)));
      return v.type_annotation ? v.type_annotation : value_type;
    }
    if (!v.type_annotation) throw Error(located("variable %", v.name, " has no type annotation"));
    return v.type_annotation;
  }

  Type call_type(const CallNode& call) {
    std::vector<Type> arg_types;
    for (const auto& a : call.args) arg_types.push_back(a->checked_type());
    if (const OpDef* def = call.op()) return op_call_type(*def, call, arg_types);
    Type callee = call.callee->checked_type();
    const FuncTypeNode* ft = as_func(callee);
    if (!ft) throw Error(located("calling a value that is not a function: ", type_str(callee)));
    if (ft->params.size() != arg_types.size())
      throw std::move(Error(located("wrong number of arguments in a function call"))
                          .expected(cat(ft->params.size()), cat(arg_types.size())));
    for (size_t i = 0; i < arg_types.size(); ++i) {
      if (!type_accepts(ft->params[i], arg_types[i]))
        throw std::move(Error(located("argument ", i, " of a function call has the wrong type"))
                            .expected(type_str(ft->params[i]), type_str(arg_types[i])));
    }
    return ft->ret;
  }

  Type op_call_type(const OpDef& def, const CallNode& call, const std::vector<Type>& arg_types) {
    try {
      def.check_arity(arg_types.size());
      Attrs attrs = def.normalize(call.attrs);
      if (!def.relation) throw Error("op has no type relation");
      return def.relation(arg_types, attrs);
    } catch (Error& e) {
      if (!call.source.empty()) e.node(call.source);
      e.op(def.name);
      if (where_.empty()) throw;
      throw Error(located(e.what()));
    }
  }

  Type get_item_type(const TupleGetItemNode& g) {
    const Type& t = g.tuple->checked_type();
    const TupleTypeNode* tt = as_tuple(t);
    if (!tt) throw Error(located(".", g.index, " applied to a non-tuple of type ", type_str(t)));
    if (g.index < 0 || g.index >= static_cast<int>(tt->fields.size()))
      throw std::move(
          Error(located("tuple index out of range")).expected(cat("index below ", tt->fields.size()), cat(g.index)));
    return tt->fields[g.index];
  }

  Type function_type(const FunctionNode& f) {
    std::vector<Type> params;
    for (const auto& p : f.params) {
      if (!p->type_annotation) throw Error(located("parameter %", p->name, " has no type annotation"));
      params.push_back(p->type_annotation);
    }
    Type ret = f.body->checked_type();
    if (f.ret_type && !type_accepts(f.ret_type, ret))
      throw std::move(
          Error(located("function body does not match its return type")).expected(type_str(f.ret_type), type_str(ret)));
    return func_type(std::move(params), f.ret_type ? f.ret_type : ret);
  }

  Type if_type(const IfNode& i) {
    const TensorTypeNode* c = as_tensor(i.cond->checked_type());
    if (!c || c->dtype != DType::kBool || num_elements(c->shape) != 1)
      throw std::move(
          Error(located("if condition must be a single bool")).expected("bool", type_str(i.cond->checked_type())));
    const Type& a = i.then_branch->checked_type();
    const Type& b = i.else_branch->checked_type();
    if (!type_equal(a, b))
      throw std::move(Error(located("if branches have different types")).expected(type_str(a), type_str(b)));
    return a;
  }

  static bool is_scalar_of(const Type& t, DType dtype) {
    const TensorTypeNode* tensor = as_tensor(t);
    return tensor && tensor->dtype == dtype && tensor->is_static() && num_elements(tensor->shape) == 1;
  }

  static bool is_true_constant(const Expr& e) {
    const auto* c = as<ConstantNode>(e);
    return c && c->data.numel() == 1 && c->data.int_at(0) != 0;
  }

  // The number of iterations when the types can know it: a constant trip count, and a
  // condition that starts true and that the body returns unchanged or as True.
  static int64_t static_iterations(const LoopNode& l) {
    const auto* trip = as<ConstantNode>(l.trip_count);
    const auto* result = as<TupleNode>(l.body->body);
    if (!trip || trip->data.numel() != 1 || !is_true_constant(l.cond) || !result || result->fields.empty())
      return kAnyDim;
    const Expr& next_cond = result->fields[0];
    if (next_cond != l.body->params[1] && !is_true_constant(next_cond)) return kAnyDim;
    return std::max<int64_t>(trip->data.int_at(0), 0);
  }

  Type loop_type(const LoopNode& l) {
    auto fail = [&](const std::string& what, const std::string& expected, const Type& found) -> Error {
      Error error(located("loop: ", what));
      error.expected(expected, type_str(found));
      if (!l.source.empty()) error.node(l.source);
      return error;
    };
    if (!is_scalar_of(l.trip_count->checked_type(), DType::kInt64))
      throw fail("the trip count must be one int64", "int64", l.trip_count->checked_type());
    if (!is_scalar_of(l.cond->checked_type(), DType::kBool))
      throw fail("the condition must be one bool", "bool", l.cond->checked_type());
    const auto& params = l.body->params;
    if (params.size() != l.inits.size() + 2)
      throw std::move(Error(located("loop: the body takes the iteration number, the condition and each carried value"))
                          .expected(cat(l.inits.size() + 2, " parameters"), cat(params.size())));
    if (!is_scalar_of(params[0]->type_annotation, DType::kInt64))
      throw fail("the body's iteration number must be one int64", "int64", params[0]->type_annotation);
    if (!is_scalar_of(params[1]->type_annotation, DType::kBool))
      throw fail("the body's condition must be one bool", "bool", params[1]->type_annotation);
    const FuncTypeNode* body = as_func(l.body->checked_type());
    const TupleTypeNode* out = body ? as_tuple(body->ret) : nullptr;
    if (!out || out->fields.size() < l.inits.size() + 1)
      throw fail("the body must return (condition, carried values..., scan outputs...)",
                 cat("a tuple of at least ", l.inits.size() + 1, " fields"), body ? body->ret : nullptr);
    if (!is_scalar_of(out->fields[0], DType::kBool))
      throw fail("the body's returned condition must be one bool", "bool", out->fields[0]);
    std::vector<Type> results;
    for (size_t k = 0; k < l.inits.size(); ++k) {
      const Type& init = l.inits[k]->checked_type();
      const Type& declared = params[k + 2]->type_annotation;
      const Type& next = out->fields[k + 1];
      if (!type_accepts(declared, init))
        throw fail(cat("initial carried value ", k, " does not match the body's parameter %", params[k + 2]->name),
                   type_str(declared), init);
      if (!type_equal(declared, next))
        throw fail(cat("carried value ", k, " changes type across iterations"), type_str(declared), next);
      results.push_back(declared);
    }
    const int64_t iterations = static_iterations(l);
    for (size_t k = l.inits.size() + 1; k < out->fields.size(); ++k) {
      const TensorTypeNode* scan = as_tensor(out->fields[k]);
      if (!scan)
        throw fail(cat("scan output ", k - l.inits.size() - 1, " must be a tensor"), "a tensor", out->fields[k]);
      Shape stacked{iterations};
      stacked.insert(stacked.end(), scan->shape.begin(), scan->shape.end());
      results.push_back(tensor_type(std::move(stacked), scan->dtype));
    }
    return tuple_type(std::move(results));
  }

  const IRModule* mod_;
  std::string where_;
  std::set<std::string> in_progress_;
  std::unordered_map<const ExprNode*, Expr> let_values_;
};

}  // namespace

IRModule infer_types(const IRModule& mod) {
  for (const auto& [name, fn] : mod.functions()) {
    if (fn->checked_type()) continue;
    TypeInferencer(&mod).infer(fn, "@" + name);
  }
  return mod;
}

Type infer_expr_type(const Expr& e, const IRModule* mod) { return TypeInferencer(mod).infer(e, "expression"); }

Type infer_untyped_nodes(const Expr& e) { return TypeInferencer(nullptr).infer_untyped(e); }

}  // namespace kiln
