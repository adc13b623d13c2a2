#include "kiln/ir/visit.h"

#include <unordered_set>

#include "kiln/ir/op.h"
#include "kiln/support/error.h"

namespace kiln {

namespace {
// Children to traverse, honouring enter_functions.
std::vector<Expr> traversed_children(const Expr& e, bool enter_functions) {
  if (!enter_functions && e->kind == ExprKind::kFunction) return {};
  return children(e);
}
}  // namespace

namespace {
void visit_post_order(const Expr& root, const std::function<bool(const Expr&)>& prune,
                      const std::function<void(const Expr&)>& fn, bool enter_functions) {
  std::unordered_set<const ExprNode*> done;
  // Each frame: node and whether its children were already pushed.
  std::vector<std::pair<Expr, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [e, expanded] = stack.back();
    stack.pop_back();
    if (done.count(e.get())) continue;
    if (expanded) {
      done.insert(e.get());
      fn(e);
      continue;
    }
    if (prune && prune(e)) {
      done.insert(e.get());
      continue;
    }
    stack.emplace_back(e, true);
    auto kids = traversed_children(e, enter_functions);
    for (auto it = kids.rbegin(); it != kids.rend(); ++it)
      if (!done.count(it->get())) stack.emplace_back(*it, false);
  }
}
}  // namespace

void post_order_visit(const Expr& root, const std::function<void(const Expr&)>& fn, bool enter_functions) {
  visit_post_order(root, nullptr, fn, enter_functions);
}

void post_order_visit_pruned(const Expr& root, const std::function<bool(const Expr&)>& prune,
                             const std::function<void(const Expr&)>& fn) {
  visit_post_order(root, prune, fn, true);
}

Expr ExprRewriter::rewrite(const Expr& root) {
  post_order_visit(
      root,
      [&](const Expr& e) {
        auto kids = traversed_children(e, enter_functions());
        std::vector<Expr> new_kids;
        new_kids.reserve(kids.size());
        for (const auto& k : kids) new_kids.push_back(memo_.at(k.get()));
        Expr rebuilt = kids.empty() ? e : with_children(e, new_kids);
        // What post() makes in place of a node comes from the same model node; an error
        // it raises names that node and the op.
        SourceScope source(e->source.empty() ? current_source() : e->source);
        try {
          memo_[e.get()] = post(e, rebuilt);
        } catch (Error& error) {
          if (!e->source.empty()) error.node(e->source);
          const auto* call = as<CallNode>(e);
          if (const OpDef* op = call ? call->op() : nullptr) error.op(op->name);
          throw;
        }
      },
      enter_functions());
  return memo_.at(root.get());
}

}  // namespace kiln
