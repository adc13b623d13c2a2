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
