// Ops: nn.relu, nn.leaky_relu, nn.prelu (elementwise activations) and nn.dropout.
//
// nn.dropout returns the 2-tuple (out, mask) as Relay does. kiln runs inference only, so
// out = data and mask is all ones; its pattern is opaque (as in Relay) so that fusion
// leaves it for SimplifyInference to remove.
#include "kiln/attrs/nn.h"
#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {
namespace {

TypeRelation activation_relation(const std::string& name, DTypeClass accepted) {
  return named_relation(name, [accepted](const std::vector<Type>& args, const Attrs&) {
    require_dtype("data", arg_tensor(args, 0, "data").dtype, accepted);
    return args[0];
  });
}

Type prelu_relation(const std::vector<Type>& args, const PReluAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& alpha = arg_tensor(args, 1, "alpha");
  require_dtype("data", data.dtype, DTypeClass::kFloat);
  require_same_dtype("data", data.dtype, "alpha", alpha.dtype);
  const int64_t axis = checked_axis(attrs.axis, "axis", data.shape);
  const int64_t channels = data.shape[static_cast<size_t>(axis)];
  const bool extent_ok =
      alpha.ndim() == 1 && (alpha.shape[0] == channels || alpha.shape[0] == kAnyDim || channels == kAnyDim);
  if (!extent_ok)
    throw std::move(Error(cat("argument 'alpha' of shape ", shape_str(alpha.shape), " does not match data shape ",
                              shape_str(data.shape), " at axis ", axis))
                        .expected(shape_str({channels}), shape_str(alpha.shape)));
  return args[0];
}

// rate is checked by DropoutAttrs::validate; inference does not use it.
Type dropout_relation(const std::vector<Type>& args, const DropoutAttrs&) {
  arg_tensor(args, 0, "data");
  return tuple_type({args[0], args[0]});
}

// NaN stays NaN in relu, as std::max(x, 0) in the reference kernel gives for x = NaN; the
// slope of leaky_relu (alpha) and prelu (alpha[channel]) scales negative values.
void add_activation_computes(OpRegistry& registry) {
  set_compute(registry.get_mutable("nn.relu"), elementwise_compute([](tir::PrimExpr v, const ComputeInput&) {
                const tir::PrimExpr zero = tir::make_const(v.dtype(), 0);
                return tir::select(tir::lt(v, zero), zero, v);
              }));
  set_compute<LeakyReluAttrs>(
      registry.get_mutable("nn.leaky_relu"), [](const ComputeInput& call, const LeakyReluAttrs& attrs) {
        return elementwise_compute([alpha_value = attrs.alpha](tir::PrimExpr v, const ComputeInput&) {
          const tir::PrimExpr alpha = tir::make_const(v.dtype(), alpha_value);
          return tir::select(tir::lt(v, tir::make_const(v.dtype(), 0)), alpha * v, v);
        })(call);
      });
  set_compute<PReluAttrs>(registry.get_mutable("nn.prelu"), [](const ComputeInput& call, const PReluAttrs& attrs) {
    const te::Tensor x = call.args[0], alpha = call.args[1];
    return std::vector<te::Tensor>{te::compute(x.shape(), call.name, [&](const te::Indices& i) {
      const tir::PrimExpr v = x(index_exprs(i)), zero = tir::make_const(v.dtype(), 0);
      return tir::select(tir::lt(v, zero), channel_read(alpha, i, attrs.axis) * v, v);
    })};
  });
}

}  // namespace

void register_nn_activation_ops(OpRegistry& registry) {
  registry.add("nn.relu")
      .describe("max(x, 0).")
      .arg("data")
      .set_relation(activation_relation("nn.relu", DTypeClass::kNumeric))
      .set_pattern(OpPattern::kElemwise);

  registry.add("nn.leaky_relu")
      .describe("x where x >= 0, alpha * x elsewhere.")
      .arg("data")
      .attrs<LeakyReluAttrs>()
      .set_relation(activation_relation("nn.leaky_relu", DTypeClass::kFloat))
      .set_pattern(OpPattern::kElemwise);

  registry.add("nn.prelu")
      .describe("x where x >= 0, alpha[c] * x elsewhere; alpha has shape (C,) with C = data.shape[axis].")
      .arg("data")
      .arg("alpha")
      .attrs<PReluAttrs>()
      .set_relation<PReluAttrs>(prelu_relation)
      .set_pattern(OpPattern::kBroadcast);

  registry.add("nn.dropout")
      .describe("Inference dropout: the tuple (data, mask of ones).")
      .arg("data")
      .attrs<DropoutAttrs>()
      .set_relation<DropoutAttrs>(dropout_relation)
      .set_pattern(OpPattern::kOpaque);
  add_activation_computes(registry);
}

}  // namespace kiln
