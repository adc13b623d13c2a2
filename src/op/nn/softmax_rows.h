// The stages of a float softmax along one axis and the row kernels (kiln/runtime/microkernels.h)
// that tensorize them, shared by nn.softmax and nn.attention (src/op/nn/softmax.cc).
#pragma once

#include <string>
#include <vector>

#include "kiln/te/schedule.h"
#include "kiln/te/tensor.h"

namespace kiln::nn {

// The maximum of x along `axis` (shape: x's with that axis 1).
te::Tensor row_max_of(const te::Tensor& x, size_t axis, const std::vector<int64_t>& shape, const std::string& name);
// The sum of exp(x - max) along `axis`, the max of -inf rows taken as 0 (as the reference kernel).
te::Tensor row_sum_of(const te::Tensor& x, const te::Tensor& row_max, size_t axis, const std::vector<int64_t>& shape,
                      const std::string& name);
// exp(x - max) / sum, or x - max - log(sum) when `is_log`.
te::Tensor softmax_of(const te::Tensor& x, const te::Tensor& row_max, const te::Tensor& row_sum, size_t axis,
                      const std::vector<int64_t>& shape, const std::string& name, bool is_log);

// The three stages above for one float32 row: kiln_row_max_f32, kiln_row_sum_exp_f32, kiln_softmax_row_f32.
te::TensorIntrin row_max_intrin(const te::Tensor& x, size_t axis);
te::TensorIntrin row_sum_exp_intrin(const te::Tensor& x, size_t axis);
te::TensorIntrin softmax_row_intrin(const te::Tensor& x, size_t axis);

}  // namespace kiln::nn
