// QnnLegalize (the seed notes' relay::qnn::transform::Legalize, Relay's qnn.transform.Legalize):
// the qnn ops become arithmetic on ordinary ops, which FuseOps groups and every later stage
// compiles like any other; the rewrite gives bit for bit what the qnn reference kernels give
// (src/runtime/kernels/qnn/), so the interpreter agrees before and after.
//   qnn.quantize(x, s, z)   -> cast(round(x / s) + z, out): the sum in float (double for int32)
//   qnn.dequantize(x, s, z) -> (x - z) * s: in int32 and float32 for 8/16-bit data, a float32
//                              scale and output; in int64 and double otherwise
//   qnn.requantize(x, si, zi, so, zo) -> cast(rounding((x - zi) * si / so) + zo, out) in double
//   qnn.conv2d(x, w, zx, zw) -> nn.conv2d(int16(x) - zx, int16(w) - zw, out_dtype=int32)
//   qnn.matmul(a, b, za, zb) -> nn.matmul(int16(a) - za, int16(b) - zb, out_dtype=out)
// Per-channel parameters are reshaped to broadcast along their axis. The casts saturate (NaN
// becomes 0), which is the reference kernels' saturation of whole numbers.
//
// Unlike Relay's expanded form (the products of the unshifted 8-bit values minus zero-point
// correction terms), the operands are shifted first: kiln's integer micro-kernel multiplies
// int16, and padding stays a plain zero. A call is left alone when the shift could leave
// int16 (zero points of wider dtypes) or when the accumulator's overflow rule would differ
// (a sum that can exceed int32, where qnn.conv2d into another out_dtype and qnn.matmul
// saturate).
#include <cmath>
#include <limits>

#include "kiln/attrs/qnn.h"
#include "kiln/attrs/transform.h"
#include "kiln/attrs/unary.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"

namespace kiln {

namespace {

const TensorTypeNode& type_of(const Expr& e) { return expect_tensor(e->checked_type(), "qnn operand"); }

Expr cast_to(const Expr& e, DType from, DType to) {
  if (from == to) return e;
  return call_op("cast", {e}, CastAttrs{.dtype = std::string(dtype_name(to))});
}

Expr scalar(DType dtype, double value) { return make_constant(NDArray::scalar(dtype, value)); }

// The closed range of values an integer operand can hold: its dtype's, or a constant's own.
struct ValueRange {
  double low = 0, high = 0;
};

ValueRange dtype_range(DType t) {
  const double bits = 8.0 * static_cast<double>(dtype_bytes(t));
  if (is_unsigned_int(t)) return {0, std::exp2(bits) - 1};
  return {-std::exp2(bits - 1), std::exp2(bits - 1) - 1};
}

ValueRange range_of(const Expr& e) {
  const auto* c = as<ConstantNode>(e);
  if (!c || c->data.numel() == 0) return dtype_range(type_of(e).dtype);
  ValueRange r{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  for (double v : c->data.to_doubles()) r = {std::min(r.low, v), std::max(r.high, v)};
  return r;
}

bool is_zero_constant(const Expr& e) {
  const auto* c = as<ConstantNode>(e);
  if (!c) return false;
  for (double v : c->data.to_doubles())
    if (v != 0) return false;
  return true;
}

// A quantization parameter (one value, or one per channel of `axis`) shaped to broadcast
// against data of rank `rank`: a scalar, or (C, 1, ..., 1).
Expr along_axis(const Expr& param, int64_t axis, size_t rank) {
  const TensorTypeNode& t = type_of(param);
  if (t.ndim() == 0) return param;
  if (num_elements(t.shape) == 1) return call_op("reshape", {param}, Attrs{{"newshape", std::vector<int64_t>{}}});
  const int64_t r = static_cast<int64_t>(rank);
  const int64_t trailing = r - 1 - (axis < 0 ? axis + r : axis);
  if (trailing <= 0) return param;
  return call_op("expand_dims", {param}, ExpandDimsAttrs{.axis = 1, .num_newaxis = trailing});
}

// `x` - `zero_point` in `dtype` (the zero point broadcast along `axis`); no subtraction of 0.
Expr centred(const Expr& x, const Expr& zero_point, int64_t axis, DType dtype) {
  const TensorTypeNode& t = type_of(x);
  Expr v = cast_to(x, t.dtype, dtype);
  if (is_zero_constant(zero_point)) return v;
  Expr z = along_axis(zero_point, axis, t.ndim());
  return call_op("subtract", {v, cast_to(z, type_of(zero_point).dtype, dtype)});
}

// round_with (quant_util.cc) as ops on float64.
Expr rounded(const Expr& v, const std::string& rule) {
  const DType f64 = DType::kFloat64;
  if (rule == "UPWARD") return call_op("floor", {call_op("add", {v, scalar(f64, 0.5)})});
  if (rule == "TONEAREST") {
    // std::round: ties away from zero; v - trunc(v) is exact, v + 0.5 would not be.
    Expr t = call_op("trunc", {v});
    Expr tie_or_more = call_op("greater_equal", {call_op("abs", {call_op("subtract", {v, t})}), scalar(f64, 0.5)});
    Expr away = call_op("where", {call_op("less", {v, scalar(f64, 0)}), call_op("subtract", {t, scalar(f64, 1)}),
                                  call_op("add", {t, scalar(f64, 1)})});
    return call_op("where", {tie_or_more, away, t});
  }
  return call_op("round", {v});  // half to even
}

Expr legalize_quantize(const CallNode& call, DType out) {
  const QuantizeAttrs attrs = attrs_from<QuantizeAttrs>(call.attrs, "qnn.quantize");
  const Expr &x = call.args[0], &scale = call.args[1], &zero_point = call.args[2];
  const DType data = type_of(x).dtype;
  const size_t rank = type_of(x).ndim();
  // The quotient in the data's precision (float unless double), as the kernel divides.
  const DType quotient = data == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  Expr s = cast_to(along_axis(scale, attrs.axis, rank), type_of(scale).dtype, quotient);
  Expr q = call_op("round", {call_op("divide", {cast_to(x, data, quotient), s})});
  // A zero point of at most 16 bits added in float is exact until the sum is far outside the
  // output's range, where both saturate alike; int32 needs double.
  const DType sum = out == DType::kInt32 ? DType::kFloat64 : quotient;
  Expr z = cast_to(along_axis(zero_point, attrs.axis, rank), type_of(zero_point).dtype, sum);
  return cast_to(call_op("add", {cast_to(q, quotient, sum), z}), sum, out);
}

bool wider_than_16_bits(DType t) { return dtype_bytes(t) > 2; }

Expr legalize_dequantize(const CallNode& call, DType out) {
  const DequantizeAttrs attrs = attrs_from<DequantizeAttrs>(call.attrs, "qnn.dequantize");
  const Expr &x = call.args[0], &scale = call.args[1], &zero_point = call.args[2];
  const size_t rank = type_of(x).ndim();
  const bool narrow = !wider_than_16_bits(type_of(x).dtype) && !wider_than_16_bits(type_of(zero_point).dtype);
  Expr diff = centred(x, zero_point, attrs.axis, narrow ? DType::kInt32 : DType::kInt64);
  Expr s = along_axis(scale, attrs.axis, rank);
  const DType scale_dtype = type_of(scale).dtype;
  // The kernel multiplies in double and rounds once to the output; a float32 product of a
  // difference below 2^24 and a float32 scale is that same single rounding of the exact product.
  if (narrow && scale_dtype == DType::kFloat32 && out == DType::kFloat32)
    return call_op("multiply", {cast_to(diff, DType::kInt32, DType::kFloat32), s});
  const DType f64 = DType::kFloat64;
  Expr product =
      call_op("multiply", {cast_to(diff, narrow ? DType::kInt32 : DType::kInt64, f64), cast_to(s, scale_dtype, f64)});
  return cast_to(product, f64, out);
}

Expr legalize_requantize(const CallNode& call, DType out) {
  const RequantizeAttrs attrs = attrs_from<RequantizeAttrs>(call.attrs, "qnn.requantize");
  const Expr& x = call.args[0];
  const size_t rank = type_of(x).ndim();
  const DType f64 = DType::kFloat64;
  auto param = [&](size_t i) {
    return cast_to(along_axis(call.args[i], attrs.axis, rank), type_of(call.args[i]).dtype, f64);
  };
  // Integers of up to 32 bits and their difference are exact in double: no int64 step.
  const bool fits_double = !wider_than_16_bits(type_of(x).dtype) || dtype_bytes(type_of(x).dtype) == 4;
  const bool zero_fits = dtype_bytes(type_of(call.args[2]).dtype) <= 4;
  Expr diff = fits_double && zero_fits
                  ? centred(x, call.args[2], attrs.axis, f64)
                  : cast_to(centred(x, call.args[2], attrs.axis, DType::kInt64), DType::kInt64, f64);
  Expr real = call_op("multiply", {diff, param(1)});
  Expr v = rounded(call_op("divide", {real, param(3)}), attrs.rounding);
  if (!is_zero_constant(call.args[4])) v = call_op("add", {v, param(4)});
  return cast_to(v, f64, out);
}

// The largest |a - za| * |b - zb|, or 0 when a shifted operand does not fit int16.
double largest_product(const Expr& a, const Expr& za, const Expr& b, const Expr& zb) {
  auto extent = [](const Expr& v, const Expr& z) {
    ValueRange rv = range_of(v), rz = range_of(z);
    double lo = rv.low - rz.high, hi = rv.high - rz.low;
    return lo < -32768 || hi > 32767 ? -1.0 : std::max(-lo, hi);
  };
  double ea = extent(a, za), eb = extent(b, zb);
  return ea < 0 || eb < 0 ? 0 : ea * eb;
}

// `acc` (int32, exact) saturated to `out` as the kernels' saturate().
Expr saturated(const Expr& acc, DType out) {
  if (out == DType::kInt32) return acc;
  ValueRange r = dtype_range(out);
  return cast_to(call_op("clip", {acc}, ClipAttrs{.a_min = r.low, .a_max = r.high}), DType::kInt32, out);
}

// nn.conv2d wraps an int32 sum as qnn.conv2d's kernel does; another out_dtype saturates
// there, so it is legalized only when the int32 sum cannot overflow.
Expr legalize_conv2d(const CallNode& call, DType out) {
  const Expr &x = call.args[0], &w = call.args[1];
  double product = largest_product(x, call.args[2], w, call.args[3]);
  if (product == 0) return {};
  const Shape& ws = type_of(w).shape;
  const bool known_taps = ws[1] >= 0 && ws[2] >= 0 && ws[3] >= 0;
  if (out != DType::kInt32 && (!known_taps || static_cast<double>(ws[1] * ws[2] * ws[3]) * product > 2147483647.0))
    return {};
  // The same attributes as written (nn.conv2d's schema is qnn.conv2d's), out_dtype aside.
  Attrs conv = call.attrs;
  conv.set("out_dtype", "int32");
  Expr data = centred(x, call.args[2], 0, DType::kInt16);
  Expr weight = centred(w, call.args[3], 0, DType::kInt16);
  return saturated(call_op("nn.conv2d", {data, weight}, conv), out);
}

// qnn.matmul's kernel sums in int64 and saturates; nn.matmul wraps into int32 and saturates
// into other dtypes from an exact double: the same while the sum cannot overflow.
Expr legalize_matmul(const CallNode& call, DType out) {
  const Expr &a = call.args[0], &b = call.args[1];
  double product = largest_product(a, call.args[2], b, call.args[3]);
  const Shape& as = type_of(a).shape;
  const double limit = out == DType::kInt32 ? 2147483647.0 : std::exp2(53);
  if (product == 0 || as.back() < 0 || static_cast<double>(as.back()) * product > limit) return {};
  const auto rank_a = static_cast<int64_t>(type_of(a).ndim()), rank_b = static_cast<int64_t>(type_of(b).ndim());
  const Attrs attrs{{"out_dtype", std::string(dtype_name(out))}};
  return call_op(
      "nn.matmul",
      {centred(a, call.args[2], rank_a - 2, DType::kInt16), centred(b, call.args[3], rank_b - 1, DType::kInt16)},
      attrs);
}

// The legal form of a qnn call whose arguments are typed, or null to keep it.
Expr legalize(const CallNode& call, const Type& out_type) {
  const std::string& name = call.op()->name;
  const DType out = expect_tensor(out_type, name).dtype;
  if (name == "qnn.quantize") return legalize_quantize(call, out);
  if (name == "qnn.dequantize") return legalize_dequantize(call, out);
  if (name == "qnn.requantize") return legalize_requantize(call, out);
  if (name == "qnn.conv2d") return legalize_conv2d(call, out);
  if (name == "qnn.matmul") return legalize_matmul(call, out);
  return {};
}

// The arguments of `rebuilt` may be new nodes: they are typed before the rewrite reads them
// (infer_untyped_nodes trusts what is typed already).
class QnnLegalizer : public ExprRewriter {
 protected:
  Expr post(const Expr& original, const Expr& rebuilt) override {
    const auto* call = as<CallNode>(rebuilt);
    const OpDef* op = call ? call->op() : nullptr;
    if (!op || op->name.rfind("qnn.", 0) != 0) return rebuilt;
    infer_untyped_nodes(rebuilt);
    Expr legal = legalize(*call, original->checked_type());
    return legal ? legal : rebuilt;
  }
};

bool has_qnn_call(const IRModule& mod) {
  bool found = false;
  for (const auto& entry : mod.functions())
    post_order_visit(entry.second, [&](const Expr& e) {
      const auto* call = as<CallNode>(e);
      if (call && call->op() && call->op()->name.rfind("qnn.", 0) == 0) found = true;
    });
  return found;
}

}  // namespace

IRModule legalize_qnn_pass(const IRModule& mod) {
  if (!has_qnn_call(mod)) return mod;  // the same module, untouched
  infer_types(mod);                    // the rewrite reads dtypes, shapes and ranks
  return infer_types(map_functions(mod, [](const Function& fn) { return as_function(QnnLegalizer().rewrite(fn)); }));
}

}  // namespace kiln
