// Ops: qnn.quantize, qnn.dequantize, qnn.requantize. Scales and zero points are arguments
// (as in Relay), per tensor or per channel along `axis`. Rounding of quantize is half to
// even (ONNX); requantize's `rounding` picks the rule, Relay's UPWARD by default.
//
// Computes: elementwise, in the reference kernels' arithmetic (quantize divides in the data's
// precision, the rest is double) so that generated code gives the same integers.
#include <limits>

#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/qnn/qnn_util.h"

namespace kiln {

namespace {

// Extent of the channel axis for per-channel parameters; the axis must exist unless the
// data is a scalar (then only per-tensor parameters fit).
int64_t channel_extent(const Attrs& attrs, const TensorTypeNode& data) {
  if (data.ndim() == 0) return kNoChannels;
  return data.shape[axis_attr(attrs, "axis", data.shape)];
}

Type quantize_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  require_dtype("data", data.dtype, DTypeClass::kFloat);
  int64_t channels = channel_extent(attrs, data);
  check_quant_param(args, 1, "output_scale", true, channels, "channel of the axis");
  check_quant_param(args, 2, "output_zero_point", false, channels, "channel of the axis");
  return tensor_type(data.shape, quantized_dtype_attr(attrs));
}

Type dequantize_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  if (!is_int(data.dtype))
    throw std::move(Error("argument 'data' must hold quantized integers")
                        .expected("an integer dtype", std::string(dtype_name(data.dtype))));
  int64_t channels = channel_extent(attrs, data);
  check_quant_param(args, 1, "input_scale", true, channels, "channel of the axis");
  check_quant_param(args, 2, "input_zero_point", false, channels, "channel of the axis");
  const std::string& out_name = attrs.get_string("out_dtype");
  DType out;
  if (!try_parse_dtype(out_name, &out) || !is_float(out))
    throw std::move(Error("attribute 'out_dtype' must be a float dtype")
                        .expected("float16, bfloat16, float32 or float64", cat('"', out_name, '"')));
  return tensor_type(data.shape, out);
}

Type requantize_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  if (!is_int(data.dtype))
    throw std::move(Error("argument 'data' must hold quantized integers")
                        .expected("an integer dtype", std::string(dtype_name(data.dtype))));
  int64_t channels = channel_extent(attrs, data);
  check_quant_param(args, 1, "input_scale", true, channels, "channel of the axis");
  check_quant_param(args, 2, "input_zero_point", false, channels, "channel of the axis");
  check_quant_param(args, 3, "output_scale", true, channels, "channel of the axis");
  check_quant_param(args, 4, "output_zero_point", false, channels, "channel of the axis");
  const std::string& rounding = attrs.get_string("rounding");
  if (rounding != "UPWARD" && rounding != "TONEAREST" && rounding != "HALF_TO_EVEN")
    throw std::move(Error("attribute 'rounding' has an unknown value")
                        .expected("UPWARD, TONEAREST or HALF_TO_EVEN", cat('"', rounding, '"')));
  return tensor_type(data.shape, quantized_dtype_attr(attrs));
}

// ----- computes -----

using tir::PrimExpr;

// The parameter `p` (a scalar, one value, or one value per index along `axis`) for output `i`.
PrimExpr param_read(const te::Tensor& p, const te::Indices& i, int64_t axis) {
  if (p.ndim() == 0) return p(std::vector<PrimExpr>{});
  return channel_read(p, i, axis);
}

PrimExpr as_f64(const PrimExpr& v) { return tir::cast(DType::kFloat64, v); }

// `v` (a float, already rounded) clamped to the range of `out` and converted; NaN becomes 0.
PrimExpr saturate_to(const PrimExpr& v, DType out) {
  double lo = 0, hi = 0;
  dispatch_dtype(out, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T>) {
      lo = static_cast<double>(std::numeric_limits<T>::lowest());
      hi = static_cast<double>(std::numeric_limits<T>::max());
    }
  });
  const PrimExpr low = tir::float_imm(lo, v.dtype()), high = tir::float_imm(hi, v.dtype());
  PrimExpr clamped = tir::select(tir::lt(v, low), low, tir::select(tir::gt(v, high), high, v));
  return tir::select(tir::ne(v, v), tir::make_const(out, 0), tir::cast(out, clamped));
}

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

int64_t axis_of(const ComputeInput& call, const te::Tensor& data) {
  int64_t axis = call.attrs.get_int("axis");
  return axis < 0 ? axis + static_cast<int64_t>(data.ndim()) : axis;
}

std::vector<te::Tensor> quantize_compute(const ComputeInput& call) {
  const te::Tensor &x = call.args.at(0), &scale = call.args.at(1), &zero_point = call.args.at(2);
  const DType out = expect_tensor(call.out_type, "output").dtype;
  const int64_t axis = axis_of(call, x);
  // Adding a zero point of at most 16 bits to the rounded quotient is exact in float32 until
  // the sum is far outside the output's range, where both saturate alike; int32 needs double.
  const DType sum = out == DType::kInt32 ? DType::kFloat64 : x.dtype();
  return {te::compute(x.shape(), call.name, [&](const te::Indices& i) {
    // The quotient in the data's precision, as ONNX Runtime divides, so that ties round alike.
    PrimExpr q = x(index_exprs(i)) / tir::cast(x.dtype(), param_read(scale, i, axis));
    PrimExpr rounded = tir::cast(sum, tir::call("round", {q}));
    return saturate_to(rounded + tir::cast(sum, param_read(zero_point, i, axis)), out);
  })};
}

std::vector<te::Tensor> dequantize_compute(const ComputeInput& call) {
  const te::Tensor &x = call.args.at(0), &scale = call.args.at(1), &zero_point = call.args.at(2);
  const DType out = expect_tensor(call.out_type, "output").dtype;
  const int64_t axis = axis_of(call, x);
  return {te::compute(x.shape(), call.name, [&](const te::Indices& i) {
    PrimExpr centred =
        tir::cast(DType::kInt64, x(index_exprs(i))) - tir::cast(DType::kInt64, param_read(zero_point, i, axis));
    return tir::cast(out, as_f64(centred) * as_f64(param_read(scale, i, axis)));
  })};
}

std::vector<te::Tensor> requantize_compute(const ComputeInput& call) {
  const te::Tensor& x = call.args.at(0);
  const DType out = expect_tensor(call.out_type, "output").dtype;
  const int64_t axis = axis_of(call, x);
  const std::string rule = call.attrs.get_string("rounding");
  return {te::compute(x.shape(), call.name, [&](const te::Indices& i) {
    auto param = [&](size_t k) { return param_read(call.args.at(k), i, axis); };
    PrimExpr centred = tir::cast(DType::kInt64, x(index_exprs(i))) - tir::cast(DType::kInt64, param(2));
    PrimExpr real = as_f64(centred) * as_f64(param(1));
    return saturate_to(round_by(real / as_f64(param(3)), rule) + as_f64(param(4)), out);
  })};
}

}  // namespace

void register_qnn_quantize_ops(OpRegistry& registry) {
  StrategyRegistry::global().set_compute("qnn.quantize", quantize_compute);
  StrategyRegistry::global().set_compute("qnn.dequantize", dequantize_compute);
  StrategyRegistry::global().set_compute("qnn.requantize", requantize_compute);

  registry.add("qnn.quantize")
      .describe(
          "Quantizes floats: saturate(round_half_to_even(data / output_scale) + output_zero_point) in out_dtype; "
          "the parameters are scalars or vectors along 'axis'.")
      .arg("data")
      .arg("output_scale")
      .arg("output_zero_point")
      .attr("axis", AttrKind::kInt, -1)
      .attr("out_dtype", AttrKind::kString, "int8")
      .set_relation(named_relation("qnn.quantize", quantize_relation))
      .set_pattern(OpPattern::kElemwise);

  registry.add("qnn.dequantize")
      .describe(
          "(data - input_zero_point) * input_scale in out_dtype; the parameters are scalars or vectors "
          "along 'axis'.")
      .arg("data")
      .arg("input_scale")
      .arg("input_zero_point")
      .attr("axis", AttrKind::kInt, -1)
      .attr("out_dtype", AttrKind::kString, "float32")
      .set_relation(named_relation("qnn.dequantize", dequantize_relation))
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
      .attr("axis", AttrKind::kInt, -1)
      .attr("rounding", AttrKind::kString, "UPWARD")
      .attr("out_dtype", AttrKind::kString, "int8")
      .set_relation(named_relation("qnn.requantize", requantize_relation))
      .set_pattern(OpPattern::kElemwise);
}

}  // namespace kiln
