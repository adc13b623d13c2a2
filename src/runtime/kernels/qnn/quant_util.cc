#include "runtime/kernels/qnn/quant_util.h"

#include <cmath>

#include "kiln/support/strings.h"

namespace kiln {

Rounding parse_rounding(const std::string& name) {
  if (name == "UPWARD") return Rounding::kUpward;
  if (name == "TONEAREST") return Rounding::kToNearest;
  if (name == "HALF_TO_EVEN") return Rounding::kHalfToEven;
  throw std::move(Error("unknown rounding rule").expected("UPWARD, TONEAREST or HALF_TO_EVEN", name));
}

double round_with(double v, Rounding rule) {
  switch (rule) {
    case Rounding::kUpward: return std::floor(v + 0.5);
    case Rounding::kToNearest: return std::round(v);
    case Rounding::kHalfToEven:
      // A tie goes to the even neighbour: 2.5 -> 2, 3.5 -> 4, -2.5 -> -2.
      return std::abs(v - std::trunc(v)) == 0.5 ? 2.0 * std::round(v / 2.0) : std::round(v);
  }
  return v;
}

double saturate(double v, DType t) {
  if (std::isnan(v)) return 0.0;
  double lo = 0, hi = 0;
  switch (t) {
    case DType::kInt8: lo = -128, hi = 127; break;
    case DType::kUInt8: lo = 0, hi = 255; break;
    case DType::kInt16: lo = -32768, hi = 32767; break;
    case DType::kUInt16: lo = 0, hi = 65535; break;
    case DType::kInt32: lo = -2147483648.0, hi = 2147483647.0; break;
    default: throw Error(cat("cannot saturate to ", dtype_name(t), ": not a quantized dtype"));
  }
  return std::min(hi, std::max(lo, v));
}

QuantParam::QuantParam(const NDArray& param, const Shape& data_shape, int64_t axis) : values_(param.to_doubles()) {
  check(!values_.empty(), "a quantization parameter is empty");
  if (values_.size() == 1) return;
  axis = wrap_axis(axis, static_cast<int64_t>(data_shape.size()));
  check(axis >= 0 && axis < static_cast<int64_t>(data_shape.size()) &&
            data_shape[static_cast<size_t>(axis)] == static_cast<int64_t>(values_.size()),
        "a per-channel quantization parameter of ", values_.size(), " values does not fit axis ", axis, " of data ",
        shape_str(data_shape));
  channels_ = data_shape[static_cast<size_t>(axis)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < data_shape.size(); ++d) inner_ *= data_shape[d];
}

}  // namespace kiln
