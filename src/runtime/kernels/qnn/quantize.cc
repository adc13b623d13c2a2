// Reference kernels: qnn.quantize, qnn.dequantize, qnn.requantize.
#include <cmath>

#include "kiln/attrs/qnn.h"
#include "runtime/kernels/qnn/quant_util.h"

namespace kiln {

namespace {

// The quotient data / scale in the data's own precision (float unless the data is double),
// as ONNX's reference and runtimes compute it, so ties round the same way.
double scaled(double x, double scale, bool in_double) {
  if (in_double) return x / scale;
  return static_cast<double>(static_cast<float>(x) / static_cast<float>(scale));
}

void quantize_kernel(const QuantizeAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray& data = inputs[0];
  const int64_t axis = attrs.axis;
  QuantParam scale(inputs[1], data.shape(), axis), zero_point(inputs[2], data.shape(), axis);
  NDArray& out = outputs[0];
  bool in_double = data.dtype() == DType::kFloat64;
  for (int64_t i = 0; i < data.numel(); ++i) {
    double q = round_with(scaled(data.at(i), scale(i), in_double), Rounding::kHalfToEven) + zero_point(i);
    out.set(i, saturate(q, out.dtype()));
  }
}

void dequantize_kernel(const DequantizeAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray& data = inputs[0];
  const int64_t axis = attrs.axis;
  QuantParam scale(inputs[1], data.shape(), axis), zero_point(inputs[2], data.shape(), axis);
  NDArray& out = outputs[0];
  for (int64_t i = 0; i < data.numel(); ++i)
    out.set(i, static_cast<double>(data.int_at(i) - static_cast<int64_t>(zero_point(i))) * scale(i));
}

void requantize_kernel(const RequantizeAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray& data = inputs[0];
  const Shape& shape = data.shape();
  const int64_t axis = attrs.axis;
  QuantParam in_scale(inputs[1], shape, axis), in_zero(inputs[2], shape, axis);
  QuantParam out_scale(inputs[3], shape, axis), out_zero(inputs[4], shape, axis);
  Rounding rule = parse_rounding(attrs.rounding);
  NDArray& out = outputs[0];
  for (int64_t i = 0; i < data.numel(); ++i) {
    double real = static_cast<double>(data.int_at(i) - static_cast<int64_t>(in_zero(i))) * in_scale(i);
    out.set(i, saturate(round_with(real / out_scale(i), rule) + out_zero(i), out.dtype()));
  }
}

}  // namespace

void register_qnn_quantize_kernels(KernelRegistry& registry) {
  registry.add<QuantizeAttrs>("qnn.quantize", quantize_kernel);
  registry.add<DequantizeAttrs>("qnn.dequantize", dequantize_kernel);
  registry.add<RequantizeAttrs>("qnn.requantize", requantize_kernel);
}

}  // namespace kiln
