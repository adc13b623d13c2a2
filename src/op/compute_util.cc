#include "op/compute_util.h"

#include <limits>
#include <type_traits>

namespace kiln {

IntegerRange integer_range(DType dtype) {
  IntegerRange r;
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      using L = std::numeric_limits<T>;
      r = {static_cast<double>(L::lowest()), static_cast<double>(L::max()), static_cast<int64_t>(L::lowest()),
           static_cast<int64_t>(static_cast<uint64_t>(L::max()))};
    }
  });
  return r;
}

tir::PrimExpr saturating_cast(const tir::PrimExpr& value, DType dtype) {
  const DType from = value.dtype();
  if (from == dtype) return value;
  if (!is_float(from) || is_float(dtype) || dtype == DType::kBool) return tir::cast(dtype, value);
  const IntegerRange r = integer_range(dtype);
  const tir::PrimExpr low = tir::make_const(from, r.low), high = tir::make_const(from, r.high);
  return tir::select(
      tir::ne(value, value), tir::int_imm(0, dtype),
      tir::select(tir::le(value, low), tir::int_imm(r.low_bits, dtype),
                  tir::select(tir::ge(value, high), tir::int_imm(r.high_bits, dtype), tir::cast(dtype, value))));
}

ComputeFn elementwise_compute(ElementFn fn) {
  return [fn = std::move(fn)](const ComputeInput& call) {
    const te::Tensor x = call.args[0];
    return std::vector<te::Tensor>{
        te::compute(x.shape(), call.name, [&](const te::Indices& i) { return fn(x(index_exprs(i)), call); })};
  };
}

std::vector<tir::PrimExpr> index_exprs(const te::Indices& indices) {
  return std::vector<tir::PrimExpr>(indices.begin(), indices.end());
}

std::vector<tir::PrimExpr> at_axis(const te::Indices& indices, size_t axis, tir::PrimExpr value) {
  std::vector<tir::PrimExpr> out = index_exprs(indices);
  out[axis] = std::move(value);
  return out;
}

tir::PrimExpr channel_read(const te::Tensor& v, const te::Indices& out, int64_t axis) {
  if (axis < 0) axis += static_cast<int64_t>(out.size());
  return v({v.shape()[0] == 1 ? tir::int_imm(0) : tir::PrimExpr(out[static_cast<size_t>(axis)])});
}

tir::PrimExpr row_major_read(const te::Tensor& t, const te::Indices& out, const std::vector<int64_t>& out_shape) {
  tir::PrimExpr flat = tir::int_imm(0);
  for (size_t d = 0; d < out.size(); ++d) flat = flat * tir::int_imm(out_shape[d]) + tir::PrimExpr(out[d]);
  std::vector<tir::PrimExpr> index(t.ndim());
  for (size_t d = t.ndim(); d-- > 0;) {
    const int64_t extent = t.shape()[d];
    index[d] = d == 0 ? flat : tir::floormod(flat, tir::int_imm(extent));
    if (d > 0) flat = tir::floordiv(flat, tir::int_imm(extent));
  }
  return t(index);
}

tir::PrimExpr broadcast_read(const te::Tensor& t, const te::Indices& out) {
  const size_t rank = t.ndim(), offset = out.size() - rank;
  std::vector<tir::PrimExpr> index;
  for (size_t k = 0; k < rank; ++k)
    index.push_back(t.shape()[k] == 1 ? tir::int_imm(0) : tir::PrimExpr(out[offset + k]));
  return t(index);
}

}  // namespace kiln
