// Blocked 1x1 convolutions (NCHW16c data, OIHW16i16o weight) on the hand-written tile
// kiln_conv_nchwc_f32: the generated kernel calls it and matches the interpreter for output
// channel blocks in groups of 1-4, widths the tile does not divide (a wider computed width), stride
// 2, padding, batch 2, and with bias, clip and a residual add fused after it; larger windows
// (3x3, strided, 1x7 / 7x1, dilated, 5x5) as one tile per tap. Other dtypes keep the generated
// tiles.
#include <gtest/gtest.h>

#include "kiln/op/strategy.h"
#include "op/compute_test_util.h"

namespace kiln {
namespace {

using testing::CompareOptions;
using testing::expect_compiled_matches_interpreter;

constexpr const char* kTileCall = "kiln_conv_nchwc_f32(";

CompareOptions reduction_tolerance() {
  CompareOptions o;
  o.rtol = 1e-4;
  o.atol = 1e-4;
  return o;
}

std::string tensor(const std::string& dims, const std::string& dtype = "float32") {
  return "Tensor[(" + dims + "), " + dtype + "]";
}

std::string blocked_conv(const std::string& attrs) {
  return "nn.conv2d(%x, %w, " + (attrs.empty() ? "" : attrs + ", ") +
         "data_layout=\"NCHW16c\", kernel_layout=\"OIHW16i16o\", out_layout=\"NCHW16c\")";
}

std::string conv_fn(const std::string& data, const std::string& weight, const std::string& attrs,
                    const std::string& dtype = "float32") {
  return "fn (%x: " + tensor(data, dtype) + ", %w: " + tensor(weight, dtype) + ", Primitive=1) { " +
         blocked_conv(attrs) + " }";
}

TEST(NnConv1x1Blocked, CallsTheTileAndMatchesTheInterpreter) {
  struct Case {
    std::string data, weight, attrs;
  };
  const std::vector<Case> cases = {
      {"1, 3, 9, 10, 16", "6, 3, 1, 1, 16, 16", ""},                     // 6 blocks: tiles of 5 x 3
      {"1, 2, 5, 17, 16", "4, 2, 1, 1, 16, 16", ""},                     // width 17 computed as 18
      {"2, 1, 4, 7, 16", "5, 1, 1, 1, 16, 16", ""},                      // batch 2, 5 blocks one at a time
      {"1, 2, 9, 9, 16", "2, 2, 1, 1, 16, 16", "strides=[2, 2]"},        // every other position
      {"1, 2, 6, 5, 16", "3, 2, 1, 1, 16, 16", "padding=[1, 1, 1, 1]"},  // a padded copy
      {"1, 4, 14, 14, 16", "8, 4, 1, 1, 16, 16", ""},                    // 14 x 2 or 7 x 4
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.data + " * " + c.weight + " " + c.attrs);
    const std::string source =
        expect_compiled_matches_interpreter(conv_fn(c.data, c.weight, c.attrs), reduction_tolerance());
    EXPECT_NE(source.find(kTileCall), std::string::npos) << source;
  }
}

TEST(NnConv1x1Blocked, FusedBiasClipAndResidualAdd) {
  if (!find_strategy(OpRegistry::global().get("clip"))) GTEST_SKIP() << "clip has no compute";
  // The residual add reads the output tile the tail writes; the bias broadcasts per channel.
  const std::string fn = "fn (%x: " + tensor("1, 3, 7, 12, 16") + ", %w: " + tensor("6, 3, 1, 1, 16, 16") +
                         ", %b: " + tensor("1, 6, 1, 1, 16") + ", %r: " + tensor("1, 6, 7, 12, 16") +
                         ", Primitive=1) { %0 = " + blocked_conv("") +
                         "; %1 = add(%0, %b); %2 = clip(%1, a_min=0f, a_max=6f); add(%2, %r) }";
  const std::string source = expect_compiled_matches_interpreter(fn, reduction_tolerance());
  EXPECT_NE(source.find(kTileCall), std::string::npos) << source;
}

// Tails of bias plus clamp, of bias and residual plus relu and of bias plus hard swish run in the
// tile's registers
// (kiln_conv_nchwc_ep_f32, tir/tile_epilogue.h), with no tile buffer; a residual added after the
// clamp and a swish keep the tile buffer and the tail.
TEST(NnConv1x1Blocked, RegisterEpiloguesMatchTheInterpreter) {
  const std::string params = "fn (%x: " + tensor("1, 3, 7, 14, 16") + ", %w: " + tensor("6, 3, 1, 1, 16, 16") +
                             ", %b: " + tensor("1, 6, 1, 1, 16") + ", %r: " + tensor("1, 6, 7, 14, 16") +
                             ", Primitive=1) { %0 = " + blocked_conv("") + "; %1 = add(%0, %b); ";
  const std::vector<std::pair<std::string, bool>> tails = {
      {"clip(%1, a_min=-0.5f, a_max=0.75f) }", true},
      {"%2 = add(%1, %r); nn.relu(%2) }", true},
      {"%2 = multiply(%1, 0.25f); %3 = add(%2, 0.5f); %4 = clip(%3, a_min=0f, a_max=1f); multiply(%1, %4) }",
       true},  // hard swish
      {"%2 = clip(%1, a_min=-0.5f, a_max=0.75f); add(%2, %r) }", false},
      {"multiply(%1, sigmoid(%1)) }", false},
  };
  for (const auto& [tail, folds] : tails) {
    SCOPED_TRACE(tail);
    const std::string source = expect_compiled_matches_interpreter(params + tail, reduction_tolerance());
    EXPECT_EQ(source.find("kiln_conv_nchwc_ep_f32(") != std::string::npos, folds) << source;
    EXPECT_EQ(source.find("T_nn_conv2d_0[") != std::string::npos, !folds) << source;
  }
}

// Larger windows sum one 1x1 tile per tap (kiln_conv_nchwc_f32) over the padded copy.
TEST(NnConv1x1Blocked, WindowsSumTheTileOverTheirTaps) {
  struct Case {
    std::string data, weight, attrs;
  };
  const std::vector<Case> cases = {
      {"1, 2, 6, 7, 16", "2, 2, 3, 3, 16, 16", "padding=[1, 1, 1, 1]"},
      {"1, 3, 9, 11, 16", "4, 3, 3, 3, 16, 16", "strides=[2, 2], padding=[1, 1, 1, 1]"},
      {"1, 2, 7, 17, 16", "3, 2, 1, 7, 16, 16", "padding=[0, 3, 0, 3]"},  // Inception's 1x7
      {"2, 1, 9, 5, 16", "2, 1, 7, 1, 16, 16", "padding=[3, 0, 3, 0]"},   // and 7x1, batch 2
      {"1, 2, 11, 12, 16", "2, 2, 3, 3, 16, 16", "padding=[2, 2, 2, 2], dilation=[2, 2]"},
      {"1, 1, 6, 8, 16", "3, 1, 5, 5, 16, 16", "padding=[2, 1, 2, 1]"},  // uneven padding
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.data + " * " + c.weight + " " + c.attrs);
    const std::string source =
        expect_compiled_matches_interpreter(conv_fn(c.data, c.weight, c.attrs), reduction_tolerance());
    EXPECT_NE(source.find(kTileCall), std::string::npos) << source;
  }
}

// Data of one channel per block (NCHW1c: an image stem's 3 channels, MobileNetV2's 24-channel
// bottleneck expanding) runs the same tile with one lane per input step: a 7x7 window with stride
// 2, and a 1x1.
TEST(NnConv1x1Blocked, NarrowInputBlocksRunTheTile) {
  auto narrow_conv = [](const std::string& data, const std::string& weight, const std::string& attrs) {
    return "fn (%x: " + tensor(data) + ", %w: " + tensor(weight) + ", Primitive=1) { nn.conv2d(%x, %w, " + attrs +
           (attrs.empty() ? "" : ", ") +
           "data_layout=\"NCHW1c\", kernel_layout=\"OIHW1i16o\", out_layout=\"NCHW16c\") }";
  };
  for (const std::string& fn :
       {narrow_conv("1, 3, 23, 20, 1", "2, 3, 7, 7, 1, 16", "strides=[2, 2], padding=[3, 3, 3, 3]"),
        narrow_conv("1, 24, 9, 14, 1", "3, 24, 1, 1, 1, 16", "")}) {
    const std::string source = expect_compiled_matches_interpreter(fn, reduction_tolerance());
    EXPECT_NE(source.find(kTileCall), std::string::npos) << source;
  }
}

TEST(NnConv1x1Blocked, OtherDtypesKeepTheGeneratedTiles) {
  const std::string wide = expect_compiled_matches_interpreter(
      conv_fn("1, 2, 4, 5, 16", "2, 2, 1, 1, 16, 16", "", "float64"), reduction_tolerance());
  EXPECT_EQ(wide.find(kTileCall), std::string::npos);
}

}  // namespace
}  // namespace kiln
