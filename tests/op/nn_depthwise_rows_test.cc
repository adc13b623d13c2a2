// Float32 depthwise convolutions in the blocked layout (NCHW{x}c, weight OIHW1i{x}o) run the row
// micro-kernel kiln_dwconv_row_f32 with the taps clamped to the data: no padded copy of the input.
// Each case is lowered, compiled and run against the interpreter's reference kernel, alone and
// with a fused bias + clip tail, over padding 0/1/2 (uneven too), stride 1/2, dilation 2, 3x3 and
// 5x5 windows (and 1x3, 7x1), widths that are not multiples of the register tile, odd heights,
// 8- and 16-channel blocks and batch 2. Other dtypes keep the generic blocked schedule.
#include <gtest/gtest.h>

#include <string>

#include "op/compute_test_util.h"

namespace kiln {
namespace {

using testing::CompareOptions;
using testing::expect_compiled_matches_interpreter;

struct DepthwiseCase {
  int64_t n, blocks, h, w, kh, kw;
  std::string strides, padding;  // "[sh, sw]", "[top, left, bottom, right]"
  int64_t lanes = 16;
  std::string dilation = "[1, 1]";
};

std::string dims(std::initializer_list<int64_t> d) {
  std::string out;
  for (int64_t v : d) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

// nn.conv2d alone, or followed by the bias add and clip FuseOps puts in its group.
std::string depthwise_fn(const DepthwiseCase& c, bool tail, const std::string& dtype = "float32") {
  const std::string lanes = std::to_string(c.lanes);
  std::string fn = "fn (%x: Tensor[(" + dims({c.n, c.blocks, c.h, c.w, c.lanes}) + "), " + dtype + "], %w: Tensor[(" +
                   dims({c.blocks, 1, c.kh, c.kw, 1, c.lanes}) + "), " + dtype + "]";
  if (tail) fn += ", %b: Tensor[(" + dims({1, c.blocks, 1, 1, c.lanes}) + "), " + dtype + "]";
  fn += ", Primitive=1) { %0 = nn.conv2d(%x, %w, strides=" + c.strides + ", padding=" + c.padding +
        ", dilation=" + c.dilation + ", groups=" + std::to_string(c.blocks * c.lanes) + ", data_layout=\"NCHW" + lanes +
        "c\", kernel_layout=\"OIHW1i" + lanes + "o\", out_layout=\"NCHW" + lanes + "c\");";
  fn += tail ? " %1 = add(%0, %b); clip(%1, a_min=0f, a_max=1.5f) }" : " %0 }";
  return fn;
}

CompareOptions tolerance() {
  CompareOptions o;
  o.rtol = 1e-5;
  o.atol = 1e-5;
  return o;
}

const std::vector<DepthwiseCase> kCases = {
    {1, 2, 13, 13, 3, 3, "[1, 1]", "[1, 1, 1, 1]"},                // 13 = one tile of 12 and one position
    {2, 1, 9, 29, 3, 3, "[1, 1]", "[1, 1, 1, 1]"},                 // batch 2, odd height, 29 = 2 tiles + 4 + 1
    {1, 3, 15, 17, 3, 3, "[2, 2]", "[1, 1, 1, 1]"},                // stride 2, odd sizes
    {1, 1, 16, 16, 3, 3, "[2, 2]", "[0, 0, 1, 1]"},                // TF-style "same" padding for stride 2
    {1, 2, 11, 23, 5, 5, "[1, 1]", "[2, 2, 2, 2]"},                // 5x5, padding 2
    {1, 2, 14, 14, 5, 5, "[2, 2]", "[1, 1, 2, 2]"},                // 5x5 stride 2, uneven padding
    {1, 1, 7, 7, 5, 5, "[1, 1]", "[2, 2, 2, 2]"},                  // the window wider than the interior
    {1, 1, 12, 10, 3, 3, "[1, 1]", "[0, 0, 0, 0]"},                // no padding
    {1, 1, 10, 19, 3, 3, "[1, 1]", "[2, 2, 2, 2]", 16, "[2, 2]"},  // dilation 2
    {1, 1, 9, 20, 1, 3, "[1, 2]", "[0, 1, 0, 1]"},                 // 1x3, strides differ
    {1, 1, 12, 5, 7, 1, "[1, 1]", "[3, 0, 3, 0]"},                 // 7x1
    {1, 2, 10, 13, 3, 3, "[1, 1]", "[1, 1, 1, 1]", 8},             // 8-channel blocks
};

TEST(DepthwiseRows, CompiledMatchesReference) {
  for (const DepthwiseCase& c : kCases) {
    for (bool tail : {false, true}) {
      const std::string fn = depthwise_fn(c, tail);
      SCOPED_TRACE(fn);
      const std::string source = expect_compiled_matches_interpreter(fn, tolerance());
      // The bias and clip of the tail are applied in the kernel's registers (its _ep variant).
      EXPECT_NE(source.find(tail ? "kiln_dwconv_row_ep_f32(" : "kiln_dwconv_row_f32("), std::string::npos) << source;
      // The taps are clamped in the kernel: no padded copy of the data.
      EXPECT_EQ(source.find("_data["), std::string::npos) << source;
    }
  }
}

// MobileNetV2's last depthwise layer (960 channels of 7x7, 423 K multiply-adds) runs its rows on
// both threads: weighed as depthwise work it is worth the hand-off.
TEST(DepthwiseRows, MobileNetLastLayerRowsAreParallel) {
  const DepthwiseCase c{1, 60, 7, 7, 3, 3, "[1, 1]", "[1, 1, 1, 1]"};
  const std::string source = expect_compiled_matches_interpreter(depthwise_fn(c, true), tolerance());
  EXPECT_NE(source.find("parallel_for(420,"), std::string::npos) << source;
}

// Integer convolutions accumulate in int32 through the generic blocked schedule.
TEST(DepthwiseRows, OtherDtypesKeepTheGenericSchedule) {
  const DepthwiseCase c{1, 1, 9, 10, 3, 3, "[1, 1]", "[1, 1, 1, 1]"};
  CompareOptions o;
  o.low = -50;
  o.high = 50;
  const std::string source = expect_compiled_matches_interpreter(depthwise_fn(c, false, "int32"), o);
  EXPECT_EQ(source.find("kiln_dwconv_row_f32("), std::string::npos) << source;
}

}  // namespace
}  // namespace kiln
