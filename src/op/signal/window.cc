// Ops: signal.hann_window, signal.hamming_window, signal.blackman_window (generalised
// cosine windows of window_length samples, periodic or symmetric) and
// signal.mel_weight_matrix (triangular mel filter bank, as ONNX's MelWeightMatrix). They
// take no arguments, so the ONNX importer folds them into constants.
#include "op/tensor/elemwise_checks.h"

namespace kiln {

namespace {

DType float_dtype_attr(const Attrs& attrs) {
  const std::string& name = attrs.get_string("dtype");
  DType t;
  if (!try_parse_dtype(name, &t) || t == DType::kBool)
    throw std::move(
        Error("attribute 'dtype' must be a numeric dtype").expected("e.g. \"float32\"", cat('"', name, '"')));
  return t;
}

int64_t attr_at_least(const Attrs& attrs, const std::string& name, int64_t minimum) {
  int64_t v = attrs.get_int(name);
  if (v < minimum)
    throw std::move(
        Error(cat("attribute '", name, "' must be at least ", minimum)).expected(cat(">= ", minimum), cat(v)));
  return v;
}

Type window_relation(const std::vector<Type>&, const Attrs& attrs) {
  return tensor_type({attr_at_least(attrs, "window_length", 0)}, float_dtype_attr(attrs));
}

Type mel_relation(const std::vector<Type>&, const Attrs& attrs) {
  int64_t bins = attr_at_least(attrs, "num_mel_bins", 1);
  int64_t dft_length = attr_at_least(attrs, "dft_length", 1);
  attr_at_least(attrs, "sample_rate", 1);
  double low = attrs.get_double("lower_edge_hertz"), high = attrs.get_double("upper_edge_hertz");
  if (!(low >= 0 && low < high))
    throw std::move(Error("the mel filter bank's edges must satisfy 0 <= lower_edge_hertz < upper_edge_hertz")
                        .expected("0 <= lower < upper", cat(low, " and ", high)));
  return tensor_type({dft_length / 2 + 1, bins}, float_dtype_attr(attrs));
}

void add_window_op(OpRegistry& registry, const std::string& name, const std::string& formula) {
  registry.add(name)
      .describe(cat("A window of window_length samples: ", formula,
                    ", with N = window_length when periodic, window_length - 1 when symmetric."))
      .required_attr("window_length", AttrKind::kInt)
      .attr("periodic", AttrKind::kBool, true)
      .attr("dtype", AttrKind::kString, "float32")
      .set_relation(named_relation(name, window_relation))
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
      .required_attr("num_mel_bins", AttrKind::kInt)
      .required_attr("dft_length", AttrKind::kInt)
      .required_attr("sample_rate", AttrKind::kInt)
      .required_attr("lower_edge_hertz", AttrKind::kFloat)
      .required_attr("upper_edge_hertz", AttrKind::kFloat)
      .attr("dtype", AttrKind::kString, "float32")
      .set_relation(named_relation("signal.mel_weight_matrix", mel_relation))
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
