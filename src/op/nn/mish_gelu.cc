// Ops: nn.mish, nn.gelu (elementwise activations of ONNX opsets 18 and 20).
//
// Both computes use the reference kernels' formulas (src/runtime/kernels/nn/mish_gelu.cc):
// softplus as max(x, 0) + log(1 + exp(-|x|)), which neither overflows for large x nor
// needs a log1p intrinsic, and Gelu's exact form through erf.
#include <cmath>

#include "kiln/attrs/activation.h"
#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {
namespace {

Type float_activation_relation(const std::vector<Type>& args) {
  require_dtype("data", arg_tensor(args, 0, "data").dtype, DTypeClass::kFloat);
  return args[0];
}

tir::PrimExpr constant_like(const tir::PrimExpr& v, double value) { return tir::make_const(v.dtype(), value); }

tir::PrimExpr softplus(const tir::PrimExpr& v) {
  const tir::PrimExpr zero = constant_like(v, 0), one = constant_like(v, 1);
  const tir::PrimExpr positive = tir::select(tir::lt(v, zero), zero, v);
  const tir::PrimExpr minus_abs = tir::select(tir::lt(v, zero), v, -v);
  return positive + tir::call("log", {one + tir::call("exp", {minus_abs})});
}

tir::PrimExpr gelu(const tir::PrimExpr& v, bool tanh_form) {
  const tir::PrimExpr half_x = constant_like(v, 0.5) * v, one = constant_like(v, 1);
  if (!tanh_form) return half_x * (one + tir::call("erf", {v * constant_like(v, M_SQRT1_2)}));
  const tir::PrimExpr inner = constant_like(v, std::sqrt(2.0 / M_PI)) * (v + constant_like(v, 0.044715) * v * v * v);
  return half_x * (one + tir::call("tanh", {inner}));
}

void add_computes(OpRegistry& registry) {
  set_compute(registry.get_mutable("nn.mish"), elementwise_compute([](tir::PrimExpr v, const ComputeInput&) {
                return v * tir::call("tanh", {softplus(v)});
              }));
  set_compute<GeluAttrs>(registry.get_mutable("nn.gelu"), [](const ComputeInput& call, const GeluAttrs& attrs) {
    return elementwise_compute(
        [tanh_form = attrs.tanh()](tir::PrimExpr v, const ComputeInput&) { return gelu(v, tanh_form); })(call);
  });
}

}  // namespace

void register_nn_mish_gelu_ops(OpRegistry& registry) {
  registry.add("nn.mish")
      .describe("x * tanh(softplus(x)) with softplus(x) = log(1 + exp(x)).")
      .arg("data")
      .set_relation(named_relation(
          "nn.mish", [](const std::vector<Type>& args, const Attrs&) { return float_activation_relation(args); }))
      .set_pattern(OpPattern::kElemwise);

  registry.add("nn.gelu")
      .describe("Gaussian error linear unit x * Phi(x), exact (erf) or with the tanh approximation.")
      .arg("data")
      .attrs<GeluAttrs>()
      .set_relation<GeluAttrs>(
          [](const std::vector<Type>& args, const GeluAttrs&) { return float_activation_relation(args); })
      .set_pattern(OpPattern::kElemwise);
  add_computes(registry);
}

}  // namespace kiln
