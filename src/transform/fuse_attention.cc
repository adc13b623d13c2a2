// FuseAttention: scaled dot-product attention as exporters spell it (torch's
// nn.MultiheadAttention, nn.TransformerEncoder, BERT-style layers with an additive mask),
//   %s = nn.matmul(%q, %k_t);  [%s = multiply(%s, c);]  [%s = add(%s, %mask);]
//   %p = nn.softmax(%s, axis=-1);  nn.matmul(%p, %v)
// becomes nn.attention(%q, %k, %v[, %mask], scale=c), which never stores the whole score
// matrix. The op reads the keys as rows (..., Sk, D): %k_t = transpose(%x, axes) (the heads split
// off a projection) becomes %k = transpose(%x, axes with the last two swapped), or %x itself when
// that is the identity, so the copy that transposed the keys goes; any other %k_t gets a transpose. Both products are
// plain matmuls of operands with the same batch axes, c a scalar constant (either side of the multiply), the mask
// either side of the add. A divide of the scores stays outside the pattern (x / c and x * (1 / c) differ in the last
// bit); torch scales the query instead, which also stays. The op repeats the chain's arithmetic, so the result is the
// same.
#include "kiln/attrs/attention.h"
#include "kiln/attrs/nn.h"
#include "kiln/attrs/transform.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"
#include "transform/expr_match.h"

namespace kiln {

namespace {

// nn.matmul of two matrices with the same batch axes and no transposes: the call, or null.
const CallNode* plain_matmul(const Expr& e) {
  const CallNode* call = call_of(e, "nn.matmul");
  if (!call) return nullptr;
  const auto attrs = attrs_from<MatmulAttrs>(call->attrs, "nn.matmul");
  if (attrs.transpose_a || attrs.transpose_b || !attrs.out_dtype.empty()) return nullptr;
  const TensorTypeNode* a = tensor_of(call->args[0]);
  const TensorTypeNode* b = tensor_of(call->args[1]);
  if (!a || !b || a->ndim() < 2 || a->ndim() != b->ndim() || !is_float(a->dtype)) return nullptr;
  for (int64_t d = 0; d + 2 < a->ndim(); ++d)
    if (a->shape[d] != b->shape[d] || a->shape[d] < 0) return nullptr;
  return call;
}

// A float scalar constant's value.
std::optional<double> scalar_value(const Expr& e) {
  const auto* c = as<ConstantNode>(e);
  if (!c || c->data.numel() != 1 || !is_float(c->data.dtype())) return std::nullopt;
  return c->data.at(0);
}

// The scores' chain below the softmax: the product and what was added or multiplied.
struct Scores {
  const CallNode* product = nullptr;
  double scale = 1.0;
  Expr mask;
};

std::optional<Scores> scores_of(const Expr& logits) {
  Scores s;
  Expr e = logits;
  if (const CallNode* add = call_of(e, "add")) {
    // The operand that is not the (scaled) product is the mask.
    for (size_t i = 0; i < 2 && !s.mask; ++i) {
      const Expr& x = add->args[i];
      if (plain_matmul(x) || call_of(x, "multiply")) {
        e = x;
        s.mask = add->args[1 - i];
      }
    }
    if (!s.mask) return std::nullopt;
  }
  if (const CallNode* mul = call_of(e, "multiply")) {
    for (size_t i = 0; i < 2; ++i)
      if (plain_matmul(mul->args[i]) && scalar_value(mul->args[1 - i])) {
        s.scale = *scalar_value(mul->args[1 - i]);
        e = mul->args[i];
        break;
      }
  }
  s.product = plain_matmul(e);
  if (!s.product) return std::nullopt;
  // The mask must be a tensor of the scores' dtype that broadcasts to them without growing them.
  const TensorTypeNode* scores = tensor_of(e);
  if (s.mask) {
    const TensorTypeNode* mask = tensor_of(s.mask);
    const TensorTypeNode* sum = tensor_of(logits);
    if (!mask || !scores || !sum || mask->dtype != scores->dtype || mask->ndim() > scores->ndim() ||
        sum->shape != scores->shape)
      return std::nullopt;
  }
  return s;
}

// The keys as rows: k_t (..., D, Sk) with its last two axes swapped, folded into the transpose
// that made it.
Expr key_rows(const Expr& k_t, size_t ndim, const Expr& rewritten_k_t) {
  std::vector<int64_t> axes(ndim);
  for (size_t d = 0; d < ndim; ++d) axes[d] = static_cast<int64_t>(d);
  std::swap(axes[ndim - 1], axes[ndim - 2]);
  Expr source = rewritten_k_t;
  if (const CallNode* t = call_of(k_t, "transpose")) {
    const auto attrs = attrs_from<TransposeAttrs>(t->attrs, "transpose");
    if (attrs.axes && attrs.axes->size() == ndim) {
      std::vector<int64_t> composed = *attrs.axes;
      for (auto& a : composed)
        if (a < 0) a += static_cast<int64_t>(ndim);
      std::swap(composed[ndim - 1], composed[ndim - 2]);
      axes = composed;
      source = as<CallNode>(rewritten_k_t) ? as<CallNode>(rewritten_k_t)->args[0] : nullptr;
    }
  }
  if (!source) return nullptr;
  bool identity = true;
  for (size_t d = 0; d < ndim; ++d) identity = identity && axes[d] == static_cast<int64_t>(d);
  if (identity) return source;
  TransposeAttrs attrs;
  attrs.axes = axes;
  return call_op("transpose", {source}, attrs);
}

// reshape(transpose(nn.attention(...), axes=[1, 0, 2]), (Sq, heads * Dv)) of 3-D operands (torch
// merging the heads back into the features): the attention writing its rows that way, or null.
// The types are the original's (the attention is new).
Expr attention_rows_outer(const Expr& original, const Expr& rebuilt) {
  const CallNode* reshape = call_of(original, "reshape");
  const CallNode* before = reshape ? call_of(reshape->args[0], "transpose") : nullptr;
  const CallNode* r = before ? call_of(rebuilt, "reshape") : nullptr;
  const CallNode* t = r ? call_of(r->args[0], "transpose") : nullptr;
  const CallNode* attention = t ? call_of(t->args[0], "nn.attention") : nullptr;
  if (!attention) return nullptr;
  const auto axes = attrs_from<TransposeAttrs>(t->attrs, "transpose").axes;
  auto attrs = attrs_from<AttentionAttrs>(attention->attrs, "nn.attention");
  const TensorTypeNode* heads = tensor_of(before->args[0]);
  const TensorTypeNode* merged = tensor_of(original);
  if (!axes || *axes != std::vector<int64_t>{1, 0, 2} || attrs.rows_outer || !heads || heads->ndim() != 3 || !merged ||
      merged->shape != Shape{heads->shape[1], heads->shape[0] * heads->shape[2]})
    return nullptr;
  attrs.rows_outer = true;
  return call_op("nn.attention", attention->args, attrs);
}

class AttentionFuser : public ExprRewriter {
 protected:
  Expr post(const Expr& original, const Expr& rebuilt) override {
    if (Expr merged = attention_rows_outer(original, rebuilt)) return merged;
    const CallNode* output = plain_matmul(original);
    const CallNode* softmax = output ? call_of(output->args[0], "nn.softmax") : nullptr;
    if (!softmax) return rebuilt;
    const TensorTypeNode* probs = tensor_of(output->args[0]);
    const int64_t axis = attrs_from<SoftmaxAttrs>(softmax->attrs, "nn.softmax").axis;
    if (!probs || (axis != -1 && axis != static_cast<int64_t>(probs->ndim()) - 1)) return rebuilt;
    const std::optional<Scores> s = scores_of(softmax->args[0]);
    if (!s) return rebuilt;
    const TensorTypeNode* q = tensor_of(s->product->args[0]);
    const TensorTypeNode* v = tensor_of(output->args[1]);
    if (q->ndim() != v->ndim() || q->dtype != v->dtype) return rebuilt;
    for (int64_t d = 0; d + 2 < q->ndim(); ++d)
      if (q->shape[d] != v->shape[d]) return rebuilt;
    const Expr key = key_rows(s->product->args[1], static_cast<size_t>(q->ndim()), rewritten(s->product->args[1]));
    if (!key) return rebuilt;
    std::vector<Expr> args = {rewritten(s->product->args[0]), key, rewritten(output->args[1])};
    if (s->mask) args.push_back(rewritten(s->mask));
    AttentionAttrs attrs;
    attrs.scale = s->scale;
    return call_op("nn.attention", args, attrs);
  }
};

}  // namespace

IRModule fuse_attention_pass(const IRModule& mod) {
  return map_functions(infer_types(mod), [](const Function& fn) {
    AttentionFuser fuser;
    return as_function(fuser.rewrite(fn));
  });
}

}  // namespace kiln
