// How strided_slice reads its input, worked out once from the attributes and the input
// shape. Shared by the op's type relation and its reference kernel so both agree on
// negative indices, clamping and negative strides.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/attrs/indexing.h"
#include "kiln/runtime/ndarray.h"

namespace kiln {

// strided_slice's attributes, parsed and checked.
struct StridedSliceSpec {
  std::vector<int64_t> begin, end, strides;
  std::vector<int64_t> axes;  // the input dims begin[i], end[i], strides[i] apply to (in [0, ndim))
  bool size_mode = false;     // end[i] is a size (-1: to the end) and strides are 1
};

// One input dim read as `length` elements from `begin`, `stride` apart. An unknown input
// extent (-1) gives an unknown length (-1) and begin 0.
struct AxisSlice {
  int64_t begin = 0;
  int64_t stride = 1;
  int64_t length = 0;
};

// Checks the attributes against an input of rank `ndim`; throws kiln::Error naming the
// attribute when they are inconsistent (lengths, zero stride, axis out of range).
StridedSliceSpec parse_strided_slice(const StridedSliceAttrs& attrs, int64_t ndim);
// One entry per input dim; dims the spec does not mention are read whole.
std::vector<AxisSlice> plan_strided_slice(const StridedSliceSpec& spec, const Shape& input);

}  // namespace kiln
