// Ops: qnn.quantize, qnn.dequantize, qnn.requantize. Scales and zero points are arguments
// (as in Relay), per tensor or per channel along `axis`. Rounding of quantize is half to
// even (ONNX); requantize's `rounding` picks the rule, Relay's UPWARD by default.
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

}  // namespace

void register_qnn_quantize_ops(OpRegistry& registry) {
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
