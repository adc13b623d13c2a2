#include "kiln/tir/block_split.h"

#include <gtest/gtest.h>

#include "kiln/tir/printer.h"

namespace kiln::tir {
namespace {

// NCHW16c -> NHWC as the injective schedule writes it: a vectorised row over the 96 channels
// whose source index divides the channel by the block. Split at the block, each lane loop
// reads 16 contiguous floats.
TEST(TirBlockSplit, SplitsVectorLoopsAtTheirIndexBlock) {
  Buffer in = make_buffer("IN", DType::kFloat32, {6 * 4 * 16});
  Buffer out = make_buffer("OUT", DType::kFloat32, {4 * 96});
  Var i("i"), c("c");
  Stmt body = for_loop(i, 0, 4, ForKind::kParallel,
                       for_loop(c, 0, 96, ForKind::kVectorized,
                                store(out, {i * 96 + c}, load(in, {floordiv(c, 16) * 64 + i * 16 + floormod(c, 16)}))));
  EXPECT_EQ(to_string(split_vector_loops_at_blocks(body)),
            "for i in parallel(4):\n"
            "  for c_block in range(6):\n"
            "    for c_lane in vectorized(16):\n"
            "      OUT[i * 96 + c_block * 16 + c_lane] = IN[c_block * 64 + i * 16 + c_lane]\n");
}

// Loops that are not vectorised, divisions of anything but the loop variable, a divisor that
// does not divide the extent, and two different divisors leave the loop as it is.
TEST(TirBlockSplit, LeavesOtherLoopsAlone) {
  Buffer in = make_buffer("IN", DType::kFloat32, {1024});
  Buffer out = make_buffer("OUT", DType::kFloat32, {96});
  Var c("c"), i("i");
  const auto loop = [&](ForKind kind, int64_t extent, const PrimExpr& index) {
    return for_loop(c, 0, extent, kind, store(out, {c}, load(in, {index})));
  };
  for (const Stmt& s : {loop(ForKind::kSerial, 96, floordiv(c, 16) * 64 + floormod(c, 16)),
                        loop(ForKind::kVectorized, 96, floordiv(c + i, 16) * 64 + c),
                        loop(ForKind::kVectorized, 40, floordiv(c, 16) * 64 + floormod(c, 16)),
                        loop(ForKind::kVectorized, 96, floordiv(c, 16) * 64 + floormod(c, 8)),
                        loop(ForKind::kVectorized, 16, floordiv(c, 16) * 64 + floormod(c, 16))})
    EXPECT_EQ(to_string(split_vector_loops_at_blocks(s)), to_string(s));
}

}  // namespace
}  // namespace kiln::tir
