// Ops: nn.nll_loss.
// Relay's negative log-likelihood loss: predictions (N, C, d1 ... dk) hold log-probabilities,
// targets (N, d1 ... dk) class indices, weights (C) per-class weights (optional here; absent
// means all ones). Element loss = -weights[t] * predictions[n, t, d...], or 0 where
// t == ignore_index. 'reduction' "none" keeps the targets' shape; "sum" and "mean" give a
// scalar, "mean" dividing by the sum of the weights of the targets not ignored.
#include "kiln/attrs/nn.h"
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

void check_targets_shape(const TensorTypeNode& predictions, const TensorTypeNode& targets) {
  bool ranks_match = targets.ndim() + 1 == predictions.ndim();
  for (int64_t d = 0; ranks_match && d < targets.ndim(); ++d) {
    int64_t p = predictions.shape[d == 0 ? 0 : d + 1], t = targets.shape[d];
    ranks_match = p < 0 || t < 0 || p == t;
  }
  if (ranks_match) return;
  Shape expected = predictions.shape;
  expected.erase(expected.begin() + 1);
  throw std::move(Error(cat("argument 'targets' must have the shape of 'predictions' ", shape_str(predictions.shape),
                            " without its class axis 1"))
                      .expected(shape_str(expected), shape_str(targets.shape)));
}

// reduction is checked by NllLossAttrs::validate.
Type nll_loss_relation(const std::vector<Type>& args, const NllLossAttrs& attrs) {
  const TensorTypeNode& predictions = arg_tensor(args, 0, "predictions");
  check_float_arg(predictions, "predictions");
  if (predictions.ndim() < 2)
    throw std::move(Error("argument 'predictions' must have a batch and a class axis")
                        .expected("(N, C, d1 ... dk)", shape_str(predictions.shape)));
  const TensorTypeNode& targets = arg_tensor(args, 1, "targets");
  if (!is_int(targets.dtype))
    throw std::move(Error("argument 'targets' must hold integer class indices")
                        .expected("an integer dtype", std::string(dtype_name(targets.dtype))));
  check_targets_shape(predictions, targets);
  if (args.size() > 2) {
    const TensorTypeNode& weights = arg_tensor(args, 2, "weights");
    if (weights.dtype != predictions.dtype)
      throw std::move(
          Error("argument 'weights' must have the dtype of 'predictions'")
              .expected(std::string(dtype_name(predictions.dtype)), std::string(dtype_name(weights.dtype))));
    int64_t classes = predictions.shape[1];
    if (weights.ndim() != 1 || (classes >= 0 && weights.shape[0] >= 0 && weights.shape[0] != classes))
      throw std::move(
          Error(cat("argument 'weights' must have one value per class of 'predictions' ", shape_str(predictions.shape)))
              .expected(shape_str({classes}), shape_str(weights.shape)));
  }
  if (attrs.reduction == "none") return tensor_type(targets.shape, predictions.dtype);
  return tensor_type({}, predictions.dtype);
}

}  // namespace

void register_nn_loss_ops(OpRegistry& registry) {
  registry.add("nn.nll_loss")
      .describe(
          "Negative log-likelihood loss of log-probabilities 'predictions' (N, C, d...) at the class "
          "indices 'targets' (N, d...), weighted per class by 'weights' (C), skipping 'ignore_index'; "
          "'reduction' is none, sum or mean (divided by the sum of the weights used).")
      .arg("predictions")
      .arg("targets")
      .arg("weights", /*optional=*/true)
      .attrs<NllLossAttrs>()
      .set_relation<NllLossAttrs>(nll_loss_relation)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
