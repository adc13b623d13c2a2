// FuseLayerNorm: the layer normalisation that exporters below opset 17 spell out op by op (torch's
// nn.LayerNorm at opset 14) becomes one nn.layer_norm over the last axis:
//   %m = mean(%x, axis=[-1], keepdims=True);  %d = subtract(%x, %m);
//   %v = mean(power(%d, 2f), axis=[-1], keepdims=True);
//   %n = divide(%d, sqrt(add(%v, eps)));      add(multiply(%n, %gamma), %beta)
// -> nn.layer_norm(%x, %gamma, %beta, axis=-1, epsilon=eps), gamma and beta of the last axis'
// extent; without the multiply (gamma of ones, which SimplifyExpr removes) scale=False and a
// gamma of ones. Float32 only; the result equals the chain within rounding (the op multiplies by the
// reciprocal of the square root). Four kernels that each pass over the rows become one.
#include "kiln/attrs/nn.h"
#include "kiln/attrs/reduce.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"
#include "transform/expr_match.h"

namespace kiln {

namespace {

// A float scalar constant's value.
std::optional<double> scalar_value(const Expr& e) {
  const auto* c = as<ConstantNode>(e);
  if (!c || c->data.numel() != 1 || !is_float(c->data.dtype())) return std::nullopt;
  return c->data.at(0);
}

// mean(data, axis=[last], keepdims=True): its data, or null.
Expr last_axis_mean(const Expr& e) {
  const CallNode* mean = call_of(e, "mean");
  if (!mean) return nullptr;
  const auto attrs = attrs_from<ReduceAttrs>(mean->attrs, "mean");
  const TensorTypeNode* data = tensor_of(mean->args[0]);
  if (!data || data->ndim() == 0 || !attrs.keepdims || attrs.exclude || !attrs.axis || attrs.axis->size() != 1)
    return nullptr;
  const int64_t axis = attrs.axis->front(), last = static_cast<int64_t>(data->ndim()) - 1;
  return axis == -1 || axis == last ? mean->args[0] : nullptr;
}

// A vector of the last axis' extent (gamma or beta).
bool channel_vector(const Expr& e, int64_t extent) {
  const TensorTypeNode* t = tensor_of(e);
  return t && t->dtype == DType::kFloat32 && t->ndim() == 1 && t->shape[0] == extent;
}

class LayerNormFuser : public ExprRewriter {
 protected:
  Expr post(const Expr& original, const Expr& rebuilt) override {
    const CallNode* shift = call_of(original, "add");
    if (!shift) return rebuilt;
    // The multiply by gamma is gone when gamma was all ones (SimplifyExpr drops x * 1).
    const CallNode* scale = call_of(shift->args[0], "multiply");
    const CallNode* divide = call_of(scale ? scale->args[0] : shift->args[0], "divide");
    if (!divide) return rebuilt;
    const CallNode* deviation = call_of(divide->args[0], "subtract");
    const CallNode* root = call_of(divide->args[1], "sqrt");
    const CallNode* plus_eps = root ? call_of(root->args[0], "add") : nullptr;
    if (!deviation || !plus_eps) return rebuilt;
    const Expr x = deviation->args[0];
    const TensorTypeNode* xt = tensor_of(x);
    if (!xt || xt->dtype != DType::kFloat32 || xt->ndim() == 0 || xt->shape.back() < 0) return rebuilt;
    if (last_axis_mean(deviation->args[1]) != x) return rebuilt;
    const CallNode* square = call_of(last_axis_mean(plus_eps->args[0]), "power");
    const std::optional<double> two = square ? scalar_value(square->args[1]) : std::nullopt;
    const std::optional<double> epsilon = scalar_value(plus_eps->args[1]);
    if (!square || square->args[0] != divide->args[0] || two != 2.0 || !epsilon || *epsilon < 0) return rebuilt;
    const int64_t extent = xt->shape.back();
    const Expr beta = shift->args[1];
    if ((scale && !channel_vector(scale->args[1], extent)) || !channel_vector(beta, extent)) return rebuilt;
    LayerNormAttrs attrs;
    attrs.epsilon = *epsilon;
    attrs.scale = scale != nullptr;
    Expr gamma =
        scale ? rewritten(scale->args[1])
              : make_constant(NDArray::from_doubles({extent}, DType::kFloat32, std::vector<double>(extent, 1.0)));
    return call_op("nn.layer_norm", {rewritten(x), gamma, rewritten(beta)}, attrs);
  }
};

}  // namespace

IRModule fuse_layer_norm_pass(const IRModule& mod) {
  return map_functions(infer_types(mod), [](const Function& fn) {
    LayerNormFuser fuser;
    return as_function(fuser.rewrite(fn));
  });
}

}  // namespace kiln
