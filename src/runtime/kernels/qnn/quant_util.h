// Helpers shared by the qnn reference kernels: rounding rules, saturation to an integer
// dtype, and reading per-tensor or per-channel quantization parameters.
#pragma once

#include <string>

#include "runtime/kernels/kernel_util.h"

namespace kiln {

enum class Rounding { kUpward, kToNearest, kHalfToEven };

// "UPWARD" (ties toward +inf), "TONEAREST" (ties away from zero), "HALF_TO_EVEN".
Rounding parse_rounding(const std::string& name);
double round_with(double v, Rounding rule);
// v clamped to the range of the integer dtype t (NaN becomes 0).
double saturate(double v, DType t);

// A quantization parameter of one value, or one value per channel of a data axis.
class QuantParam {
 public:
  // `axis` is the channel axis of `data_shape`; ignored when the parameter has one value.
  QuantParam(const NDArray& param, const Shape& data_shape, int64_t axis);
  // The parameter's value for element `flat_index` of the data.
  double operator()(int64_t flat_index) const {
    return values_.size() == 1 ? values_[0] : values_[static_cast<size_t>((flat_index / inner_) % channels_)];
  }

 private:
  std::vector<double> values_;
  int64_t inner_ = 1, channels_ = 1;
};

}  // namespace kiln
