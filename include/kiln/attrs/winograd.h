// Attribute declarations of the Winograd convolution ops nn.winograd_weight_transform and
// nn.conv2d_winograd (src/op/nn/conv2d_winograd.cc, reference kernels
// src/runtime/kernels/nn/conv2d_winograd.cc); see kiln/attrs/reflect.h for the mechanism.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "kiln/attrs/reflect.h"

namespace kiln {

// F(4x4, 3x3): 4x4 outputs per tile from 6x6 inputs, 36 products per tile and channel pair.
inline constexpr int64_t kWinogradTile = 4;
inline constexpr int64_t kWinogradAlpha = kWinogradTile + 2;
inline constexpr int64_t kWinogradPoints = kWinogradAlpha * kWinogradAlpha;

// The 3x3 weight of a blocked nn.conv2d, OIHW{x}i{y}o (O/y, I/x, 3, 3, x, y), transformed to
// U = G g G^T per (output, input) channel pair and laid out for the panel GEMM:
// (36, ceil(O/32), I, 32), output channels past O zero.
struct WinogradWeightAttrs {
  int64_t out_channels = 0;

  template <class V>
  void visit(V& v) {
    v("out_channels", out_channels, "Output channels O of the weight (the panels are padded to 32).", kRequired);
  }
};

// A 3x3, stride-1, dilation-1, groups-1 float32 convolution of blocked data NCHW{x}c with a
// weight from nn.winograd_weight_transform, into NCHW{out_block}c, plus an optional per-channel
// bias, plus an optional residual of the output's type, then clamped to [clamp_min, clamp_max]
// as clip does (a folded relu: clamp_min=0).
struct Conv2DWinogradAttrs {
  std::vector<int64_t> padding{0, 0, 0, 0};
  int64_t channels = 0;
  int64_t out_block = 0;
  double clamp_min = -std::numeric_limits<double>::infinity();
  double clamp_max = std::numeric_limits<double>::infinity();

  template <class V>
  void visit(V& v) {
    v("padding", padding, "Zero padding: [top, left, bottom, right].");
    v("channels", channels, "Output channels.", kRequired);
    v("out_block", out_block, "Channels per block of the output, NCHW{out_block}c.", kRequired);
    v("clamp_min", clamp_min, "Lower bound of the output (after bias and residual); NaN stays NaN.");
    v("clamp_max", clamp_max, "Upper bound, applied after the lower one.");
  }
  bool clamps() const {
    return clamp_min != -std::numeric_limits<double>::infinity() ||
           clamp_max != std::numeric_limits<double>::infinity();
  }
};

}  // namespace kiln
