// Window geometry for the reference kernels that are written once for any number of spatial
// axes (the 3-D convolutions and pools): tensors are (N, C, spatial...) and a window slides
// over the spatial axes with per-axis kernel extent, stride, dilation and padding.
#pragma once

#include <string>
#include <vector>

#include "kiln/attrs/window.h"
#include "runtime/kernels/nn/compute_view.h"

namespace kiln {

struct WindowNd {
  Shape in, out;  // spatial extents
  std::vector<int64_t> kernel, strides, dilation, pad_before, pad_after;
  size_t rank() const { return in.size(); }
};

// The window of (N, C, spatial...) tensors `in` -> `out`, with `kernel` taps and the strides,
// dilation and padding `g` decoded from the op's declared attributes.
inline WindowNd window_nd(const WindowGeometry& g, const Shape& in, const Shape& out, std::vector<int64_t> kernel) {
  check(in.size() >= 3 && in.size() == out.size(), "windowed ops expect (N, C, spatial...) tensors");
  WindowNd w;
  w.in.assign(in.begin() + 2, in.end());
  w.out.assign(out.begin() + 2, out.end());
  check(kernel.size() == w.rank() && g.strides.size() == w.rank(), "window needs one value per spatial axis");
  w.kernel = std::move(kernel);
  w.strides = g.strides;
  w.dilation = g.dilation;
  w.pad_before = g.pad_before;
  w.pad_after = g.pad_after;
  return w;
}

// Calls fn(index) for every multi-index below `extents`, in row-major order.
template <class Fn>
void for_each_index(const Shape& extents, Fn&& fn) {
  for (int64_t e : extents)
    if (e <= 0) return;
  std::vector<int64_t> index(extents.size(), 0);
  while (true) {
    fn(static_cast<const std::vector<int64_t>&>(index));
    size_t k = extents.size();
    while (k > 0 && ++index[k - 1] == extents[k - 1]) index[--k] = 0;
    if (k == 0) return;
  }
}

// Row-major flat offset of `index` in `extents`, or -1 when it lies outside.
inline int64_t offset_inside(const std::vector<int64_t>& index, const Shape& extents) {
  int64_t flat = 0;
  for (size_t k = 0; k < extents.size(); ++k) {
    if (index[k] < 0 || index[k] >= extents[k]) return -1;
    flat = flat * extents[k] + index[k];
  }
  return flat;
}

// The taps of a window, each as its per-axis offset from the window's start (tap * dilation).
inline std::vector<std::vector<int64_t>> window_taps(const WindowNd& w) {
  std::vector<std::vector<int64_t>> taps;
  for_each_index(Shape(w.kernel.begin(), w.kernel.end()), [&](const std::vector<int64_t>& t) {
    std::vector<int64_t> offset(t.size());
    for (size_t k = 0; k < t.size(); ++k) offset[k] = t[k] * w.dilation[k];
    taps.push_back(std::move(offset));
  });
  return taps;
}

// Spatial position of tap `tap` in the window of output position `out`.
inline void tap_position(const WindowNd& w, const std::vector<int64_t>& out, const std::vector<int64_t>& tap,
                         std::vector<int64_t>* pos) {
  for (size_t k = 0; k < w.rank(); ++k) (*pos)[k] = out[k] * w.strides[k] - w.pad_before[k] + tap[k];
}

}  // namespace kiln
