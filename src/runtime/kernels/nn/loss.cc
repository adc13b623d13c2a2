// Reference kernels: nn.nll_loss.
// Predictions are seen as (N, C, inner) and targets as (N, inner). Sums are kept in double
// so that "mean" over many elements stays within ONNX's tolerances.
#include "kiln/attrs/nn.h"
#include "runtime/kernels/nn/compute_view.h"

namespace kiln {

namespace {

struct NllShape {
  int64_t batch, classes, inner;
};

NllShape nll_shape(const Shape& predictions) {
  check(predictions.size() >= 2, "nn.nll_loss: predictions need a batch and a class axis");
  NllShape s{predictions[0], predictions[1], 1};
  for (size_t d = 2; d < predictions.size(); ++d) s.inner *= predictions[d];
  return s;
}

void nll_loss_kernel(const NllLossAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray& targets = inputs[1];
  const NllShape s = nll_shape(inputs[0].shape());
  const int64_t ignore_index = attrs.ignore_index;
  const std::string& reduction = attrs.reduction;
  ConstView<double> predictions(inputs[0]);
  std::vector<double> weights(static_cast<size_t>(s.classes), 1.0);
  if (inputs.size() > 2) weights = inputs[2].to_doubles();
  std::vector<double> losses(static_cast<size_t>(targets.numel()), 0.0);
  double loss_sum = 0, weight_sum = 0;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t i = 0; i < s.inner; ++i) {
      const int64_t at = n * s.inner + i;
      const int64_t t = targets.int_at(at);
      if (t == ignore_index) continue;
      if (t < 0 || t >= s.classes)
        throw std::move(Error(cat("nn.nll_loss: target ", t, " at flat index ", at, " is not a class index"))
                            .expected(cat("0 ... ", s.classes - 1, " or ignore_index ", ignore_index), cat(t)));
      const double w = weights[static_cast<size_t>(t)];
      losses[static_cast<size_t>(at)] = -w * predictions.data()[(n * s.classes + t) * s.inner + i];
      loss_sum += losses[static_cast<size_t>(at)];
      weight_sum += w;
    }
  OutView<double> out(outputs[0]);
  if (reduction == "none")
    std::copy(losses.begin(), losses.end(), out.data());
  else
    out.data()[0] = reduction == "sum" ? loss_sum : loss_sum / weight_sum;  // 0/0 = NaN when all are ignored
  out.commit();
}

}  // namespace

void register_nn_loss_kernels(KernelRegistry& registry) { registry.add<NllLossAttrs>("nn.nll_loss", nll_loss_kernel); }

}  // namespace kiln
