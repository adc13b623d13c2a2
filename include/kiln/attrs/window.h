// Window geometry of the convolutions and pools, decoded from their declared attributes in one
// place for the type relations, the computes and the reference kernels. Attributes may be
// written as Relay and ONNX write them: a single value for every spatial axis or one per axis;
// padding also as all begins then all ends. The check_* functions are what the declarations'
// validate() call, so the decoders below may assume well-formed values.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

struct Pair2D {
  int64_t h, w;
};

struct Padding2D {
  int64_t top, left, bottom, right;
};

// Strides, dilation and padding of a 2-D window.
struct Window2D {
  Pair2D strides, dilation;
  Padding2D padding;
};

// A window over `rank` spatial axes, every value given per axis.
struct WindowGeometry {
  std::vector<int64_t> strides, dilation, pad_before, pad_after;
};

// Throws unless `values` is [v] or has `rank` values, each at least `minimum`.
void check_spatial(const std::string& name, const std::vector<int64_t>& values, size_t rank, int64_t minimum);
// Throws unless `values` (a padding) has 1, `rank` or 2 * `rank` non-negative values.
void check_padding(const std::string& name, const std::vector<int64_t>& values, size_t rank);
// Throws unless `value` is one of `allowed`.
void check_choice(const std::string& name, const std::string& value, std::initializer_list<std::string_view> allowed);
// Throws unless `value` is at least `minimum`.
void check_at_least(const std::string& name, int64_t value, int64_t minimum);

// [v] or one value per axis, as `rank` values.
std::vector<int64_t> spatial_values(const std::vector<int64_t>& values, size_t rank);
// A padding as 2 * `rank` values: begins, then ends.
std::vector<int64_t> padding_values(const std::vector<int64_t>& values, size_t rank);
Pair2D pair_2d(const std::vector<int64_t>& values);
Padding2D padding_2d(const std::vector<int64_t>& values);
Window2D window_2d(const std::vector<int64_t>& strides, const std::vector<int64_t>& dilation,
                   const std::vector<int64_t>& padding);
WindowGeometry window_geometry(const std::vector<int64_t>& strides, const std::vector<int64_t>& dilation,
                               const std::vector<int64_t>& padding, size_t rank);

}  // namespace kiln
