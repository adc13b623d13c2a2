// Small matchers the rewriting passes share.
#pragma once

#include "kiln/ir/expr.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type.h"

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

}  // namespace kiln
