// Helpers for the nn and image reference kernels: they compute in float (for float32,
// float16 and bfloat16) or double (for float64 and integers, whose sums of products stay
// exact in a 53-bit mantissa). Tensors stored in another type are converted once per call,
// never per element inside the arithmetic loops.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/kernels/kernel_util.h"

namespace kiln {

// Calls fn(float{}) or fn(double{}): the type a kernel computes in for tensors of dtype t.
template <class Fn>
decltype(auto) dispatch_compute(DType t, Fn&& fn) {
  if (t == DType::kFloat64 || is_int(t) || t == DType::kBool) return fn(double{});
  return fn(float{});
}

template <class C>
constexpr DType compute_dtype() {
  return std::is_same_v<C, double> ? DType::kFloat64 : DType::kFloat32;
}

template <class C, class T>
inline C to_compute(T v) {
  if constexpr (std::is_same_v<T, Half>)
    return static_cast<C>(half_to_float(v.bits));
  else if constexpr (std::is_same_v<T, BFloat16>)
    return static_cast<C>(bfloat16_to_float(v.bits));
  else
    return static_cast<C>(v);
}

// Integers round to nearest and saturate, so that e.g. a resized uint8 image stays in range.
template <class T, class C>
inline T from_compute(C v) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half{float_to_half(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16{float_to_bfloat16(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != C(0);
  } else if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return T(0);
    C r = std::nearbyint(v);
    if (r <= static_cast<C>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (r >= static_cast<C>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(r);
  } else {
    return static_cast<T>(v);
  }
}

// An input seen as contiguous elements of compute type C.
template <class C>
class ConstView {
 public:
  explicit ConstView(const NDArray& a) {
    if (a.dtype() == compute_dtype<C>()) {
      data_ = a.data<C>();
      return;
    }
    converted_.resize(static_cast<size_t>(a.numel()));
    dispatch_dtype(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = a.data<T>();
      for (size_t i = 0; i < converted_.size(); ++i) converted_[i] = to_compute<C>(src[i]);
    });
    data_ = converted_.data();
  }
  const C* data() const { return data_; }

 private:
  std::vector<C> converted_;
  const C* data_ = nullptr;
};

// An output written as elements of compute type C; commit() stores them when the output
// has another dtype.
template <class C>
class OutView {
 public:
  explicit OutView(NDArray a) : array_(std::move(a)) {
    if (array_.dtype() == compute_dtype<C>()) {
      data_ = array_.data<C>();
    } else {
      converted_.assign(static_cast<size_t>(array_.numel()), C(0));
      data_ = converted_.data();
    }
  }
  C* data() { return data_; }
  void commit() {
    if (converted_.empty()) return;
    dispatch_dtype(array_.dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* dst = array_.data<T>();
      for (size_t i = 0; i < converted_.size(); ++i) dst[i] = from_compute<T>(converted_[i]);
    });
  }

 private:
  NDArray array_;
  std::vector<C> converted_;
  C* data_ = nullptr;
};

// The indices i in [0, count) for which i * stride + offset lies in [0, limit): the part
// of a window or a row that falls inside the tensor. Empty ranges have begin == end.
struct IndexRange {
  int64_t begin, end;
};
inline IndexRange inside_range(int64_t count, int64_t stride, int64_t offset, int64_t limit) {
  int64_t begin = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t last = limit - 1 - offset;
  int64_t end = last < 0 ? 0 : std::min(count, last / stride + 1);
  return {std::min(begin, end), end};
}

// Per-axis values (extents or element strides) of the N, C, H and W axes of a 4-D tensor.
struct Axes4D {
  int64_t n, c, h, w;
};
// Picks the values of `per_dim` (indexed like the tensor's dims) for each axis letter of `layout`.
inline Axes4D by_layout(const std::vector<int64_t>& per_dim, const std::string& layout) {
  check(per_dim.size() == 4 && layout.size() == 4, "expected a 4-D tensor for layout \"", layout, "\"");
  auto pick = [&](char axis) {
    size_t pos = layout.find(axis);
    check(pos != std::string::npos, "layout \"", layout, "\" lacks axis ", axis);
    return per_dim[pos];
  };
  return {pick('N'), pick('C'), pick('H'), pick('W')};
}
inline Axes4D layout_extents(const Shape& shape, const std::string& layout) { return by_layout(shape, layout); }
inline Axes4D layout_strides(const Shape& shape, const std::string& layout) {
  return by_layout(contiguous_strides(shape), layout);
}

}  // namespace kiln
