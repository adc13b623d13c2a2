// Helpers shared by the reference kernels.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "kiln/runtime/attrs.h"
#include "kiln/runtime/kernel_registry.h"
#include "kiln/runtime/ndarray.h"
#include "kiln/support/error.h"

namespace kiln {

// Maps a flat index of `out_shape` to the flat index of an input of shape `in_shape`
// under numpy broadcasting (input dims of size 1, or missing leading dims, repeat).
class BroadcastIndexer {
 public:
  BroadcastIndexer(const Shape& in_shape, const Shape& out_shape);
  int64_t operator()(int64_t out_index) const;

 private:
  Shape out_shape_;
  std::vector<int64_t> in_strides_;  // 0 on broadcast dims, aligned to out dims
};

// Multi-dimensional index of a flat row-major index, and back.
std::vector<int64_t> unravel(int64_t flat, const Shape& shape);
int64_t ravel(const std::vector<int64_t>& index, const Shape& shape);

// Output functions (KernelRegistry::add_output_fn) of elementwise kernels: one output, the
// shape of every input broadcast together (or of the first input), the dtype `dtype` or else
// input `dtype_from`'s.
OutputFn broadcast_output(std::optional<DType> dtype = std::nullopt, size_t dtype_from = 0);
OutputFn same_shape_output(std::optional<DType> dtype = std::nullopt);

// Axis in [0, ndim) from a possibly negative one (kernels get validated attrs).
inline int64_t wrap_axis(int64_t axis, int64_t ndim) { return axis < 0 ? axis + ndim : axis; }

}  // namespace kiln
