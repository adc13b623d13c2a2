// Small matchers the rewriting passes share.
#pragma once

#include "kiln/attrs/transform.h"
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

// No variable (function parameter or let) anywhere in `e`: FoldConstant computes it at build time.
inline bool variable_free(const Expr& e) {
  bool free = true;
  post_order_visit(e, [&](const Expr& node) {
    if (as<VarNode>(node)) free = false;
  });
  return free;
}

// reshape(x, newshape=shape).
inline Expr reshaped(Expr x, std::vector<int64_t> shape) {
  ReshapeAttrs attrs;
  attrs.newshape = std::move(shape);
  return call_op("reshape", {std::move(x)}, attrs);
}

}  // namespace kiln
