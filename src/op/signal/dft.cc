// Ops: signal.dft and signal.stft. Complex tensors are real tensors whose last axis holds
// (real, imaginary); a real input may have a last axis of 1. Results are always complex.
#include "kiln/attrs/signal.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {

namespace {

// A signal (..., 1) or (..., 2) of a float dtype.
const TensorTypeNode& complex_arg(const std::vector<Type>& args, size_t i, const std::string& arg_name,
                                  int64_t min_rank, const std::string& layout) {
  const TensorTypeNode& t = arg_tensor(args, i, arg_name);
  require_dtype(arg_name, t.dtype, DTypeClass::kFloat);
  int64_t last = t.ndim() > 0 ? t.shape.back() : kAnyDim;
  if (t.ndim() < min_rank || (last != 1 && last != 2))
    throw std::move(Error(cat("argument '", arg_name, "' must be a real or complex signal ", layout,
                              " whose last axis holds 1 (real) or 2 (real, imaginary) values"))
                        .expected(layout, shape_str(t.shape)));
  return t;
}

int64_t onesided_bins(int64_t n) { return n / 2 + 1; }

// Lengths are checked positive by the declarations' validate().
Type dft_relation(const std::vector<Type>& args, const DftAttrs& attrs) {
  const TensorTypeNode& data = complex_arg(args, 0, "data", 2, "(..., n, 1 or 2)");
  Shape signal_axes(data.shape.begin(), data.shape.end() - 1);
  int64_t axis = checked_axis(attrs.axis, "axis", signal_axes);
  int64_t n = attrs.dft_length.value_or(data.shape[axis]);
  bool onesided = attrs.onesided;
  if (onesided && (attrs.inverse || data.shape.back() == 2))
    throw std::move(Error("a onesided DFT needs a real input and the forward transform")
                        .expected("real data (..., 1) and inverse=False",
                                  cat(shape_str(data.shape), ", inverse=", attrs.inverse ? "True" : "False")));
  Shape out = data.shape;
  out[axis] = onesided && n >= 0 ? onesided_bins(n) : n;
  out.back() = 2;
  return tensor_type(out, data.dtype);
}

Type stft_relation(const std::vector<Type>& args, const StftAttrs& attrs) {
  const TensorTypeNode& data = complex_arg(args, 0, "data", 3, "(batch, length, 1 or 2)");
  if (data.ndim() != 3)
    throw std::move(
        Error("argument 'data' must be a batch of signals").expected("(batch, length, 1 or 2)", shape_str(data.shape)));
  int64_t step = attrs.frame_step;
  int64_t length = attrs.frame_length.value_or(kAnyDim);
  if (args.size() > 1) {
    const TensorTypeNode& window = arg_tensor(args, 1, "window");
    require_same_dtype("data", data.dtype, "window", window.dtype);
    if (window.ndim() != 1 || (length >= 0 && window.shape[0] >= 0 && window.shape[0] != length))
      throw std::move(Error(cat("argument 'window' ", shape_str(window.shape), " must be a vector of frame_length"))
                          .expected(length >= 0 ? shape_str({length}) : "(frame_length,)", shape_str(window.shape)));
    if (length < 0) length = window.shape[0];
  } else if (!attrs.frame_length) {
    throw std::move(Error("signal.stft needs a window or the attribute 'frame_length'")
                        .expected("frame_length or a window argument", "neither"));
  }
  bool onesided = attrs.onesided;
  if (onesided && data.shape[2] == 2)
    throw std::move(Error("a onesided STFT needs a real signal").expected("(batch, length, 1)", shape_str(data.shape)));
  int64_t frames = kAnyDim;
  if (data.shape[1] >= 0 && length >= 0) {
    if (data.shape[1] < length)
      throw std::move(Error(cat("argument 'data' ", shape_str(data.shape), " is shorter than one frame"))
                          .expected(cat("length >= ", length), cat(data.shape[1])));
    frames = (data.shape[1] - length) / step + 1;
  }
  int64_t bins = length < 0 ? kAnyDim : onesided ? onesided_bins(length) : length;
  return tensor_type({data.shape[0], frames, bins, 2}, data.dtype);
}

}  // namespace

void register_signal_dft_ops(OpRegistry& registry) {
  registry.add("signal.dft")
      .describe(
          "Discrete Fourier transform along 'axis' of a real (..., 1) or complex (..., 2) signal, giving (..., 2). "
          "dft_length zero-pads or truncates the axis (None: its extent); inverse divides by n; onesided keeps the "
          "n/2+1 non-redundant bins of a real signal.")
      .arg("data")
      .attrs<DftAttrs>()
      .set_relation<DftAttrs>(dft_relation)
      .set_pattern(OpPattern::kOpaque);

  registry.add("signal.stft")
      .describe(
          "Short-time Fourier transform of data (batch, length, 1 or 2): frames of frame_length every frame_step "
          "samples, each multiplied by the optional window and transformed; result (batch, frames, bins, 2).")
      .arg("data")
      .arg("window", true)
      .attrs<StftAttrs>()
      .set_relation<StftAttrs>(stft_relation)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
