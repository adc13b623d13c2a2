// FuseOps: every group of ops that fusion_groups.h puts together becomes one function
// marked Primitive=1, called where the group's result was, as Relay's FuseOps does:
//
//   %0 = add(%x, %x); exp(%0)   ->   %1 = fn (%p0, Primitive=1) { %0 = add(%p0, %p0); exp(%0) };
//                                    %1(%x)
//
// Operands from outside the group become the function's parameters (scalar constants stay
// inside, where the kernel can fold them). An op that fuses with nothing still gets its own
// primitive function: the backend compiles primitive functions, not loose ops.
#include <unordered_map>

#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/support/strings.h"
#include "kiln/transform/pass.h"
#include "transform/fusion_groups.h"

namespace kiln {

namespace {

bool is_scalar_constant(const Expr& e) {
  const auto* c = as<ConstantNode>(e);
  return c && c->data.ndim() == 0;
}

// The primitive function being assembled for one group.
struct GroupFunction {
  std::vector<Var> params;
  std::vector<Expr> args;  // outer values passed for the params
  std::unordered_map<size_t, Var> param_of;
  bool has_op_call = false;
};

Function fuse_function(const Function& fn, bool fuse);

class FusedBodyBuilder {
 public:
  FusedBodyBuilder(const fusion::Grouping& g, bool fuse)
      : g_(g), fuse_(fuse), outer_(g.nodes.size()), inner_(g.nodes.size()) {
    for (size_t i = 0; i < g.nodes.size(); ++i) index_[g.nodes[i].expr.get()] = i;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (const auto* call = as<CallNode>(g.nodes[i].expr); call && call->op())
        groups_[g.group_root[i]].has_op_call = true;
  }

  Expr build() {
    for (size_t i = 0; i < g_.nodes.size(); ++i) visit(i);
    return outer_.back();
  }

 private:
  void visit(size_t i) {
    size_t root = g_.group_root[i];
    auto group = groups_.find(root);
    if (group == groups_.end()) {  // not part of a kernel: rebuild with rewritten children
      // A function inside (a loop's body) is fused on its own, like a function of the module.
      if (Function fn = as_function(g_.nodes[i].expr)) {
        outer_[i] = fuse_function(fn, fuse_);
        return;
      }
      outer_[i] = rebuild(i, [&](size_t c) { return outer_[c]; });
      return;
    }
    inner_[i] = rebuild(i, [&](size_t c) { return operand(group->second, root, c); });
    if (i == root) outer_[i] = make_call(make_primitive(group->second, i), group->second.args);
  }

  template <class ChildValue>
  Expr rebuild(size_t i, ChildValue child_value) {
    const Expr& e = g_.nodes[i].expr;
    std::vector<Expr> kids = children(e);
    for (Expr& k : kids) {
      auto it = index_.find(k.get());
      if (it != index_.end()) k = child_value(it->second);
    }
    return with_children(e, kids);
  }

  // An operand inside the group: the inner value of a member, else a parameter.
  Expr operand(GroupFunction& f, size_t root, size_t c) {
    if (g_.group_root[c] == root) return inner_[c];
    if (is_scalar_constant(g_.nodes[c].expr)) return g_.nodes[c].expr;
    auto it = f.param_of.find(c);
    if (it != f.param_of.end()) return it->second;
    Var p = make_var("p" + std::to_string(f.params.size()), g_.nodes[c].expr->checked_type());
    f.params.push_back(p);
    f.args.push_back(outer_[c]);
    f.param_of.emplace(c, p);
    return p;
  }

  Expr make_primitive(const GroupFunction& f, size_t root) {
    Attrs attrs;
    attrs.set("Primitive", int64_t{1});
    return make_function(f.params, inner_[root], g_.nodes[root].expr->checked_type(), attrs);
  }

  const fusion::Grouping& g_;
  const bool fuse_;
  std::vector<Expr> outer_, inner_;
  std::unordered_map<const ExprNode*, size_t> index_;
  std::unordered_map<size_t, GroupFunction> groups_;
};

Function fuse_function(const Function& fn, bool fuse) {
  if (fn->is_primitive()) return fn;
  fusion::Grouping g = fusion::group_for_fusion(fn->body, fuse);
  return make_function(fn->params, FusedBodyBuilder(g, fuse).build(), fn->ret_type, fn->attrs);
}

}  // namespace

IRModule fuse_ops_pass(const IRModule& mod, bool fuse) {
  IRModule typed = infer_types(mod);
  return infer_types(map_functions(typed, [fuse](const Function& fn) { return fuse_function(fn, fuse); }));
}

}  // namespace kiln
