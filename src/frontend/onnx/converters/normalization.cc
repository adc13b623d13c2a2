// Converters: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, InstanceNormalization, LRN,
// MeanVarianceNormalization.
//
// SoftmaxCrossEntropyLoss is log_softmax over the class axis followed by nn.nll_loss (as in
// TVM's frontend); MeanVarianceNormalization is spelled out with mean reductions.
#include <limits>

#include "frontend/onnx/converters/converter_util.h"
#include "kiln/attrs/nn.h"
#include "kiln/attrs/reduce.h"

namespace kiln::frontend {

namespace {

// ONNX ignores no class index when 'ignore_index' is absent; no index of a real class (nor
// any int32 target) equals the lowest int64.
constexpr int64_t kIgnoreNothing = std::numeric_limits<int64_t>::min();

AttrConverter nll_loss_attrs() {
  return AttrConverter("nn.nll_loss")
      .rename("reduction", "reduction", "mean")
      .rename("ignore_index", "ignore_index", kIgnoreNothing);
}

// (scores, labels[, weights]) -> nn.nll_loss on the log-probabilities.
std::vector<Expr> loss_args(ConvertContext& c, Expr predictions) {
  std::vector<Expr> args{std::move(predictions), c.input(1)};
  if (c.has_input(2)) args.push_back(c.input(2));
  return args;
}

ConvertResult convert_nll_loss(ConvertContext& c) { return nll_loss_attrs().call(c, loss_args(c, c.input(0))); }

// Outputs: the loss and, when asked for, the log-probabilities.
ConvertResult convert_softmax_cross_entropy(ConvertContext& c) {
  check(c.input_rank(0) >= 2, "scores must have a batch and a class axis, found shape ", shape_str(c.input_shape(0)));
  Expr log_prob = call_op("nn.log_softmax", {c.input(0)}, SoftmaxAttrs{.axis = 1});
  Expr loss = nll_loss_attrs().call(c, loss_args(c, log_prob));
  if (c.num_outputs() > 1) return std::vector<Expr>{loss, log_prob};
  return loss;
}

ConvertResult convert_instance_norm(ConvertContext& c) {
  return AttrConverter("nn.instance_norm")
      .rename("epsilon", "epsilon", 1e-5)
      .ignore("consumed_inputs")  // opset 1's legacy in-place hint
      .set("axis", int64_t{1})
      .call(c, {c.input(0), c.input(1), c.input(2)});
}

// ONNX's defaults differ from Relay's (bias 1, alpha 1e-4); both divide alpha by size.
ConvertResult convert_lrn(ConvertContext& c) {
  check(c.attrs().has("size"), "LRN needs the attribute 'size'");
  return AttrConverter("nn.lrn")
      .rename("size", "size")
      .rename("alpha", "alpha", 1e-4)
      .rename("beta", "beta", 0.75)
      .rename("bias", "bias", 1.0)
      .set("axis", int64_t{1})
      .call(c, {c.input(0)});
}

// (x - mean) / (sqrt(variance) + 1e-9) over 'axes', the epsilon of ONNX's function body.
// The variance is the mean of squared deviations, which loses less than E[x^2] - E[x]^2.
ConvertResult convert_mean_variance_norm(ConvertContext& c) {
  int64_t rank = c.input_rank(0);
  std::vector<int64_t> axes =
      normalize_onnx_axes(c.attrs().get_ints("axes", std::vector<int64_t>{0, 2, 3}), rank, "axes");
  const ReduceAttrs over_axes{.axis = axes, .keepdims = true};
  Expr x = c.input(0);
  Expr centered = call_op("subtract", {x, call_op("mean", {x}, over_axes)});
  Expr variance = call_op("mean", {call_op("multiply", {centered, centered})}, over_axes);
  Expr deviation = call_op("add", {call_op("sqrt", {variance}), scalar_constant(c.input_dtype(0), 1e-9)});
  return call_op("divide", {centered, deviation});
}

}  // namespace

void register_normalization_converters(ConverterRegistry& r) {
  r.add("NegativeLogLikelihoodLoss", 12, convert_nll_loss);
  r.add("SoftmaxCrossEntropyLoss", 12, convert_softmax_cross_entropy);
  r.add("InstanceNormalization", 1, convert_instance_norm);
  r.add("LRN", 1, convert_lrn);
  r.add("MeanVarianceNormalization", 9, convert_mean_variance_norm);
}

}  // namespace kiln::frontend
