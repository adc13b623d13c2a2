// Ops: nn.lrn.
// Relay's local response normalisation across channels:
//   out[c] = data[c] / (bias + alpha / size * sum of data[c']^2 over the window)^beta,
// the window along 'axis' running from c - (size - 1) / 2 to c + size / 2 (ONNX's floor/ceil
// split, which is Relay's symmetric window for odd sizes), clipped to the tensor.
#include "kiln/attrs/nn.h"
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

// size is checked by LrnAttrs::validate.
Type lrn_relation(const std::vector<Type>& args, const LrnAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  check_float_arg(data, "data");
  if (data.ndim() == 0)
    throw std::move(Error("argument 'data' must have at least 1 dimension").expected("(..., C, ...)", "()"));
  normalize_axis(attrs.axis, data.ndim(), cat("attribute 'axis' of 'data' ", shape_str(data.shape)));
  return args[0];
}

}  // namespace

void register_nn_lrn_ops(OpRegistry& registry) {
  registry.add("nn.lrn")
      .describe(
          "Local response normalisation: data / (bias + alpha / size * window sum of data^2)^beta, "
          "the window of 'size' elements along 'axis'.")
      .arg("data")
      .attrs<LrnAttrs>()
      .set_relation<LrnAttrs>(lrn_relation)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
