// Op: qnn.conv2d, Relay's quantized convolution: NCHW int8/uint8 data and OIHW kernel,
// accumulating sum((data - input_zero_point) * (kernel - kernel_zero_point)) in out_dtype
// (int32). Padding contributes nothing (padded values equal the zero point). The scales are
// carried for a following qnn.requantize (their product is the accumulator's scale).
//
// Compute: both operands shifted by their zero points into int16 (|value| <= 255), then
// nn.conv2d's paths (src/op/nn/conv.cc) with an int32 accumulator and the integer micro-kernel.
#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/nn/conv2d_compute.h"
#include "op/nn/window_attrs.h"
#include "op/qnn/qnn_util.h"

namespace kiln {

namespace {

Type qnn_conv2d_relation(const std::vector<Type>& args, const QnnConv2DAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", 4, "NCHW");
  const TensorTypeNode& kernel = arg_tensor_of_rank(args, 1, "kernel", 4, "OIHW");
  check_quantized_arg(data, "data");
  check_quantized_arg(kernel, "kernel");
  const Shape& x = data.shape;
  const Shape& w = kernel.shape;
  check_quant_param(args, 2, "input_zero_point", false, kNoChannels, "");
  check_quant_param(args, 3, "kernel_zero_point", false, w[0], "output channel");
  check_quant_param(args, 4, "input_scale", true, kNoChannels, "");
  check_quant_param(args, 5, "kernel_scale", true, w[0], "output channel");
  const Window2D win = attrs.window();
  const int64_t groups = attrs.groups;
  if (x[1] >= 0 && x[1] % groups != 0)
    throw std::move(Error(cat("input channels of 'data' ", shape_str(x), " are not divisible by groups=", groups))
                        .expected(cat("a multiple of ", groups), cat(x[1])));
  check_same_extent(x[1], w[1] < 0 ? kAnyDim : w[1] * groups, "input channels (kernel axis 1 times groups)", "data", x,
                    "kernel", w);
  if (attrs.channels && w[0] >= 0 && *attrs.channels != w[0])
    throw std::move(Error(cat("attribute 'channels' disagrees with 'kernel' ", shape_str(w)))
                        .expected(cat(w[0]), cat(*attrs.channels)));
  int64_t out_h =
      window_extent("height", x, x[2], w[2], win.strides.h, win.dilation.h, win.padding.top, win.padding.bottom);
  int64_t out_w =
      window_extent("width", x, x[3], w[3], win.strides.w, win.dilation.w, win.padding.left, win.padding.right);
  return tensor_type({x[0], w[0], out_h, out_w}, parse_quantized_dtype("out_dtype", attrs.out_dtype));
}

const nn::ConvOperandTypes kShiftedOperands{DType::kInt16, DType::kInt32};

// `t` - zero point as int16; the zero point is a scalar, or one value per index `channel`.
te::Tensor shifted(const te::Tensor& t, const te::Tensor& zero_point, const std::string& name) {
  return te::compute(t.shape(), name, [&](const te::Indices& i) {
    tir::PrimExpr zp =
        zero_point.ndim() == 0 ? zero_point(std::vector<tir::PrimExpr>{}) : channel_read(zero_point, i, 0);
    return tir::cast(DType::kInt16, t(index_exprs(i))) - tir::cast(DType::kInt16, zp);
  });
}

std::vector<te::Tensor> qnn_conv2d_compute(const ComputeInput& call, const QnnConv2DAttrs& attrs) {
  te::Tensor data = shifted(call.args.at(0), call.args.at(2), nn::conv_operand_name(call.name, "data"));
  te::Tensor weight = shifted(call.args.at(1), call.args.at(3), nn::conv_operand_name(call.name, "weight"));
  return {nn::conv2d_operands_compute(call, attrs, data, weight, kShiftedOperands)};
}

// Other accumulator dtypes saturate in the reference kernel; the int32 core wraps.
std::string qnn_conv2d_limit(const std::vector<Type>&, const Type& out_type, const Attrs&) {
  DType out = expect_tensor(out_type, "output").dtype;
  return out == DType::kInt32 ? "" : cat("out_dtype ", dtype_name(out), " (generated code accumulates in int32)");
}

}  // namespace

void register_qnn_conv2d_ops(OpRegistry& registry) {
  OpDef& qnn_conv2d =
      registry.add("qnn.conv2d")
          .describe(
              "Quantized 2-D convolution (NCHW data, OIHW kernel): the int32 sum of (data - input_zero_point) * "
              "(kernel - kernel_zero_point); kernel_zero_point and kernel_scale may be per output channel.")
          .arg("data")
          .arg("kernel")
          .arg("input_zero_point")
          .arg("kernel_zero_point")
          .arg("input_scale")
          .arg("kernel_scale")
          .attrs<QnnConv2DAttrs>()
          .set_relation<QnnConv2DAttrs>(qnn_conv2d_relation)
          .set_pattern(OpPattern::kOutEWiseFusable);
  set_compute<QnnConv2DAttrs>(qnn_conv2d, qnn_conv2d_compute, qnn_conv2d_limit);
  set_schedule<QnnConv2DAttrs>(qnn_conv2d, [](const ScheduleInput& in, const QnnConv2DAttrs& attrs) {
    nn::conv2d_operands_schedule(in, attrs, kShiftedOperands);
  });
}

}  // namespace kiln
