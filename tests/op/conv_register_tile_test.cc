// The register tile kiln_conv_nchwc_f32 runs (conv_register_tile), chosen by the vector width:
// with AVX-512's 16 lanes the fewest loads per multiply-add within 28 accumulators; with AVX2's
// 8 lanes, whose kernel walks the tile in register sub-tiles, the most positions (up to
// kConv8TilePositions) and the most blocks (up to 4). Positions divide the computed width,
// blocks the group's output blocks.
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
      // AVX2: the most positions and the most blocks, each on its own.
      {56, 4, 8, 28, 4},
      {7, 32, 8, 7, 4},
      {12, 6, 8, 12, 3},
      {6, 2, 8, 6, 2},
      {28, 3, 8, 28, 3},
      {35, 8, 8, 35, 4},  // Inception's odd widths take whole rows
      {17, 5, 8, 17, 1},  // a prime number of blocks
      {224, 2, 8, 32, 2},
      {37, 4, 8, 1, 4},  // a prime width past the limit (the compute pads it to a multiple of a tile)
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
