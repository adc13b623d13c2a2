// Ops: signal.hann_window, signal.hamming_window, signal.blackman_window (generalised
// cosine windows of window_length samples, periodic or symmetric) and
// signal.mel_weight_matrix (triangular mel filter bank, as ONNX's MelWeightMatrix). They
// take no arguments, so the ONNX importer folds them into constants.
#include "kiln/attrs/dtype_attr.h"
#include "kiln/attrs/signal.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {

namespace {

// The values are checked by the declarations' validate().
Type window_relation(const std::vector<Type>&, const CosineWindowAttrs& attrs) {
  return tensor_type({attrs.window_length}, parse_dtype_attr("dtype", attrs.dtype));
}

Type mel_relation(const std::vector<Type>&, const MelWeightMatrixAttrs& attrs) {
  return tensor_type({attrs.dft_length / 2 + 1, attrs.num_mel_bins}, parse_dtype_attr("dtype", attrs.dtype));
}

void add_window_op(OpRegistry& registry, const std::string& name, const std::string& formula) {
  registry.add(name)
      .describe(cat("A window of window_length samples: ", formula,
                    ", with N = window_length when periodic, window_length - 1 when symmetric."))
      .attrs<CosineWindowAttrs>()
      .set_relation<CosineWindowAttrs>(window_relation)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace

void register_signal_window_ops(OpRegistry& registry) {
  add_window_op(registry, "signal.hann_window", "w[n] = 0.5 - 0.5 cos(2 pi n / N)");
  add_window_op(registry, "signal.hamming_window", "w[n] = 25/46 - 21/46 cos(2 pi n / N)");
  add_window_op(registry, "signal.blackman_window", "w[n] = 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)");
  registry.add("signal.mel_weight_matrix")
      .describe(
          "The (dft_length / 2 + 1, num_mel_bins) matrix mapping a onesided spectrum to mel bins: triangular "
          "filters with edges equally spaced on the mel scale between lower_edge_hertz and upper_edge_hertz, "
          "as ONNX's MelWeightMatrix.")
      .attrs<MelWeightMatrixAttrs>()
      .set_relation<MelWeightMatrixAttrs>(mel_relation)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
