// nn.conv2d's compute and schedule (src/op/nn/conv.cc) over operands chosen by the caller:
// qnn.conv2d convolves its zero-point-shifted int16 operands into an int32 accumulator with the
// same paths (direct, padded rows, im2col, depthwise, generic) as float convolutions.
#pragma once

#include <optional>
#include <string>

#include "kiln/attrs/layout.h"
#include "kiln/attrs/nn.h"
#include "kiln/op/strategy.h"
#include "kiln/te/tensor.h"

namespace kiln::nn {

// The dtypes the core multiplies (`dtype`) and sums in (`acc`). Unset: the data's dtype and
// the reference kernels' accumulator (nn.conv2d's own semantics).
struct ConvOperandTypes {
  std::optional<DType> dtype, acc;
};

// Name of an operand tensor a caller computes (data or weight) for the call named `base`:
// the schedule finds these stages by name.
std::string conv_operand_name(const std::string& base, const std::string& which);

// The convolution of `call` (nn.conv2d attributes, types and output type) with `data` (NCHW)
// and `weight` (OIHW) of dtype types.dtype as operands.
te::Tensor conv2d_operands_compute(const ComputeInput& call, const Conv2DAttrs& attrs, const te::Tensor& data,
                                   const te::Tensor& weight, const ConvOperandTypes& types);
// Its schedule; operand stages named by conv_operand_name are inlined into the data's copy,
// or computed once at root when the micro-kernel reads them.
void conv2d_operands_schedule(const ScheduleInput& in, const Conv2DAttrs& attrs, const ConvOperandTypes& types);

// nn.conv2d in the blocked layouts `blocks` (conv2d_blocks of its attributes; src/op/nn/conv2d_nchwc.cc):
// the type relation, the compute (innermost loop over the output channel block) and its schedule.
Type blocked_conv2d_relation(const std::vector<Type>& args, const Conv2DAttrs& attrs, const ConvLayoutChoice& blocks);
te::Tensor blocked_conv2d_compute(const ComputeInput& call, const Conv2DAttrs& attrs, const ConvLayoutChoice& blocks);
void blocked_conv2d_schedule(const ScheduleInput& in, const Conv2DAttrs& attrs, const ConvLayoutChoice& blocks);

// The register tile of kiln_conv_nchwc_f32 (float32 output blocks of `lanes` channels, one vector)
// over `width` computed positions of `group_blocks` output blocks: `positions` (a divisor of
// width) x `blocks` (a divisor of group_blocks).
struct ConvRegisterTile {
  int64_t positions = 0, blocks = 0;
};
// Positions of an AVX2 tile at most (8-lane blocks): its kernel walks any number in register
// sub-tiles, and a wider tile gives them better shapes (17 x 4 as 6 + 6 + 5 positions x 2 blocks,
// where 9 x 4 on a copy padded to 18 splits 5 + 4) and odd widths up to it need no padded copy
// (Inception's 17 and 35); 36 keeps a chunk's input rows (16 blocks) and weights (16 KB) near L1.
inline constexpr int64_t kConv8TilePositions = 36;
ConvRegisterTile conv_register_tile(int64_t width, int64_t group_blocks, int64_t lanes);

}  // namespace kiln::nn
