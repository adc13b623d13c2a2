// layout_transform out of the blocked layout (NCHW{x}c -> NCHW), whose schedule orders the rows
// (N, C/x, H, c, W) so a task copies whole blocks: the compiled kernel against the reference on
// channel counts of one and several blocks, odd planes, batches, and fused with its consumers.
#include <gtest/gtest.h>

#include "op/compute_test_util.h"

namespace kiln::testing {
namespace {

std::string unblock_fn(const std::string& shape, const std::string& src, const std::string& tail = "") {
  const std::string transform = "layout_transform(%x, src_layout=\"" + src + "\", dst_layout=\"NCHW\")";
  return "fn (%x: Tensor[(" + shape + "), float32], Primitive=1) { " +
         (tail.empty() ? transform : tail + "(" + transform + ")") + " }";
}

TEST(LayoutTransformUnblock, MatchesReferenceOnOddShapes) {
  expect_compiled_matches_interpreter(unblock_fn("1, 9, 56, 56, 16", "NCHW16c"));  // MobileNetV2's 144 channels
  expect_compiled_matches_interpreter(unblock_fn("2, 3, 13, 11, 16", "NCHW16c"));
  expect_compiled_matches_interpreter(unblock_fn("1, 1, 7, 5, 16", "NCHW16c"));
  expect_compiled_matches_interpreter(unblock_fn("3, 5, 9, 1, 8", "NCHW8c"));
  expect_compiled_matches_interpreter(unblock_fn("1, 2, 1, 1, 4", "NCHW4c"));
}

TEST(LayoutTransformUnblock, FusedWithConsumerMatchesReference) {
  expect_compiled_matches_interpreter(unblock_fn("1, 4, 15, 17, 16", "NCHW16c", "nn.relu"));
  expect_compiled_matches_interpreter(unblock_fn("2, 2, 7, 9, 16", "NCHW16c", "sigmoid"));
}

}  // namespace
}  // namespace kiln::testing
