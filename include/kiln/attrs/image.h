// Attribute declarations of image.resize2d and image.grid_sample; see kiln/attrs/reflect.h for
// the mechanism. src/op/image/{resize,grid_sample}.cc derive the schemas from them, the
// reference kernels (src/runtime/kernels/image/) and the ONNX Resize/Upsample/GridSample
// converters build and read the same structs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/attrs/reflect.h"

namespace kiln {

// How image.resize2d and dyn.resize2d interpolate: everything but the output size.
struct ResizeMethodAttrs {
  std::string layout = "NCHW";
  std::string method = "linear";
  std::string coordinate_transformation_mode = "half_pixel";
  std::string rounding_method;
  double cubic_alpha = -0.5;
  int64_t cubic_exclude = 0;
  double extrapolation_value = 0.0;
  std::string out_dtype;
  bool antialias = false;

  template <class V>
  void visit(V& v) {
    v("layout", layout, "Layout of the data: NCHW, NHWC or NCHW{x}c (channels in blocks of x).");
    v("method", method, "nearest_neighbor, linear or cubic.");
    v("coordinate_transformation_mode", coordinate_transformation_mode,
      "How an output index maps to an input coordinate, as ONNX Resize: half_pixel, half_pixel_symmetric, "
      "align_corners, asymmetric, pytorch_half_pixel, tf_half_pixel_for_nn or tf_crop_and_resize.");
    v("rounding_method", rounding_method,
      "Rounding of nearest_neighbor: round, floor, ceil, round_prefer_floor, round_prefer_ceil; \"\" for round "
      "with align_corners, floor otherwise.");
    v("cubic_alpha", cubic_alpha, "The cubic kernel's parameter (ONNX cubic_coeff_a).");
    v("cubic_exclude", cubic_exclude, "1: taps outside the input get weight 0 and the rest are renormalised.");
    v("extrapolation_value", extrapolation_value, "Value of outputs sampling outside the input (tf_crop_and_resize).");
    v("out_dtype", out_dtype, "Dtype of the output; \"\" for the data's.");
    v("antialias", antialias,
      "linear and cubic: when shrinking an axis by scale s < 1, stretch the filter by 1 / s so every input "
      "element contributes (ONNX Resize 18 antialias).");
  }
  void validate() const;
};

struct Resize2DAttrs : ResizeMethodAttrs {
  std::vector<int64_t> size;
  std::vector<double> roi{0, 0, 0, 0};
  std::optional<std::vector<double>> scales;

  template <class V>
  void visit(V& v) {
    v("size", size, "Output [height, width].", kRequired);
    v("roi", roi, "[start_h, start_w, end_h, end_w], normalised; read by tf_crop_and_resize only.");
    ResizeMethodAttrs::visit(v);
    v("scales", scales,
      "[scale_h, scale_w] (output / input) driving the coordinate mapping; None for size / input extent.");
  }
  void validate() const;
};

struct GridSampleAttrs {
  std::string method = "bilinear";
  std::string layout = "NCHW";
  std::string padding_mode = "zeros";
  bool align_corners = false;

  template <class V>
  void visit(V& v) {
    v("method", method, "Sampling: bilinear, nearest (ties to even) or bicubic (A = -0.75).");
    v("layout", layout, "Layout of the data (only NCHW).");
    v("padding_mode", padding_mode, "Values outside the data: zeros, border or reflection.");
    v("align_corners", align_corners, "-1 and 1 are the centres of the corner pixels rather than their outer edges.");
  }
  void validate() const;
};

}  // namespace kiln
