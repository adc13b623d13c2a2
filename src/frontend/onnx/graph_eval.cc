#include "frontend/onnx/graph_eval.h"

#include <map>
#include <utility>
#include <vector>

#include "kiln/interp/interpreter.h"
#include "kiln/ir/op.h"
#include "kiln/ir/visit.h"
#include "kiln/support/error.h"
#include "transform/substitute.h"

namespace kiln::frontend {

std::optional<NDArray> evaluate_at_import(const Expr& e, const std::unordered_map<const VarNode*, NDArray>& known) {
  std::map<const VarNode*, Expr> binding;
  bool closed = true;
  post_order_visit(e, [&](const Expr& node) {
    // A call without arguments counts as known, but a nondeterministic op (random draws,
    // the `unreachable` trap of an If branch that did not convert) must run when the
    // model runs, not once now.
    const auto* call = as<CallNode>(node);
    if (call && call->op() && call->op()->nondeterministic) closed = false;
    const auto* v = as<VarNode>(node);
    if (!v) return;
    auto it = known.find(v);
    if (it == known.end()) {
      closed = false;
    } else {
      binding.emplace(v, make_constant(it->second));
    }
  });
  if (!closed) return std::nullopt;
  try {
    Value value = interpret_expr(binding.empty() ? e : substitute(e, binding));
    if (!value.is_tensor()) return std::nullopt;
    return value.tensor();
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace kiln::frontend
