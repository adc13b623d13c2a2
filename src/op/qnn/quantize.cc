// Ops: qnn.quantize, qnn.dequantize, qnn.requantize. Scales and zero points are arguments
// (as in Relay), per tensor or per channel along `axis`. Rounding of quantize is half to
// even (ONNX); requantize's `rounding` picks the rule, Relay's UPWARD by default.
//
// Computes: elementwise, in the reference kernels' arithmetic (quantize divides in the data's
// precision, the rest is double) so that generated code gives the same integers.
#include "kiln/attrs/qnn.h"
#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/qnn/qnn_util.h"

namespace kiln {

namespace {

// Extent of the channel axis for per-channel parameters; the axis must exist unless the
// data is a scalar (then only per-tensor parameters fit).
int64_t channel_extent(int64_t axis, const TensorTypeNode& data) {
  if (data.ndim() == 0) return kNoChannels;
  return data.shape[checked_axis(axis, "axis", data.shape)];
}

Type quantize_relation(const std::vector<Type>& args, const QuantizeAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  require_dtype("data", data.dtype, DTypeClass::kFloat);
  int64_t channels = channel_extent(attrs.axis, data);
  check_quant_param(args, 1, "output_scale", true, channels, "channel of the axis");
  check_quant_param(args, 2, "output_zero_point", false, channels, "channel of the axis");
  return tensor_type(data.shape, parse_quantized_dtype("out_dtype", attrs.out_dtype));
}

// out_dtype is checked by DequantizeAttrs::validate.
Type dequantize_relation(const std::vector<Type>& args, const DequantizeAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  if (!is_int(data.dtype))
    throw std::move(Error("argument 'data' must hold quantized integers")
                        .expected("an integer dtype", std::string(dtype_name(data.dtype))));
  int64_t channels = channel_extent(attrs.axis, data);
  check_quant_param(args, 1, "input_scale", true, channels, "channel of the axis");
  check_quant_param(args, 2, "input_zero_point", false, channels, "channel of the axis");
  return tensor_type(data.shape, parse_dtype_attr("out_dtype", attrs.out_dtype));
}

// rounding is checked by RequantizeAttrs::validate.
Type requantize_relation(const std::vector<Type>& args, const RequantizeAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  if (!is_int(data.dtype))
    throw std::move(Error("argument 'data' must hold quantized integers")
                        .expected("an integer dtype", std::string(dtype_name(data.dtype))));
  int64_t channels = channel_extent(attrs.axis, data);
  check_quant_param(args, 1, "input_scale", true, channels, "channel of the axis");
  check_quant_param(args, 2, "input_zero_point", false, channels, "channel of the axis");
  check_quant_param(args, 3, "output_scale", true, channels, "channel of the axis");
  check_quant_param(args, 4, "output_zero_point", false, channels, "channel of the axis");
  return tensor_type(data.shape, parse_quantized_dtype("out_dtype", attrs.out_dtype));
}

// ----- computes -----

using tir::PrimExpr;

// The parameter `p` (a scalar, one value, or one value per index along `axis`) for output `i`.
PrimExpr param_read(const te::Tensor& p, const te::Indices& i, int64_t axis) {
  if (p.ndim() == 0) return p(std::vector<PrimExpr>{});
  return channel_read(p, i, axis);
}

PrimExpr as_f64(const PrimExpr& v) { return tir::cast(DType::kFloat64, v); }

// Rounding of the reference kernels' round_with (quant_util.cc), on float64.
PrimExpr round_by(const PrimExpr& v, const std::string& rule) {
  const PrimExpr half = tir::float_imm(0.5, DType::kFloat64), one = tir::float_imm(1, DType::kFloat64);
  if (rule == "UPWARD") return tir::call("floor", {v + half});
  if (rule == "TONEAREST") {  // std::round: ties away from zero, exact (v - trunc(v) has no rounding)
    PrimExpr t = tir::call("trunc", {v});
    PrimExpr away = tir::select(tir::lt(v, tir::float_imm(0, DType::kFloat64)), t - one, t + one);
    return tir::select(tir::ge(tir::call("fabs", {v - t}), half), away, t);
  }
  return tir::call("round", {v});  // nearbyint: half to even
}

int64_t axis_of(int64_t axis, const te::Tensor& data) {
  return axis < 0 ? axis + static_cast<int64_t>(data.ndim()) : axis;
}

// The sums below are whole numbers, so saturating_cast's truncation leaves them exact.
std::vector<te::Tensor> quantize_compute(const ComputeInput& call, const QuantizeAttrs& attrs) {
  const te::Tensor &x = call.args.at(0), &scale = call.args.at(1), &zero_point = call.args.at(2);
  const DType out = expect_tensor(call.out_type, "output").dtype;
  const int64_t axis = axis_of(attrs.axis, x);
  // Adding a zero point of at most 16 bits to the rounded quotient is exact in float32 until
  // the sum is far outside the output's range, where both saturate alike; int32 needs double.
  const DType sum = out == DType::kInt32 ? DType::kFloat64 : x.dtype();
  return {te::compute(x.shape(), call.name, [&](const te::Indices& i) {
    // The quotient in the data's precision, as ONNX Runtime divides, so that ties round alike.
    PrimExpr q = x(index_exprs(i)) / tir::cast(x.dtype(), param_read(scale, i, axis));
    PrimExpr rounded = tir::cast(sum, tir::call("round", {q}));
    return saturating_cast(rounded + tir::cast(sum, param_read(zero_point, i, axis)), out);
  })};
}

std::vector<te::Tensor> dequantize_compute(const ComputeInput& call, const DequantizeAttrs& attrs) {
  const te::Tensor &x = call.args.at(0), &scale = call.args.at(1), &zero_point = call.args.at(2);
  const DType out = expect_tensor(call.out_type, "output").dtype;
  const int64_t axis = axis_of(attrs.axis, x);
  return {te::compute(x.shape(), call.name, [&](const te::Indices& i) {
    PrimExpr centred =
        tir::cast(DType::kInt64, x(index_exprs(i))) - tir::cast(DType::kInt64, param_read(zero_point, i, axis));
    return tir::cast(out, as_f64(centred) * as_f64(param_read(scale, i, axis)));
  })};
}

std::vector<te::Tensor> requantize_compute(const ComputeInput& call, const RequantizeAttrs& attrs) {
  const te::Tensor& x = call.args.at(0);
  const DType out = expect_tensor(call.out_type, "output").dtype;
  const int64_t axis = axis_of(attrs.axis, x);
  const std::string& rule = attrs.rounding;
  return {te::compute(x.shape(), call.name, [&](const te::Indices& i) {
    auto param = [&](size_t k) { return param_read(call.args.at(k), i, axis); };
    PrimExpr centred = tir::cast(DType::kInt64, x(index_exprs(i))) - tir::cast(DType::kInt64, param(2));
    PrimExpr real = as_f64(centred) * as_f64(param(1));
    return saturating_cast(round_by(real / as_f64(param(3)), rule) + as_f64(param(4)), out);
  })};
}

}  // namespace

void register_qnn_quantize_ops(OpRegistry& registry) {
  registry.add("qnn.quantize")
      .describe(
          "Quantizes floats: saturate(round_half_to_even(data / output_scale) + output_zero_point) in out_dtype; "
          "the parameters are scalars or vectors along 'axis'.")
      .arg("data")
      .arg("output_scale")
      .arg("output_zero_point")
      .attrs<QuantizeAttrs>()
      .set_relation<QuantizeAttrs>(quantize_relation)
      .set_pattern(OpPattern::kElemwise);

  registry.add("qnn.dequantize")
      .describe(
          "(data - input_zero_point) * input_scale in out_dtype; the parameters are scalars or vectors "
          "along 'axis'.")
      .arg("data")
      .arg("input_scale")
      .arg("input_zero_point")
      .attrs<DequantizeAttrs>()
      .set_relation<DequantizeAttrs>(dequantize_relation)
      .set_pattern(OpPattern::kElemwise);

  registry.add("qnn.requantize")
      .describe(
          "Changes the quantization of integers: round((data - input_zero_point) * input_scale / output_scale) + "
          "output_zero_point, saturated to out_dtype. rounding: UPWARD (ties toward +inf, Relay's default), "
          "TONEAREST (ties away from zero) or HALF_TO_EVEN (ONNX).")
      .arg("data")
      .arg("input_scale")
      .arg("input_zero_point")
      .arg("output_scale")
      .arg("output_zero_point")
      .attrs<RequantizeAttrs>()
      .set_relation<RequantizeAttrs>(requantize_relation)
      .set_pattern(OpPattern::kElemwise);
  set_compute<QuantizeAttrs>(registry.get_mutable("qnn.quantize"), quantize_compute);
  set_compute<DequantizeAttrs>(registry.get_mutable("qnn.dequantize"), dequantize_compute);
  set_compute<RequantizeAttrs>(registry.get_mutable("qnn.requantize"), requantize_compute);
}

}  // namespace kiln
