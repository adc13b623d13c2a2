// Register epilogues for tile calls. A tensorized tile call (a convolution's register tile, a
// depthwise row) accumulates into a local buffer that the lowering zero-fills first, and the
// fused function's element-wise tail reads that buffer back to add a bias, clamp and store the
// output: three passes over the tile besides the call. A kernel that has a variant starting its
// accumulators at the bias and storing them through the clamp does it all in registers; with
// small reductions (MobileNet's 1x1 convolutions over 16-160 channels) the passes are a tenth
// of the function. fold_tile_epilogues puts that variant in where the tail is exactly
// clamp(tile + bias [+ residual]), or its hard swish, written to blocked output in the tile's
// own order.
#pragma once

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kiln/tir/stmt.h"

namespace kiln::tir {

// The accumulators a tile call adds to: blocks x positions x lanes floats of the buffer that
// argument `pointer_arg` points into, blocks `block_stride` floats apart, positions `lanes` apart.
struct TileShape {
  size_t pointer_arg = 0;
  int64_t blocks = 1, positions = 1, lanes = 1, block_stride = 0;
};

// x * clamp(x * slope + offset, 0, 1): MobileNetV3's hard swish, x * relu6(x + 3) / 6.
struct HardSwish {
  double slope = 0, offset = 0;
};

// What the variant does instead: accumulator (b, p, l) starts at bias[b * lanes + l] (plus
// residual[b * out_block_stride + p * lanes + l] when there is a residual), is clamped to
// [lo, hi] (either bound may be infinite) or goes through the hard swish, and is stored at
// out[b * out_block_stride + p * lanes + l]. NaN stays NaN, as in the tails it replaces.
struct RegisterEpilogue {
  PrimExpr out;               // the address of output (0, 0, 0)
  PrimExpr out_block_stride;  // in floats
  PrimExpr bias;              // the address of block 0's bias
  PrimExpr residual;          // the address of residual (0, 0, 0), or undefined
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  std::optional<HardSwish> hard_swish;  // instead of the clamp
};

// A tile call that has such a variant, as the op that emits the call describes it.
struct TileEpilogueCall {
  std::string call;
  // The call's tile from its arguments; nullopt when the arguments do not say.
  std::function<std::optional<TileShape>(const std::vector<PrimExpr>& args)> tile;
  // The variant's call with the call's own arguments.
  std::function<PrimExpr(const std::vector<PrimExpr>& args, const RegisterEpilogue& epilogue)> with_epilogue;
  bool takes_residual = false;
};

// Replaces every float32 allocation of a tile that holds exactly a zero fill, one of `calls`
// accumulating into the whole tile, and one loop nest storing clamp(tile + bias [+ residual]) or
// its hard swish with loops over the tile's blocks, positions and lanes (offsets affine in them),
// by the call's variant. Anything else is left as it is, swish tails too: EfficientNet-B0's
// swish convolutions were no faster with the swish in registers (kiln_conv_nchwc_ep_f32's scalar
// swish per lane: the model 15% slower; a 16-lane swish: the same as the tail pass).
Stmt fold_tile_epilogues(const Stmt& s, const std::vector<TileEpilogueCall>& calls);
PrimFunc fold_tile_epilogues(const PrimFunc& f, const std::vector<TileEpilogueCall>& calls);

}  // namespace kiln::tir
