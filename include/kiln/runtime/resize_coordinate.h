// ONNX Resize's coordinate transformations and nearest-neighbour rounding, written once for the
// reference kernel of image.resize2d (X = double) and for its compute in generated code (X = a
// float64 loop-IR expression): everything but the output index is a constant of the call, so
// the only operations on X are arithmetic with constants, floor, ceil and round (half away from
// zero), found by argument-dependent lookup (std:: for double).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "kiln/support/error.h"

namespace kiln {

enum class ResizeCoordMode {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
enum class ResizeRounding { kRound, kFloor, kCeil, kPreferFloor, kPreferCeil };

inline ResizeCoordMode resize_coord_mode(const std::string& name) {
  if (name == "half_pixel") return ResizeCoordMode::kHalfPixel;
  if (name == "half_pixel_symmetric") return ResizeCoordMode::kHalfPixelSymmetric;
  if (name == "pytorch_half_pixel") return ResizeCoordMode::kPytorchHalfPixel;
  if (name == "align_corners") return ResizeCoordMode::kAlignCorners;
  if (name == "asymmetric") return ResizeCoordMode::kAsymmetric;
  if (name == "tf_half_pixel_for_nn") return ResizeCoordMode::kTfHalfPixelForNn;
  if (name == "tf_crop_and_resize") return ResizeCoordMode::kTfCropAndResize;
  throw Error(cat("unknown coordinate_transformation_mode \"", name, "\""));
}

// "" picks Relay's default: round for align_corners, floor otherwise.
inline ResizeRounding resize_rounding(const std::string& name, ResizeCoordMode mode) {
  if (name.empty()) return mode == ResizeCoordMode::kAlignCorners ? ResizeRounding::kRound : ResizeRounding::kFloor;
  if (name == "round") return ResizeRounding::kRound;
  if (name == "floor") return ResizeRounding::kFloor;
  if (name == "ceil") return ResizeRounding::kCeil;
  if (name == "round_prefer_floor") return ResizeRounding::kPreferFloor;
  if (name == "round_prefer_ceil") return ResizeRounding::kPreferCeil;
  throw Error(cat("unknown rounding_method \"", name, "\""));
}

struct ResizeAxis {
  int64_t in, out;
  double scale;  // output / input, from 'scales' when given
  double roi_start, roi_end;
};

// The input coordinate that output index x samples (ONNX Resize's x_original).
template <class X>
X resize_source_coordinate(const X& x, const ResizeAxis& a, ResizeCoordMode mode) {
  const double in = static_cast<double>(a.in);
  const double resized = a.scale * in;  // length_resized; equals a.out unless 'scales' is given
  switch (mode) {
    case ResizeCoordMode::kHalfPixel: return (x + 0.5) / a.scale - 0.5;
    case ResizeCoordMode::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(a.out) / resized;
      return in / 2 * (1 - adjustment) + (x + 0.5) / a.scale - 0.5;
    }
    case ResizeCoordMode::kPytorchHalfPixel: return resized > 1 ? (x + 0.5) / a.scale - 0.5 : X(0.0);
    case ResizeCoordMode::kAlignCorners: return resized == 1 ? X(0.0) : x * (in - 1) / (resized - 1);
    case ResizeCoordMode::kAsymmetric: return x / a.scale;
    case ResizeCoordMode::kTfHalfPixelForNn: return (x + 0.5) / a.scale;
    case ResizeCoordMode::kTfCropAndResize:
      return resized > 1 ? a.roi_start * (in - 1) + x * (a.roi_end - a.roi_start) * (in - 1) / (resized - 1)
                         : X(0.5 * (a.roi_start + a.roi_end) * (in - 1));
  }
  return X(0.0);
}

// The nearest input index of coordinate x, still as an X. The "prefer" roundings are written
// as one floor or ceil: x - 0.5 and x + 0.5 are exact for the coordinates of any real image.
template <class X>
X resize_round(const X& x, ResizeRounding r) {
  using std::ceil;
  using std::floor;
  using std::round;
  switch (r) {
    case ResizeRounding::kRound: return round(x);
    case ResizeRounding::kFloor: return floor(x);
    case ResizeRounding::kCeil: return ceil(x);
    case ResizeRounding::kPreferFloor: return ceil(x - 0.5);
    case ResizeRounding::kPreferCeil: return floor(x + 0.5);
  }
  return floor(x);
}

}  // namespace kiln
