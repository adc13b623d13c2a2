// Converters: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, ConvInteger,
// QLinearConv, MatMulInteger, QLinearMatMul, onto Relay's qnn ops. Integer convolutions and
// products accumulate in int32 (qnn.conv2d, qnn.matmul); the QLinear forms then requantize
// to the output's scale and zero point with ONNX's rounding (half to even).
#include "frontend/onnx/converters/converter_util.h"
#include "kiln/attrs/nn.h"
#include "kiln/attrs/qnn.h"
#include "kiln/attrs/transform.h"

namespace kiln::frontend {

namespace {

// The zero point input, or a scalar 0 of `dtype` when the model leaves it out.
Expr zero_point_or_zero(ConvertContext& c, size_t i, DType dtype) {
  return c.has_input(i) ? c.input(i) : scalar_constant(dtype, 0.0);
}

std::string dtype_str(DType t) { return std::string(dtype_name(t)); }

// ONNX's 'axis' for per-channel parameters (opset 13); -1 (unused) for per-tensor ones.
int64_t quant_axis(ConvertContext& c, size_t scale_input, size_t data_input) {
  const TensorTypeNode& scale = c.input_type(scale_input);
  bool per_tensor = scale.ndim() == 0 || num_elements(scale.shape) == 1;
  if (per_tensor) return -1;
  check(c.opset() >= 13, "per-channel scales need opset 13's 'axis' attribute; the scale has shape ",
        shape_str(scale.shape));
  return normalize_onnx_axis(c.attrs().get_int("axis", 1), c.input_rank(data_input));
}

// The output's dtype follows the zero point (uint8 when it is absent).
ConvertResult convert_quantize(ConvertContext& c) {
  DType out = c.has_input(2) ? c.input_dtype(2) : DType::kUInt8;
  return call_op("qnn.quantize", {c.input(0), c.input(1), zero_point_or_zero(c, 2, out)},
                 QuantizeAttrs{.axis = quant_axis(c, 1, 0), .out_dtype = dtype_str(out)});
}

ConvertResult convert_dequantize(ConvertContext& c) {
  return call_op("qnn.dequantize", {c.input(0), c.input(1), zero_point_or_zero(c, 2, c.input_dtype(0))},
                 DequantizeAttrs{.axis = quant_axis(c, 1, 0), .out_dtype = dtype_str(c.input_dtype(1))});
}

// uint8 quantization over the range of x widened to include 0:
// scale = (max(x, 0) - min(x, 0)) / 255, zero point = saturate(round(-min(x, 0) / scale)).
// An all-zero x has an empty range; ONNX's formula would divide 0 by 0 there, and ONNX Runtime
// uses scale 1 (zero point 0, y 0), which kiln follows.
ConvertResult convert_dynamic_quantize(ConvertContext& c) {
  Expr x = c.input(0);
  DType dtype = c.input_dtype(0);
  Expr zero = scalar_constant(dtype, 0.0);
  Expr low = call_op("minimum", {call_op("min", {x}), zero});
  Expr high = call_op("maximum", {call_op("max", {x}), zero});
  Expr range_scale = call_op("divide", {call_op("subtract", {high, low}), scalar_constant(dtype, 255.0)});
  Expr scale = call_op("where", {call_op("equal", {high, low}), scalar_constant(dtype, 1.0), range_scale});
  const QuantizeAttrs to_uint8{.axis = -1, .out_dtype = "uint8"};
  Expr zero_point =
      call_op("qnn.quantize", {call_op("negative", {low}), scale, scalar_constant(DType::kUInt8, 0.0)}, to_uint8);
  Expr y = call_op("qnn.quantize", {x, scale, zero_point}, to_uint8);
  return std::vector<Expr>{y, scale, zero_point};
}

// ---- convolution ----

// strides, dilation, padding (top, left, bottom, right) and kernel of a 2-D window.
struct Window2D {
  std::vector<int64_t> strides, dilation, padding, kernel;
};

// ONNX's window attributes for a (N, C, H, W) input and (M, C/group, kH, kW) weight.
Window2D read_window_2d(ConvertContext& c, const Shape& x, const Shape& w) {
  Window2D win;
  win.kernel = c.attrs().get_ints("kernel_shape", {w[2], w[3]});
  win.strides = c.attrs().get_ints("strides", {1, 1});
  win.dilation = c.attrs().get_ints("dilations", {1, 1});
  std::vector<int64_t> pads = c.attrs().get_ints("pads", {0, 0, 0, 0});
  check(win.kernel.size() == 2 && win.strides.size() == 2 && win.dilation.size() == 2 && pads.size() == 4,
        "kernel_shape, strides, dilations and pads must have 2, 2, 2 and 4 values for input ", shape_str(x));
  std::string auto_pad = c.attrs().get_string("auto_pad", "NOTSET");
  if (auto_pad == "VALID") pads.assign(4, 0);
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < 2; ++i) {
      int64_t in = x[i + 2];
      check(in != kAnyDim, "auto_pad SAME needs static spatial dimensions, found ", shape_str(x));
      int64_t out = (in + win.strides[i] - 1) / win.strides[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * win.strides[i] + (win.kernel[i] - 1) * win.dilation[i] + 1 - in);
      pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[i + 2] = total - pads[i];
    }
  } else if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    throw std::move(Error("attribute 'auto_pad' has an unknown value")
                        .expected("NOTSET, SAME_UPPER, SAME_LOWER or VALID", "'" + auto_pad + "'"));
  }
  win.padding = pads;
  return win;
}

// qnn.conv2d of inputs data and weight (1-D convolutions run on a unit height); `finish`
// turns the int32 accumulator into the node's result, still in 2-D.
Expr quantized_conv(ConvertContext& c, size_t data_input, size_t weight_input, const std::vector<Expr>& params,
                    const std::function<Expr(Expr)>& finish) {
  Expr data = c.input(data_input), weight = c.input(weight_input);
  Shape x = c.input_shape(data_input), w = c.input_shape(weight_input);
  check(x.size() == 3 || x.size() == 4, "only 1-D and 2-D convolutions are supported (input rank 3 or 4), found ",
        shape_str(x));
  check(w.size() == x.size(), "weight ", shape_str(w), " must have the rank of the input ", shape_str(x));
  bool one_d = x.size() == 3;
  if (one_d) {
    x.insert(x.begin() + 2, 1);
    w.insert(w.begin() + 2, 1);
    data = call_op("expand_dims", {data}, ExpandDimsAttrs{.axis = 2});
    weight = call_op("expand_dims", {weight}, ExpandDimsAttrs{.axis = 2});
  }
  Window2D win;
  if (one_d) {
    // The ONNX attributes describe the one spatial axis; the unit height gets trivial ones.
    std::vector<int64_t> k = c.attrs().get_ints("kernel_shape", {w[3]});
    std::vector<int64_t> pads = c.attrs().get_ints("pads", {0, 0});
    check(c.attrs().get_string("auto_pad", "NOTSET") == "NOTSET",
          "auto_pad on a 1-D integer convolution is not supported");
    check(k.size() == 1 && pads.size() == 2, "kernel_shape and pads must have 1 and 2 values for input ",
          shape_str(c.input_shape(data_input)));
    win = {{1, c.attrs().get_ints("strides", {1})[0]},
           {1, c.attrs().get_ints("dilations", {1})[0]},
           {0, pads[0], 0, pads[1]},
           {1, k[0]}};
  } else {
    win = read_window_2d(c, x, w);
  }
  std::vector<Expr> args{data, weight};
  args.insert(args.end(), params.begin(), params.end());
  QnnConv2DAttrs attrs;
  attrs.strides = win.strides;
  attrs.padding = win.padding;
  attrs.dilation = win.dilation;
  attrs.groups = c.attrs().get_int("group", 1);
  attrs.kernel_size = win.kernel;
  Expr acc = call_op("qnn.conv2d", args, attrs);
  Expr out = finish(acc);
  return one_d ? call_op("squeeze", {out}, SqueezeAttrs{.axis = std::vector<int64_t>{2}}) : out;
}

Expr unit_scale() { return scalar_constant(DType::kFloat32, 1.0); }

// ConvInteger: x, w, x_zero_point, w_zero_point -> int32.
ConvertResult convert_conv_integer(ConvertContext& c) {
  std::vector<Expr> params{zero_point_or_zero(c, 2, c.input_dtype(0)), zero_point_or_zero(c, 3, c.input_dtype(1)),
                           unit_scale(), unit_scale()};
  return quantized_conv(c, 0, 1, params, [](Expr acc) { return acc; });
}

// The int32 accumulator (scale x_scale * w_scale, zero point 0) in the output's quantization.
Expr requantize(ConvertContext& c, Expr acc, Expr acc_scale, size_t y_scale, size_t y_zero_point, int64_t axis) {
  return call_op(
      "qnn.requantize", {acc, acc_scale, scalar_constant(DType::kInt32, 0.0), c.input(y_scale), c.input(y_zero_point)},
      RequantizeAttrs{.axis = axis, .rounding = "HALF_TO_EVEN", .out_dtype = dtype_str(c.input_dtype(y_zero_point))});
}

// QLinearConv: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.
ConvertResult convert_qlinear_conv(ConvertContext& c) {
  std::vector<Expr> params{c.input(2), c.input(5), c.input(1), c.input(4)};
  Expr acc_scale = call_op("multiply", {c.input(1), c.input(4)});
  return quantized_conv(c, 0, 3, params, [&](Expr acc) {
    if (c.has_input(8)) acc = call_op("nn.bias_add", {acc, c.input(8)}, BiasAddAttrs{.axis = 1});
    return requantize(c, acc, acc_scale, 6, 7, 1);
  });
}

// ---- matrix products ----

void check_matrices(ConvertContext& c, size_t a, size_t b) {
  check(c.input_rank(a) >= 2 && c.input_rank(b) >= 2, "integer matrix products of vectors are not supported: A ",
        shape_str(c.input_shape(a)), ", B ", shape_str(c.input_shape(b)));
}

// MatMulInteger: A, B, a_zero_point, b_zero_point -> int32.
ConvertResult convert_matmul_integer(ConvertContext& c) {
  check_matrices(c, 0, 1);
  return call_op("qnn.matmul", {c.input(0), c.input(1), zero_point_or_zero(c, 2, c.input_dtype(0)),
                                zero_point_or_zero(c, 3, c.input_dtype(1)), unit_scale(), unit_scale()});
}

// QLinearMatMul: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
// A per-row a_scale makes the accumulator's scale vary along rows (axis -2), a per-column
// b_scale along columns (axis -1); both at once is not a per-axis scale.
ConvertResult convert_qlinear_matmul(ConvertContext& c) {
  check_matrices(c, 0, 3);
  Expr acc = call_op("qnn.matmul", {c.input(0), c.input(3), c.input(2), c.input(5), c.input(1), c.input(4)});
  bool a_per_row = num_elements(c.input_shape(1)) > 1, b_per_column = num_elements(c.input_shape(4)) > 1;
  check(!(a_per_row && b_per_column), "QLinearMatMul with both a per-row a_scale ", shape_str(c.input_shape(1)),
        " and a per-column b_scale ", shape_str(c.input_shape(4)), " is not supported");
  Expr acc_scale = call_op("multiply", {c.input(1), c.input(4)});
  if (a_per_row) acc_scale = call_op("reshape", {acc_scale}, ReshapeAttrs{.newshape = {-1}});
  return requantize(c, acc, acc_scale, 6, 7, a_per_row ? -2 : -1);
}

}  // namespace

void register_quantized_converters(ConverterRegistry& r) {
  r.add("QuantizeLinear", 10, convert_quantize).add("QuantizeLinear", 13, convert_quantize);
  r.add("DequantizeLinear", 10, convert_dequantize).add("DequantizeLinear", 13, convert_dequantize);
  r.add("DynamicQuantizeLinear", 11, convert_dynamic_quantize);
  r.add("ConvInteger", 10, convert_conv_integer);
  r.add("QLinearConv", 10, convert_qlinear_conv);
  r.add("MatMulInteger", 10, convert_matmul_integer);
  r.add("QLinearMatMul", 10, convert_qlinear_matmul);
}

}  // namespace kiln::frontend
