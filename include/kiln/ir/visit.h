// Traversal and rewriting of expression DAGs. Both are iterative (an explicit stack),
// so a 50,000-node chain does not overflow the C++ stack, and both visit each shared
// node once, so shared sub-expressions stay shared after rewriting.
#pragma once

#include <functional>
#include <unordered_map>

#include "kiln/ir/expr.h"

namespace kiln {

// Calls fn on every node reachable from root, children before parents, each once.
// Function bodies are entered unless enter_functions is false.
void post_order_visit(const Expr& root, const std::function<void(const Expr&)>& fn, bool enter_functions = true);
// The same, skipping every node for which `prune` is true together with the part of the
// graph reachable only through it.
void post_order_visit_pruned(const Expr& root, const std::function<bool(const Expr&)>& prune,
                             const std::function<void(const Expr&)>& fn);

// Rewrites a DAG bottom-up. Override post() to replace nodes.
class ExprRewriter {
 public:
  virtual ~ExprRewriter() = default;
  Expr rewrite(const Expr& root);

 protected:
  // Called once per node, after its children; `rebuilt` is `original` with rewritten
  // children (the same pointer when none changed). Returns the replacement.
  virtual Expr post(const Expr& original, const Expr& rebuilt) {
    (void)original;
    return rebuilt;
  }
  virtual bool enter_functions() const { return true; }
  // The rewritten form of a node already visited (for use inside post()).
  const Expr& rewritten(const Expr& original) const { return memo_.at(original.get()); }

 private:
  std::unordered_map<const ExprNode*, Expr> memo_;
};

}  // namespace kiln
