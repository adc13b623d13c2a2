// Small matchers the rewriting passes share.
#pragma once

#include <unordered_map>

#include "kiln/ir/expr.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type.h"
#include "kiln/ir/visit.h"

namespace kiln {

// `e` as a call of the op named `op`, or null.
inline const CallNode* call_of(const Expr& e, const char* op) {
  const auto* call = as<CallNode>(e);
  return call && call->op() && call->op()->name == op ? call : nullptr;
}

// `e`'s checked type as a tensor type, or null when untyped or not a tensor.
inline const TensorTypeNode* tensor_of(const Expr& e) {
  return e->checked_type() ? as_tensor(e->checked_type()) : nullptr;
}

// How often each node of `fn` is used: once per reference from a parent, and the body once by
// the function, so a result is never taken for a value only one op reads.
inline std::unordered_map<const ExprNode*, size_t> use_counts(const Function& fn) {
  std::unordered_map<const ExprNode*, size_t> uses;
  post_order_visit(fn, [&](const Expr& e) {
    for (const Expr& child : children(e)) ++uses[child.get()];
  });
  return uses;
}

}  // namespace kiln
