// Attribute declarations of nn.conv2d_pointwise_depthwise (src/op/nn/conv2d_pointwise_depthwise.cc,
// reference kernel src/runtime/kernels/nn/conv2d_pointwise_depthwise.cc), the pair an inverted
// residual block opens with: a 1x1 convolution, its bias and activation, then a depthwise
// convolution, its bias and activation, in one call; see kiln/attrs/reflect.h for the mechanism.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kiln/attrs/reflect.h"
#include "kiln/attrs/window.h"

namespace kiln {

// An activation folded into a convolution call: "none", "clip" (to [clamp_min, clamp_max], NaN
// kept, as clip does; a relu is clip to [0, inf)) or "swish" (x * sigmoid(x)).
struct FoldedActivation {
  std::string kind = "none";
  double clamp_min = -std::numeric_limits<double>::infinity();
  double clamp_max = std::numeric_limits<double>::infinity();

  bool none() const { return kind == "none"; }
};

// data NCHW{x}c (N, C/x, H, W, x); pointwise weight OIHW{x}i16o (E/16, C/x, 1, 1, x, 16); its bias
// (E); depthwise weight OIHW1i16o (E/16, 1, KH, KW, 1, 16); optional depthwise bias (E) ->
// NCHW16c (N, E/16, OH, OW, 16).
struct Conv2DPointwiseDepthwiseAttrs {
  std::vector<int64_t> strides{1, 1};
  std::vector<int64_t> padding{0, 0, 0, 0};
  std::vector<int64_t> dilation{1, 1};
  std::string pointwise_activation = "none";
  double pointwise_min = -std::numeric_limits<double>::infinity();
  double pointwise_max = std::numeric_limits<double>::infinity();
  std::string depthwise_activation = "none";
  double depthwise_min = -std::numeric_limits<double>::infinity();
  double depthwise_max = std::numeric_limits<double>::infinity();

  template <class V>
  void visit(V& v) {
    v("strides", strides, "Depthwise strides: [height, width].");
    v("padding", padding, "Depthwise zero padding: [top, left, bottom, right].");
    v("dilation", dilation, "Depthwise dilation: [height, width].");
    v("pointwise_activation", pointwise_activation,
      "After the 1x1 convolution and its bias: \"none\", \"clip\" (to [pointwise_min, pointwise_max]) or "
      "\"swish\" (x * sigmoid(x)).");
    v("pointwise_min", pointwise_min, "Lower bound of the pointwise clip.");
    v("pointwise_max", pointwise_max, "Upper bound of the pointwise clip.");
    v("depthwise_activation", depthwise_activation, "After the depthwise convolution and its bias, as above.");
    v("depthwise_min", depthwise_min, "Lower bound of the depthwise clip.");
    v("depthwise_max", depthwise_max, "Upper bound of the depthwise clip.");
  }
  void validate() const;
  Window2D window() const { return window_2d(strides, dilation, padding); }
  FoldedActivation pointwise() const { return {pointwise_activation, pointwise_min, pointwise_max}; }
  FoldedActivation depthwise() const { return {depthwise_activation, depthwise_min, depthwise_max}; }
};

}  // namespace kiln
