// Helpers shared by compute definitions.
#pragma once

#include <functional>
#include <vector>

#include "kiln/op/strategy.h"
#include "kiln/te/tensor.h"

namespace kiln {

// An elementwise compute of a one-argument op: out[i] = fn(x[i], call).
using ElementFn = std::function<tir::PrimExpr(tir::PrimExpr, const ComputeInput&)>;
ComputeFn elementwise_compute(ElementFn fn);

// The element of `t` that numpy broadcasting pairs with output element `out` (t's axes align
// with the output's last axes; an axis of extent 1 repeats).
tir::PrimExpr broadcast_read(const te::Tensor& t, const te::Indices& out);

// The element of the 1-D tensor `v` (one value per channel, or a single value) that goes with
// output element `out`, whose channel is out[axis].
tir::PrimExpr channel_read(const te::Tensor& v, const te::Indices& out, int64_t axis);

// The element of `t` at the same row-major position as output element `out` of an output
// of shape `out_shape` (reshape and friends: same elements, another shape).
tir::PrimExpr row_major_read(const te::Tensor& t, const te::Indices& out, const std::vector<int64_t>& out_shape);

// The same indices as expressions.
std::vector<tir::PrimExpr> index_exprs(const te::Indices& indices);

// The same indices with the one at `axis` replaced by `value`.
std::vector<tir::PrimExpr> at_axis(const te::Indices& indices, size_t axis, tir::PrimExpr value);

// The range of an integer dtype, as float bounds to compare with and as immediates of the
// dtype (uint64's maximum is written through its bit pattern, which the C emitter casts back).
struct IntegerRange {
  double low = 0, high = 0;
  int64_t low_bits = 0, high_bits = 0;
};

IntegerRange integer_range(DType dtype);

// `value` converted to `dtype` as the reference kernels convert: a float to an integer dtype
// truncates toward zero, saturates at the dtype's range and maps NaN to 0 (C leaves
// out-of-range conversions undefined); every other conversion is C's. Callers wanting another
// rounding round first.
tir::PrimExpr saturating_cast(const tir::PrimExpr& value, DType dtype);

}  // namespace kiln
