// Small matchers the rewriting passes share.
#pragma once

#include <algorithm>
#include <unordered_map>

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

// How often each node of `fn` is used: once per reference from a parent, and the body once by
// the function, so a result is never taken for a value only one op reads.
inline std::unordered_map<const ExprNode*, size_t> use_counts(const Function& fn) {
  std::unordered_map<const ExprNode*, size_t> uses;
  post_order_visit(fn, [&](const Expr& e) {
    for (const Expr& child : children(e)) ++uses[child.get()];
  });
  return uses;
}

// A float32 tensor of static, non-empty shape.
inline bool static_nonempty_float32(const TensorTypeNode* t) {
  return t && t->dtype == DType::kFloat32 &&
         std::all_of(t->shape.begin(), t->shape.end(), [](int64_t d) { return d > 0; });
}

// A float32 tensor of one value per channel of the blocked output `out` (N, K/y, H, W, y): a
// per-channel bias after AlterOpLayout, (K/y, 1, 1, y) or with leading ones.
inline bool per_blocked_channel(const TensorTypeNode* bias, const TensorTypeNode* out) {
  if (!bias || !out || bias->dtype != DType::kFloat32 || bias->ndim() > 5 || !bias->is_static()) return false;
  Shape padded(5 - bias->ndim(), 1);
  padded.insert(padded.end(), bias->shape.begin(), bias->shape.end());
  return padded == Shape{1, out->shape[1], 1, 1, out->shape[4]};
}

// A per_blocked_channel bias as the (channels) vector a fused convolution call takes.
inline Expr bias_as_vector(const Expr& bias, int64_t channels) {
  ReshapeAttrs attrs;
  attrs.newshape = {channels};
  return call_op("reshape", {bias}, attrs);
}

// No variable (function parameter or let) in `e`: FoldConstant computes anything made of it.
inline bool variable_free(const Expr& e) {
  bool free = true;
  post_order_visit(e, [&](const Expr& node) {
    if (as<VarNode>(node)) free = false;
  });
  return free;
}

}  // namespace kiln
