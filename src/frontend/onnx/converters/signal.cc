// Converters: DFT, STFT, HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix onto the
// signal.* ops. Lengths and window sizes must be known at import time; the window and mel
// ops then have no arguments, and the importer folds them into constants.
#include "kiln/attrs/signal.h"

#include "frontend/onnx/converters/converter_util.h"

namespace kiln::frontend {

namespace {

int64_t scalar_int_input(ConvertContext& c, size_t i, const std::string& what) {
  std::vector<int64_t> v = c.require_ints_input(i, what);
  check(v.size() == 1, what, " must be a scalar, found ", v.size(), " values");
  return v[0];
}

double scalar_float_input(ConvertContext& c, size_t i, const std::string& what) {
  NDArray v = c.require_constant_input(i, what);
  check(v.numel() == 1, what, " must be a scalar, found shape ", shape_str(v.shape()));
  return v.at(0);
}

// An axis of the signal (the input without its last, complex axis); negative values count
// from the back of the whole input, as in ONNX.
int64_t signal_axis(ConvertContext& c, int64_t axis) {
  int64_t rank = c.input_rank(0);
  int64_t signal_axis = axis < 0 ? axis + rank : axis;
  check(signal_axis >= 0 && signal_axis < rank - 1, "DFT axis ", axis, " is not a signal axis of input ",
        shape_str(c.input_shape(0)), " (the last axis holds real and imaginary parts)");
  return signal_axis;
}

// An optional scalar input; nullopt when absent.
std::optional<int64_t> optional_int_input(ConvertContext& c, size_t i, const std::string& what) {
  if (!c.has_input(i)) return std::nullopt;
  return scalar_int_input(c, i, what);
}

DftAttrs dft_attrs(ConvertContext& c, int64_t axis, size_t length_input) {
  return DftAttrs{.axis = signal_axis(c, axis),
                  .inverse = c.attrs().get_int("inverse", 0) != 0,
                  .onesided = c.attrs().get_int("onesided", 0) != 0,
                  .dft_length = optional_int_input(c, length_input, "dft_length")};
}

// Opset 17: input, dft_length; axis is an attribute.
ConvertResult convert_dft_v17(ConvertContext& c) {
  return call_op("signal.dft", {c.input(0)}, dft_attrs(c, c.attrs().get_int("axis", 1), 1));
}

// Opset 20: input, dft_length, axis (default -2).
ConvertResult convert_dft_v20(ConvertContext& c) {
  int64_t axis = c.has_input(2) ? scalar_int_input(c, 2, "axis") : -2;
  return call_op("signal.dft", {c.input(0)}, dft_attrs(c, axis, 1));
}

// signal, frame_step, window, frame_length.
ConvertResult convert_stft(ConvertContext& c) {
  StftAttrs attrs{.frame_step = scalar_int_input(c, 1, "frame_step"),
                  .frame_length = optional_int_input(c, 3, "frame_length"),
                  .onesided = c.attrs().get_int("onesided", 1) != 0};
  std::vector<Expr> args{c.input(0)};
  if (c.has_input(2)) args.push_back(c.input(2));
  return call_op("signal.stft", args, attrs);
}

std::string output_dtype(ConvertContext& c) {
  return dtype_name_of_onnx_type(c.attrs().get_int("output_datatype", 1), "output_datatype");
}

ConvertFn window(std::string op) {
  return [op = std::move(op)](ConvertContext& c) -> ConvertResult {
    return call_op(op, {},
                   CosineWindowAttrs{.window_length = scalar_int_input(c, 0, "size"),
                                     .periodic = c.attrs().get_int("periodic", 1) != 0,
                                     .dtype = output_dtype(c)});
  };
}

ConvertResult convert_mel_weight_matrix(ConvertContext& c) {
  return call_op("signal.mel_weight_matrix", {},
                 MelWeightMatrixAttrs{.num_mel_bins = scalar_int_input(c, 0, "num_mel_bins"),
                                      .dft_length = scalar_int_input(c, 1, "dft_length"),
                                      .sample_rate = scalar_int_input(c, 2, "sample_rate"),
                                      .lower_edge_hertz = scalar_float_input(c, 3, "lower_edge_hertz"),
                                      .upper_edge_hertz = scalar_float_input(c, 4, "upper_edge_hertz"),
                                      .dtype = output_dtype(c)});
}

}  // namespace

void register_signal_converters(ConverterRegistry& r) {
  r.add("DFT", 17, convert_dft_v17).add("DFT", 20, convert_dft_v20);
  r.add("STFT", 17, convert_stft);
  r.add("HannWindow", 17, window("signal.hann_window"));
  r.add("HammingWindow", 17, window("signal.hamming_window"));
  r.add("BlackmanWindow", 17, window("signal.blackman_window"));
  r.add("MelWeightMatrix", 17, convert_mel_weight_matrix);
}

}  // namespace kiln::frontend
