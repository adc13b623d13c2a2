// MoveBiasBeforeReshape: a bias added after a reshape of a matrix product moves before the
// reshape when the reshape keeps the last axis and the bias varies along that axis only:
//   add(%bias, reshape(nn.dense(%x, %w), newshape=[197, 1, 2304]))     bias (2304)
// -> reshape(add(%bias, nn.dense(%x, %w)), newshape=[197, 1, 2304])
// PackDenseWeights leaves torch's MultiheadAttention QKV projection this way (a 3-D matmul plus
// bias becomes reshape, dense_packed, reshape, then the add); moved, FuseOps fuses it into the
// product's epilogue instead of a kernel of its own passing over the whole projection again. The
// sums are the same (one addition per element, operands in the same order).
#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"
#include "transform/expr_match.h"

namespace kiln {

namespace {

bool is_product(const Expr& e) {
  for (const char* op : {"nn.dense", "nn.dense_packed", "nn.matmul", "nn.batch_matmul"})
    if (call_of(e, op)) return true;
  return false;
}

// A reshape of a product that keeps the (static) last axis: the product, or null.
const CallNode* reshaped_product(const Expr& e) {
  const CallNode* reshape = call_of(e, "reshape");
  if (!reshape || !is_product(reshape->args[0])) return nullptr;
  const TensorTypeNode* in = tensor_of(reshape->args[0]);
  const TensorTypeNode* out = tensor_of(e);
  if (!in || !out || in->ndim() == 0 || out->ndim() == 0 || in->shape.back() < 0 ||
      in->shape.back() != out->shape.back())
    return nullptr;
  return reshape;
}

// A bias along the last axis only, of no higher rank than `data`: (..., 1, n) or (n).
bool last_axis_bias(const Expr& e, const TensorTypeNode& data) {
  const TensorTypeNode* t = tensor_of(e);
  if (!t || t->dtype != data.dtype || t->ndim() == 0 || t->ndim() > data.ndim() || t->shape.back() != data.shape.back())
    return false;
  return std::all_of(t->shape.begin(), t->shape.end() - 1, [](int64_t d) { return d == 1; });
}

class BiasMover : public ExprRewriter {
 protected:
  Expr post(const Expr& original, const Expr& rebuilt) override {
    const CallNode* add = call_of(original, "add");
    if (!add || !tensor_of(original)) return rebuilt;
    for (size_t side = 0; side < 2; ++side) {
      const CallNode* reshape = reshaped_product(add->args[side]);
      const Expr& bias = add->args[1 - side];
      if (!reshape) continue;
      const TensorTypeNode* product = tensor_of(reshape->args[0]);
      // The sum must keep the reshape's shape: the bias broadcasts into it, not the other way.
      if (!last_axis_bias(bias, *product) || tensor_of(original)->shape != tensor_of(add->args[side])->shape) continue;
      std::vector<Expr> args(2);
      args[side] = rewritten(reshape->args[0]);
      args[1 - side] = rewritten(bias);
      return make_call(reshape->callee, {call_op("add", std::move(args))}, reshape->attrs);
    }
    return rebuilt;
  }
};

}  // namespace

IRModule move_bias_before_reshape_pass(const IRModule& mod) {
  return map_functions(infer_types(mod), [](const Function& fn) {
    BiasMover mover;
    return as_function(mover.rewrite(fn));
  });
}

}  // namespace kiln
