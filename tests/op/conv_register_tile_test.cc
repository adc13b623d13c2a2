// The register tile kiln_conv_nchwc_f32 runs (conv_register_tile), chosen by the vector width:
// with AVX-512's 16 lanes the fewest loads per multiply-add within 28 accumulators, with AVX2's
// 8 lanes the most positions whose accumulators, weight vectors and broadcast fit 16 registers,
// then the most blocks. Positions divide the computed width, blocks the group's output blocks.
#include <gtest/gtest.h>

#include <cstdint>

#include "op/nn/conv2d_compute.h"

namespace kiln::nn {
namespace {

struct TileCase {
  int64_t width, group_blocks, lanes;
  int64_t positions, blocks;
};

TEST(ConvRegisterTile, ChosenByTheVectorWidth) {
  const TileCase cases[] = {
      // AVX-512: ResNet's widths with four blocks take 7x4 (11 loads for 28 multiply-adds).
      {56, 4, 16, 7, 4},
      {14, 8, 16, 7, 4},
      {7, 32, 16, 7, 4},
      {12, 6, 16, 6, 3},  // 9 loads for 18 beat 12x2's 14 for 24
      {17, 1, 16, 1, 1},  // a prime width, one block per group
      // AVX2: the most positions first.
      {56, 4, 8, 14, 1},  // 14 accumulators + 1 weight + 1 broadcast = 16 registers
      {7, 32, 8, 7, 1},   // 7x2 would need 17
      {12, 6, 8, 12, 1},
      {6, 2, 8, 6, 2},  // the same positions with more blocks: 12 + 2 + 1
      {28, 3, 8, 14, 1},
  };
  for (const TileCase& c : cases) {
    const ConvRegisterTile tile = conv_register_tile(c.width, c.group_blocks, c.lanes);
    EXPECT_EQ(tile.positions, c.positions)
        << "width " << c.width << ", " << c.group_blocks << " blocks, " << c.lanes << " lanes";
    EXPECT_EQ(tile.blocks, c.blocks) << "width " << c.width << ", " << c.group_blocks << " blocks, " << c.lanes
                                     << " lanes";
  }
}

}  // namespace
}  // namespace kiln::nn
