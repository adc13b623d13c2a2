// Byte-moving helpers for the data-movement kernels. They never look at element values,
// so one code path serves every dtype.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "kiln/runtime/ndarray.h"

namespace kiln {

// Fills the contiguous `dst` of shape `shape` from a strided view of `src`: element
// (i_0, ..., i_n) is read at src element `offset + sum_d i_d * strides[d]`. Offsets and
// strides count elements of `elem_bytes` bytes; strides may be negative.
void gather_strided(void* dst, const void* src, const Shape& shape, const std::vector<int64_t>& strides, int64_t offset,
                    size_t elem_bytes);

// Throws kiln::Error naming `op` unless the kernel was given `num_inputs` inputs and
// `num_outputs` outputs (a negative count accepts any number, at least one).
void expect_arity(const std::string& op, std::span<const NDArray> inputs, int64_t num_inputs,
                  std::span<NDArray> outputs, int64_t num_outputs);

// `axis` mapped into [0, ndim); throws kiln::Error naming `op` when it is out of range.
int64_t checked_axis(const std::string& op, int64_t axis, int64_t ndim);

// Throws kiln::Error naming `op` unless the preallocated output has this shape and dtype.
void expect_output(const std::string& op, const NDArray& output, const Shape& shape, DType dtype);

}  // namespace kiln
