#include "runtime/kernels/transform/slice_plan.h"

#include <algorithm>
#include <limits>

#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

namespace {

std::string list_str(const std::vector<int64_t>& values) { return "[" + join(values) + "]"; }

std::vector<int64_t> slice_axes(const StridedSliceAttrs& attrs, size_t count, int64_t ndim) {
  std::vector<int64_t> axes;
  if (!attrs.axes) {
    if (static_cast<int64_t>(count) > ndim)
      throw std::move(
          Error("'begin' has more entries than argument 'data' has dims").expected(cat("at most ", ndim), cat(count)));
    for (size_t i = 0; i < count; ++i) axes.push_back(static_cast<int64_t>(i));
    return axes;
  }
  const std::vector<int64_t>& given = *attrs.axes;
  if (given.size() != count)
    throw std::move(
        Error("'axes' and 'begin' must have one entry per sliced axis").expected(cat(count, " axes"), list_str(given)));
  std::vector<bool> seen(static_cast<size_t>(ndim), false);
  for (int64_t axis : given) {
    int64_t a = axis < 0 ? axis + ndim : axis;
    if (a < 0 || a >= ndim)
      throw std::move(Error(cat("strided_slice axis ", axis, " out of range for argument 'data' of rank ", ndim))
                          .expected(cat("in [", -ndim, ", ", ndim, ")"), list_str(given)));
    if (seen[a])
      throw std::move(Error(cat("axis ", a, " appears twice in 'axes'")).expected("distinct axes", list_str(given)));
    seen[a] = true;
    axes.push_back(a);
  }
  return axes;
}

// numpy / ONNX Slice semantics for one dim of known extent: negative indices count from the
// end, then begin and end are clamped to the range the stride direction can reach.
AxisSlice slice_axis(int64_t begin, int64_t end, int64_t stride, int64_t extent, bool size_mode) {
  if (extent == -1) return {0, stride, -1};
  auto from_end = [extent](int64_t index) { return index < 0 ? index + extent : index; };
  if (size_mode) {
    int64_t b = std::clamp(from_end(begin), int64_t{0}, extent);
    return {b, 1, end == -1 ? extent - b : std::min(end, extent - b)};
  }
  int64_t b, e;
  if (stride > 0) {
    b = std::clamp(from_end(begin), int64_t{0}, extent);
    e = std::clamp(from_end(end), int64_t{0}, extent);
  } else {
    b = std::clamp(from_end(begin), int64_t{-1}, extent - 1);
    e = std::clamp(from_end(end), int64_t{-1}, extent - 1);
  }
  int64_t span = stride > 0 ? e - b : b - e;  // in [-extent-1, extent+1]: no overflow below
  if (span <= 0) return {b, stride, 0};
  // |stride| as unsigned so that stride = INT64_MIN is no overflow.
  uint64_t step = stride > 0 ? static_cast<uint64_t>(stride) : uint64_t{0} - static_cast<uint64_t>(stride);
  int64_t length = static_cast<int64_t>((static_cast<uint64_t>(span) - 1) / step + 1);
  return {b, stride, length};
}

}  // namespace

StridedSliceSpec parse_strided_slice(const StridedSliceAttrs& attrs, int64_t ndim) {
  StridedSliceSpec spec;
  spec.begin = attrs.begin;
  spec.end = attrs.end;
  spec.strides = attrs.strides.value_or(std::vector<int64_t>{});
  spec.size_mode = attrs.slice_mode == "size";
  size_t count = spec.begin.size();
  if (spec.end.size() > count)
    throw std::move(Error("'end' has more entries than 'begin'").expected(list_str(spec.begin), list_str(spec.end)));
  if (spec.strides.size() > count)
    throw std::move(
        Error("'strides' has more entries than 'begin'").expected(list_str(spec.begin), list_str(spec.strides)));
  spec.axes = slice_axes(attrs, count, ndim);
  // Missing strides are 1 (size mode ignores strides); missing ends reach the end in the
  // stride's direction.
  if (spec.size_mode) spec.strides.clear();
  spec.strides.resize(count, 1);
  for (size_t i = 0; i < count; ++i) {
    if (spec.strides[i] == 0)
      throw std::move(
          Error(cat("stride ", i, " of 'strides' is 0")).expected("a non-zero stride", list_str(spec.strides)));
    if (i < spec.end.size()) {
      if (spec.size_mode && spec.end[i] < -1)
        throw std::move(Error(cat("size ", i, " of 'end' is negative (slice_mode=\"size\")"))
                            .expected("a size >= 0, or -1 for the rest", list_str(spec.end)));
      continue;
    }
    spec.end.push_back(spec.size_mode        ? -1
                       : spec.strides[i] > 0 ? std::numeric_limits<int64_t>::max()
                                             : std::numeric_limits<int64_t>::min());
  }
  return spec;
}

std::vector<AxisSlice> plan_strided_slice(const StridedSliceSpec& spec, const Shape& input) {
  std::vector<AxisSlice> plan;
  for (int64_t extent : input) plan.push_back({0, 1, extent});
  for (size_t i = 0; i < spec.axes.size(); ++i) {
    int64_t axis = spec.axes[i];
    plan[axis] = slice_axis(spec.begin[i], spec.end[i], spec.strides[i], input[axis], spec.size_mode);
  }
  return plan;
}

}  // namespace kiln
