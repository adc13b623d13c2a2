// SimplifyInference: rewrites inference-time ops into plain arithmetic, as Relay does.
//   nn.batch_norm(x, gamma, beta, mean, var).0 -> x * scale + shift, where
//     scale = gamma / sqrt(var + eps) and shift = beta - mean * scale
//     (broadcast along `axis`); .1 and .2 become the moving mean and variance.
//   nn.dropout(x).0 -> x
#include "kiln/attrs/nn.h"
#include "kiln/attrs/transform.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"

namespace kiln {

namespace {

Expr scalar_of(DType dtype, double value) { return make_constant(NDArray::scalar(dtype, value)); }

// Reshapes a per-channel vector so that it broadcasts along `axis` of an ndim tensor.
Expr expand_to_axis(const Expr& v, int64_t axis, int64_t ndim) {
  int64_t trailing = ndim - 1 - axis;
  if (trailing <= 0) return v;
  return call_op("expand_dims", {v}, ExpandDimsAttrs{.axis = 1, .num_newaxis = trailing});
}

// `bn` has rewritten arguments, which are not typed yet; `data_type` is the type of the
// original call's data (a rewrite never changes a type).
Expr unpack_batch_norm(const CallNode& bn, const Type& data_type) {
  const BatchNormAttrs attrs = attrs_from<BatchNormAttrs>(bn.attrs, "nn.batch_norm");
  const Expr &data = bn.args[0], &gamma = bn.args[1], &beta = bn.args[2], &mean = bn.args[3], &var = bn.args[4];
  const TensorTypeNode& data_tensor = expect_tensor(data_type, "batch_norm data");
  int64_t ndim = data_tensor.ndim();
  int64_t axis = attrs.axis;
  if (axis < 0) axis += ndim;
  Expr scale =
      call_op("divide", {scalar_of(data_tensor.dtype, 1.0),
                         call_op("sqrt", {call_op("add", {var, scalar_of(data_tensor.dtype, attrs.epsilon)})})});
  if (attrs.scale) scale = call_op("multiply", {scale, gamma});
  Expr shift = call_op("multiply", {call_op("negative", {mean}), scale});
  if (attrs.center) shift = call_op("add", {shift, beta});
  Expr out = call_op("multiply", {data, expand_to_axis(scale, axis, ndim)});
  return call_op("add", {out, expand_to_axis(shift, axis, ndim)});
}

class InferenceSimplifier : public ExprRewriter {
 protected:
  Expr post(const Expr& original, const Expr& rebuilt) override {
    const auto* item = as<TupleGetItemNode>(rebuilt);
    const auto* call = item ? as<CallNode>(item->tuple) : nullptr;
    const OpDef* op = call ? call->op() : nullptr;
    if (!op) return rebuilt;
    if (op->name == "nn.dropout" && item->index == 0) return call->args[0];
    if (op->name == "nn.batch_norm") {
      if (item->index == 0)
        return unpack_batch_norm(*call, as<CallNode>(as<TupleGetItemNode>(original)->tuple)->args[0]->checked_type());
      return call->args[2 + item->index];  // .1 moving mean, .2 moving variance
    }
    return rebuilt;
  }
};

}  // namespace

IRModule simplify_inference_pass(const IRModule& mod) {
  infer_types(mod);  // the rewrite needs the data's rank and dtype
  return infer_types(
      map_functions(mod, [](const Function& fn) { return as_function(InferenceSimplifier().rewrite(fn)); }));
}

}  // namespace kiln
