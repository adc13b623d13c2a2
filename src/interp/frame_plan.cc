#include "interp/frame_plan.h"

#include <unordered_set>

#include "kiln/ir/visit.h"
#include "kiln/support/error.h"

namespace kiln::interp {

namespace {

bool is_static_type(const Type& t) {
  if (const auto* tensor = as_tensor(t)) return tensor->is_static();
  if (const auto* tuple = as_tuple(t)) {
    for (const auto& f : tuple->fields)
      if (!is_static_type(f)) return false;
    return true;
  }
  return false;
}

std::vector<Expr> operand_exprs(const Expr& e, const FreeVarsFn& free_vars) {
  if (const auto* fn = as<FunctionNode>(e)) {
    const auto& vars = free_vars(*fn);
    return std::vector<Expr>(vars.begin(), vars.end());
  }
  return children(e);
}

uint32_t eager_count(const Expr& e, size_t num_operands) {
  switch (e->kind) {
    case ExprKind::kIf: return 1;   // the condition
    case ExprKind::kLet: return 0;  // value, then body, evaluated by the Let itself
    default: return static_cast<uint32_t>(num_operands);
  }
}

std::unique_ptr<OpCall> plan_op_call(const CallNode& call) {
  auto plan = std::make_unique<OpCall>();
  plan->def = call.op();
  try {
    plan->attrs = plan->def->normalize(call.attrs);
  } catch (Error& e) {
    e.op(plan->def->name);
    throw;
  }
  plan->static_types = is_static_type(call.checked_type());
  for (const auto& a : call.args) plan->static_types = plan->static_types && is_static_type(a->checked_type());
  return plan;
}

}  // namespace

FramePlan build_frame_plan(const Expr& root, const FreeVarsFn& free_vars) {
  FramePlan plan;
  std::vector<std::pair<Expr, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [e, expanded] = std::move(stack.back());
    stack.pop_back();
    if (plan.ids.count(e.get())) continue;
    std::vector<Expr> operands = operand_exprs(e, free_vars);
    if (!expanded) {
      stack.emplace_back(e, true);
      for (auto it = operands.rbegin(); it != operands.rend(); ++it)
        if (!plan.ids.count(it->get())) stack.emplace_back(*it, false);
      continue;
    }
    auto id = static_cast<NodeId>(plan.nodes.size());
    plan.ids.emplace(e.get(), id);
    plan.nodes.push_back(e);
    std::vector<NodeId> operand_ids;
    operand_ids.reserve(operands.size());
    for (const auto& o : operands) operand_ids.push_back(plan.ids.at(o.get()));
    plan.eager.push_back(eager_count(e, operands.size()));
    plan.operands.push_back(std::move(operand_ids));
    const auto* call = as<CallNode>(e);
    plan.op_calls.push_back(call && call->op() ? plan_op_call(*call) : nullptr);
  }
  plan.users.assign(plan.nodes.size(), 0);
  for (const auto& ops : plan.operands)
    for (NodeId o : ops) ++plan.users[o];
  plan.root = plan.ids.at(root.get());
  return plan;
}

std::vector<Var> compute_free_vars(const FunctionNode& fn) {
  std::unordered_set<const ExprNode*> bound;
  for (const auto& p : fn.params) bound.insert(p.get());
  std::vector<Var> used;
  std::unordered_set<const ExprNode*> seen;
  post_order_visit(fn.body, [&](const Expr& e) {
    if (const auto* let = as<LetNode>(e)) bound.insert(let->var.get());
    if (const auto* inner = as<FunctionNode>(e))
      for (const auto& p : inner->params) bound.insert(p.get());
    if (e->kind == ExprKind::kVar && seen.insert(e.get()).second) used.push_back(as_var(e));
  });
  std::vector<Var> free;
  for (auto& v : used)
    if (!bound.count(v.get())) free.push_back(std::move(v));
  return free;
}

}  // namespace kiln::interp
