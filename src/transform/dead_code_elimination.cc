// DeadCodeElimination: drops what no result depends on, as Relay's DeadCodeElimination
// does, in every function body (nested ones too):
//   let %x = value; body   ->  body          when %x is not used (also inside nested functions)
//   (a, b).1               ->  b             when the tuple is built in place
//   if (True) { a } else { b }  ->  a        when the condition is a constant
// Graph-form bindings (`%N = ...`) need no pass: a node nothing refers to is not in the DAG.
//
// Every value is treated as pure, nondeterministic ops included. A random op draws from a
// generator of its own per call (seeded by its attribute or fresh), so dropping an unused draw
// changes no other draw; `unreachable` fails only to report a value that was needed, and an
// unused one is not. So an unused draw is dropped like any other value (CSE, unlike this
// pass, must never merge them).
//
// The work is three linear sweeps, so 50,000-deep let chains need no stack: the in-place
// simplifications first (they remove uses), then a worklist that finds the let variables
// used from what is still reachable (a let's value is reached only once its variable is),
// then a rewrite dropping the other lets.
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kiln/ir/visit.h"
#include "kiln/support/error.h"
#include "kiln/transform/pass.h"

namespace kiln {

namespace {

class InPlaceSimplifier : public ExprRewriter {
 protected:
  Expr post(const Expr&, const Expr& rebuilt) override {
    if (const auto* item = as<TupleGetItemNode>(rebuilt)) {
      const auto* tuple = as<TupleNode>(item->tuple);
      // An index out of range is left for type inference to report.
      if (!tuple || item->index < 0 || static_cast<size_t>(item->index) >= tuple->fields.size()) return rebuilt;
      return tuple->fields[static_cast<size_t>(item->index)];
    }
    if (const auto* branch = as<IfNode>(rebuilt)) {
      const auto* cond = as<ConstantNode>(branch->cond);
      // A condition that is not a single value fails type inference; leave it to report that.
      if (!cond || cond->data.numel() != 1) return rebuilt;
      return cond->data.at(0) != 0 ? branch->then_branch : branch->else_branch;
    }
    return rebuilt;
  }
};

// The let variables used from what remains reachable from `root` once unused lets are gone:
// the least fixed point, found by reaching a let's value only when its variable is reached.
std::unordered_set<const VarNode*> used_let_vars(const Expr& root) {
  std::unordered_set<const ExprNode*> reached;
  std::unordered_set<const VarNode*> used;
  std::unordered_map<const VarNode*, std::vector<Expr>> waiting;  // values of lets not yet used
  std::vector<Expr> stack{root};
  while (!stack.empty()) {
    Expr e = std::move(stack.back());
    stack.pop_back();
    if (!reached.insert(e.get()).second) continue;
    if (const auto* let = as<LetNode>(e)) {
      stack.push_back(let->body);
      if (used.count(let->var.get()))
        stack.push_back(let->value);
      else
        waiting[let->var.get()].push_back(let->value);
      continue;
    }
    if (const auto* var = as<VarNode>(e)) {
      used.insert(var);
      auto it = waiting.find(var);
      if (it != waiting.end()) {
        for (Expr& value : it->second) stack.push_back(std::move(value));
        waiting.erase(it);
      }
      continue;
    }
    for (Expr& child : children(e)) stack.push_back(std::move(child));
  }
  return used;
}

class UnusedLetRemover : public ExprRewriter {
 public:
  explicit UnusedLetRemover(std::unordered_set<const VarNode*> used) : used_(std::move(used)) {}

 protected:
  Expr post(const Expr&, const Expr& rebuilt) override {
    const auto* let = as<LetNode>(rebuilt);
    return let && !used_.count(let->var.get()) ? let->body : rebuilt;
  }

 private:
  std::unordered_set<const VarNode*> used_;
};

Function eliminate_dead_code(const Function& fn) {
  Expr simplified = InPlaceSimplifier().rewrite(fn);
  Function out = as_function(UnusedLetRemover(used_let_vars(simplified)).rewrite(simplified));
  if (!out) throw Error::bug("DeadCodeElimination turned a function into another kind of expression");
  return out;
}

}  // namespace

IRModule dead_code_elimination_pass(const IRModule& mod) { return map_functions(mod, eliminate_dead_code); }

}  // namespace kiln
