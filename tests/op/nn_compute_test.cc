// Compute definitions and schedules of the compute-heavy nn ops (conv, dense, matmul, pools):
// every case is lowered, compiled and run, and compared with the interpreter's reference kernels.
// The shapes exercise each schedule path (micro-kernel tiles, padded rows, gathered taps,
// depthwise rows, unrolled and reduced pool windows) and tiles that do not divide the shapes.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "kiln/op/strategy.h"
#include "op/compute_test_util.h"

namespace kiln {
namespace {

using testing::CompareOptions;
using testing::expect_compiled_matches_interpreter;

// Sums over many terms in a different order than the reference kernels.
CompareOptions reduction_tolerance() {
  CompareOptions o;
  o.rtol = 1e-4;
  o.atol = 1e-4;
  return o;
}

std::string conv_fn(const std::string& data, const std::string& weight, const std::string& attrs,
                    const std::string& dtype = "float32") {
  return "fn (%x: Tensor[(" + data + "), " + dtype + "], %w: Tensor[(" + weight + "), " + dtype +
         "], Primitive=1) { nn.conv2d(%x, %w" + (attrs.empty() ? "" : ", " + attrs) + ") }";
}

void expect_conv(const std::string& data, const std::string& weight, const std::string& attrs) {
  SCOPED_TRACE(data + " * " + weight + " " + attrs);
  expect_compiled_matches_interpreter(conv_fn(data, weight, attrs), reduction_tolerance());
}

// The fused cases need the element-wise ops' computes, which live in other op files.
bool has_computes(std::initializer_list<const char*> ops) {
  for (const char* op : ops)
    if (!find_strategy(OpRegistry::global().get(op))) return false;
  return true;
}

// The tile of a float convolution whose channels 8 divides: 8 rows, 12 with the 8-lane vectors
// of AVX2 (two groups of six rows there).
std::string whole_channel_tile() {
  return Target::host().vector_lanes == 8 ? "kiln_sgemm_nn_f32_12x32(" : "kiln_sgemm_nn_f32_8x32(";
}

TEST(NnCompute, Conv2dPaddedRowsUsesTheMicroKernel) {
  std::string source = expect_compiled_matches_interpreter(
      conv_fn("1, 8, 10, 11", "16, 8, 3, 3", "padding=[1, 1, 1, 1]"), reduction_tolerance());
  EXPECT_NE(source.find(whole_channel_tile()), std::string::npos) << source;
}

TEST(NnCompute, Conv2dAsymmetricPaddingDilationAndKernels) {
  expect_conv("2, 5, 12, 9", "12, 5, 3, 2", "padding=[1, 0, 2, 1], dilation=[2, 1]");
  expect_conv("1, 3, 9, 10", "4, 3, 1, 5", "padding=[0, 2, 0, 2]");
  expect_conv("1, 2, 6, 6", "8, 2, 6, 6", "");  // the window covers the whole input
}

TEST(NnCompute, Conv2dDirect1x1) {
  expect_conv("2, 6, 9, 7", "12, 6, 1, 1", "");      // 63 positions: one partial tile
  expect_conv("1, 20, 10, 10", "24, 20, 1, 1", "");  // two tiles of 64 positions, the last partial
  std::string source =
      expect_compiled_matches_interpreter(conv_fn("1, 16, 16, 16", "32, 16, 1, 1", ""), reduction_tolerance());
  EXPECT_NE(source.find(whole_channel_tile()), std::string::npos) << source;
}

TEST(NnCompute, Conv2dStridedGathersTaps) {
  expect_conv("1, 6, 13, 11", "16, 6, 3, 3", "strides=[2, 2], padding=[1, 1, 1, 1]");
  expect_conv("1, 4, 56, 56", "8, 4, 3, 3", "strides=[2, 2], padding=[1, 1, 1, 1]");  // tiles of whole rows
  expect_conv("2, 3, 23, 21", "8, 3, 7, 7", "strides=[2, 2], padding=[3, 3, 3, 3]");
  expect_conv("1, 8, 14, 14", "16, 8, 1, 1", "strides=[2, 2]");
  expect_conv("1, 4, 15, 12", "4, 4, 3, 3", "strides=[3, 2], padding=[2, 1, 0, 1], dilation=[1, 2]");
  // Stem convolutions: three channels, odd planes, the last tile hanging over the positions.
  expect_conv("1, 3, 33, 31", "16, 3, 3, 3", "strides=[2, 2], padding=[1, 1, 1, 1]");
  expect_conv("1, 3, 19, 17", "5, 3, 3, 3", "strides=[2, 2], padding=[0, 1, 1, 0]");
}

// Float tiles are 8 channels, or 12 when 8 does not divide the channels (always 12 with AVX2); the
// channels past the last whole tile take tiles of 8, 4, 2 and 1 rows.
TEST(NnCompute, Conv2dChannelsThatDoNotFillATile) {
  expect_conv("1, 5, 8, 8", "7, 5, 3, 3", "padding=[1, 1, 1, 1]");  // 7 output channels: 4 + 2 + 1 rows
  expect_conv("1, 5, 8, 8", "6, 5, 1, 1", "");                      // 4 + 2
  expect_conv("1, 3, 9, 9", "12, 3, 3, 3", "strides=[2, 2]");       // one tile of 12
  expect_conv("2, 9, 7, 9", "21, 9, 1, 1", "");                     // two batches, 12, then 8 + 1
}

// ShuffleNetV2's 1x1 convolutions (58 and 116 output channels, NCHW): whole 12-row tiles and the
// 10 or 8 channels left in tiles of 8 and 2 rows, on the direct path: one call per output tile
// (14x14 and 28x28 planes), blocks of 60 channels whose last reaches past 116 (7x7), and the
// core at the root when the convolution is also an output.
TEST(NnCompute, Conv2dDirect1x1ShuffleNetChannels) {
  std::string source =
      expect_compiled_matches_interpreter(conv_fn("1, 58, 14, 14", "116, 58, 1, 1", ""), reduction_tolerance());
  EXPECT_NE(source.find("kiln_sgemm_nn_f32_12x32("), std::string::npos) << source;
  EXPECT_NE(source.find("kiln_sgemm_nn_f32_8x32("), std::string::npos) << source;
  EXPECT_EQ(source.find("kiln_sgemm_nn_f32_4x32("), std::string::npos) << source;
  source = expect_compiled_matches_interpreter(conv_fn("1, 24, 28, 28", "58, 24, 1, 1", ""), reduction_tolerance());
  EXPECT_NE(source.find("kiln_sgemm_nn_f32_12x32("), std::string::npos) << source;
  EXPECT_NE(source.find("kiln_sgemm_nn_f32_8x32("), std::string::npos) << source;
  EXPECT_NE(source.find("kiln_sgemm_nn_f32_2x32("), std::string::npos) << source;
  EXPECT_EQ(source.find("kiln_sgemm_nn_f32_4x32("), std::string::npos) << source;
  expect_conv("1, 116, 7, 7", "116, 116, 1, 1", "");  // one partial tile of positions
  if (!has_computes({"nn.relu"})) return;
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(1, 24, 9, 9), float32], %w: Tensor[(58, 24, 1, 1), float32], Primitive=1) "
      "{ %0 = nn.conv2d(%x, %w); (%0, nn.relu(%0)) }",
      reduction_tolerance());
}

TEST(NnCompute, Conv2dGrouped) {
  expect_conv("1, 8, 9, 10", "12, 4, 3, 3", "padding=[1, 1, 1, 1], groups=2");
  expect_conv("2, 24, 8, 8", "48, 8, 3, 3", "strides=[2, 2], padding=[1, 1, 1, 1], groups=3");
  expect_conv("1, 16, 7, 7", "32, 4, 1, 1", "groups=4");
}

TEST(NnCompute, Conv2dDepthwise) {
  expect_conv("1, 8, 12, 13", "8, 1, 3, 3", "padding=[1, 1, 1, 1], groups=8");
  expect_conv("2, 6, 15, 15", "6, 1, 3, 3", "strides=[2, 2], padding=[1, 1, 1, 1], groups=6");
  expect_conv("1, 4, 16, 16", "4, 1, 5, 5", "strides=[2, 2], padding=[2, 2, 2, 2], groups=4");
  expect_conv("1, 3, 10, 9", "6, 1, 3, 3", "padding=[0, 1, 2, 1], dilation=[2, 1], groups=3");  // multiplier 2
  expect_conv("1, 4, 7, 7", "4, 1, 3, 3", "groups=4");                                          // unpadded
}

// Flat planes (equal strides of 1 or 2): MobileNet's 5x5 windows on 7x7 and 14x14 planes, odd
// extents, channel counts that are not a multiple of any vector, asymmetric padding, dilation,
// a depth multiplier; unequal strides and stride-2 rows of 16 or more keep the row path.
TEST(NnCompute, Conv2dDepthwiseFlatPlanes) {
  expect_conv("1, 5, 7, 7", "5, 1, 5, 5", "padding=[2, 2, 2, 2], groups=5");
  expect_conv("2, 3, 14, 14", "3, 1, 5, 5", "padding=[2, 2, 2, 2], groups=3");
  expect_conv("1, 7, 15, 13", "7, 1, 5, 5", "strides=[2, 2], padding=[2, 2, 2, 2], groups=7");
  expect_conv("1, 5, 11, 9", "5, 1, 3, 3", "strides=[2, 2], padding=[0, 1, 1, 0], groups=5");
  expect_conv("1, 3, 9, 11", "6, 1, 3, 3", "padding=[2, 1, 0, 2], dilation=[2, 2], groups=3");  // multiplier 2
  expect_conv("1, 3, 9, 11", "3, 1, 3, 2", "strides=[2, 2], dilation=[1, 2], groups=3");        // unpadded
  expect_conv("1, 3, 9, 11", "3, 1, 3, 3", "strides=[1, 2], padding=[1, 1, 1, 1], groups=3");   // row path
  expect_conv("1, 3, 37, 35", "3, 1, 3, 3", "strides=[2, 2], padding=[1, 1, 1, 1], groups=3");  // 18 wide: rows
  std::string source = expect_compiled_matches_interpreter(
      conv_fn("1, 5, 7, 7", "5, 1, 5, 5", "padding=[2, 2, 2, 2], groups=5"), reduction_tolerance());
  EXPECT_NE(source.find("_core["), std::string::npos) << source;
}

// ShuffleNetV2's 3x3 depthwise over 116 channels of 14x14 (204 K multiply-adds) runs its planes
// on both threads: weighed as depthwise work it is worth it, and at two threads a serial layer
// would also read half its input from the other core's cache.
TEST(NnCompute, Conv2dDepthwiseShuffleNetLayerIsParallel) {
  std::string source = expect_compiled_matches_interpreter(
      conv_fn("1, 116, 14, 14", "116, 1, 3, 3", "padding=[1, 1, 1, 1], groups=116"), reduction_tolerance());
  EXPECT_NE(source.find("parallel_for(116,"), std::string::npos) << source;
}

// int16 operands into int32 (QnnLegalize's form of qnn.conv2d) take the integer micro-kernel;
// full-range values make the int32 sums wrap, as the reference kernel defines.
TEST(NnCompute, Conv2dInt16IntoInt32WrapsOnEveryPath) {
  CompareOptions o = testing::inputs_in(-32768, 32767);
  o.rtol = o.atol = 0;
  auto fn = [](const std::string& x, const std::string& w, const std::string& attrs) {
    return "fn (%x: Tensor[(" + x + "), int16], %w: Tensor[(" + w + "), int16], Primitive=1) { nn.conv2d(%x, %w, " +
           attrs + (attrs.empty() ? "" : ", ") + "out_dtype=\"int32\") }";
  };
  std::string source =
      expect_compiled_matches_interpreter(fn("1, 16, 8, 8", "16, 16, 3, 3", "padding=[1, 1, 1, 1]"), o);
  EXPECT_NE(source.find("kiln_igemm_nn_s16_"), std::string::npos) << source;
  expect_compiled_matches_interpreter(fn("1, 8, 8, 8", "8, 8, 1, 1", ""), o);  // direct
  expect_compiled_matches_interpreter(fn("1, 4, 9, 9", "8, 4, 3, 3", "strides=[2, 2], padding=[1, 1, 1, 1]"),
                                      o);  // im2col
  expect_compiled_matches_interpreter(fn("1, 8, 6, 6", "8, 1, 3, 3", "groups=8, padding=[1, 1, 1, 1]"),
                                      o);                                        // depthwise
  expect_compiled_matches_interpreter(fn("1, 40, 1, 1", "4, 40, 1, 1", ""), o);  // generic
}

TEST(NnCompute, Conv2dOtherDtypes) {
  expect_compiled_matches_interpreter(conv_fn("1, 3, 6, 6", "4, 3, 3, 3", "padding=[1, 1, 1, 1]", "float64"));
  expect_compiled_matches_interpreter(conv_fn("1, 3, 6, 6", "4, 3, 3, 3", "strides=[2, 2], groups=1", "int32"));
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(1, 2, 5, 5), int8], %w: Tensor[(3, 2, 3, 3), int8], Primitive=1) "
      "{ nn.conv2d(%x, %w, padding=[1, 1, 1, 1], out_dtype=\"int32\") }");
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(1, 2, 5, 5), float32], %w: Tensor[(3, 2, 3, 3), float32], Primitive=1) "
      "{ nn.conv2d(%x, %w, out_dtype=\"float64\") }",
      reduction_tolerance());
}

// conv2d + bias_add + relu (one fused group), compiled and compared with the interpreter;
// returns the generated source.
std::string expect_fused_conv(const std::string& data, const std::string& weight, int64_t channels,
                              const std::string& attrs) {
  std::string fn = "fn (%x: Tensor[(" + data + "), float32], %w: Tensor[(" + weight + "), float32], %b: Tensor[(" +
                   std::to_string(channels) + "), float32], Primitive=1) { %0 = nn.conv2d(%x, %w" +
                   (attrs.empty() ? "" : ", " + attrs) + "); %1 = nn.bias_add(%0, %b); nn.relu(%1) }";
  SCOPED_TRACE(fn);
  return expect_compiled_matches_interpreter(fn, reduction_tolerance());
}

TEST(NnCompute, Conv2dFusedBiasRelu) {
  if (!has_computes({"nn.bias_add", "nn.relu"})) GTEST_SKIP() << "nn.bias_add or nn.relu has no compute yet";
  expect_fused_conv("1, 8, 10, 11", "16, 8, 3, 3", 16, "padding=[1, 1, 1, 1]");     // padded rows
  std::string direct = expect_fused_conv("1, 16, 10, 10", "24, 16, 1, 1", 24, "");  // direct, tiles in the loop
  EXPECT_NE(direct.find(whole_channel_tile()), std::string::npos) << direct;
  expect_fused_conv("1, 24, 15, 15", "116, 24, 1, 1", 116, "");  // blocks of 60 channels, the last past 116
  expect_fused_conv("1, 6, 13, 11", "16, 6, 3, 3", 16, "strides=[2, 2], padding=[1, 1, 1, 1]");  // gathered taps
  expect_fused_conv("1, 8, 12, 13", "8, 1, 3, 3", 8, "padding=[1, 1, 1, 1], groups=8");          // depthwise
  expect_fused_conv("1, 5, 7, 7", "5, 1, 5, 5", 5, "padding=[2, 2, 2, 2], groups=5");            // flat plane
  expect_fused_conv("1, 5, 15, 15", "5, 1, 3, 3", 5, "strides=[2, 2], padding=[1, 1, 1, 1], groups=5");
  expect_fused_conv("1, 3, 31, 29", "16, 3, 3, 3", 16, "strides=[2, 2], padding=[1, 1, 1, 1]");  // stem
}

// A strided layer whose positions fit one im2col tile (ConvNeXt's 2x2 stride-2 downsampling to
// 7x7, RegNet's grouped stride-2 blocks to 14x14) gathers its taps once at the root and splits
// its output into channel tiles (64 channels with 8-row tiles, 12 with AVX2's 12-row tiles, the
// only multiple of 12 below 64 that divides the 132 channels of the core), so that it is more than
// one task.
TEST(NnCompute, Conv2dStridedSingleTileSplitsChannels) {
  if (!has_computes({"nn.bias_add", "nn.relu"})) GTEST_SKIP() << "nn.bias_add or nn.relu has no compute yet";
  const std::string dense_tasks = Target::host().vector_lanes == 8 ? "parallel_for(11," : "parallel_for(2,";
  const std::pair<std::string, std::string> cases[] = {
      {expect_fused_conv("1, 64, 14, 14", "128, 64, 2, 2", 128, "strides=[2, 2]"), dense_tasks},
      // grouped: 8-row tiles on every target
      {expect_fused_conv("1, 128, 28, 28", "128, 8, 3, 3", 128, "strides=[2, 2], padding=[1, 1, 1, 1], groups=16"),
       "parallel_for(2,"}};
  for (const auto& [source, tasks] : cases) {
    EXPECT_NE(source.find(tasks), std::string::npos) << source;
    EXPECT_EQ(source.find("parallel_for(1,"), std::string::npos) << source;
  }
}

// Squeeze-excite convolutions: one output position of a 1x1 window, summed in lanes of
// partial sums (16, 8, 4 or 2 by the input channels per group; odd counts keep the generic
// reduction).
TEST(NnCompute, Conv2dOnePositionInLanes) {
  std::string source =
      expect_compiled_matches_interpreter(conv_fn("1, 96, 1, 1", "24, 96, 1, 1", ""), reduction_tolerance());
  EXPECT_NE(source.find("_lanes["), std::string::npos) << source;
  expect_conv("2, 24, 1, 1", "20, 24, 1, 1", "");               // 8 lanes, two images
  expect_conv("1, 36, 1, 1", "5, 36, 1, 1", "");                // 4 lanes
  expect_conv("1, 12, 1, 1", "6, 6, 1, 1", "groups=2");         // 2 lanes per group
  expect_conv("1, 32, 3, 3", "8, 32, 1, 1", "strides=[3, 3]");  // reads the first position
  expect_conv("1, 7, 1, 1", "3, 7, 1, 1", "");                  // odd: generic
}

TEST(NnCompute, Conv2dOnePositionReadTwice) {
  // Squeeze-excite: a 1x1 output whose value feeds both sigmoid and multiply (SiLU).
  for (const char* attrs : {"", "strides=[2, 2]", "strides=[2, 2], padding=[1, 1, 1, 1]"}) {
    SCOPED_TRACE(attrs);
    const std::string kernel = std::string(attrs).find("padding") == std::string::npos ? "1, 1" : "3, 3";
    expect_compiled_matches_interpreter("fn (%x: Tensor[(1, 32, 2, 2), float32], %w: Tensor[(8, 32, " + kernel +
                                            "), float32], Primitive=1) { " + "%0 = nn.conv2d(%x, %w" +
                                            (*attrs ? ", " + std::string(attrs) : "") +
                                            "); %1 = sigmoid(%0); multiply(%0, %1) }",
                                        reduction_tolerance());
  }
}

TEST(NnCompute, Conv2dTranspose) {
  auto expect = [](const std::string& data, const std::string& weight, const std::string& attrs) {
    std::string fn = "fn (%x: Tensor[(" + data + "), float32], %w: Tensor[(" + weight +
                     "), float32], Primitive=1) { nn.conv2d_transpose(%x, %w" + (attrs.empty() ? "" : ", " + attrs) +
                     ") }";
    SCOPED_TRACE(fn);
    expect_compiled_matches_interpreter(fn, reduction_tolerance());
  };
  expect("1, 4, 5, 6", "4, 3, 3, 3", "");
  expect("2, 4, 5, 6", "4, 2, 3, 3", "strides=[2, 2], padding=[1, 1, 1, 1], output_padding=[1, 1]");
  expect("1, 8, 7, 9", "8, 3, 3, 4",
         "strides=[2, 3], padding=[1, 2, 0, 1], output_padding=[1, 0], groups=2, dilation=[1, 2]");
}

std::string product_fn(const std::string& op, const std::string& a, const std::string& b, const std::string& attrs,
                       const std::string& dtype = "float32") {
  return "fn (%a: Tensor[(" + a + "), " + dtype + "], %b: Tensor[(" + b + "), " + dtype + "], Primitive=1) { " + op +
         "(%a, %b" + (attrs.empty() ? "" : ", " + attrs) + ") }";
}

void expect_product(const std::string& op, const std::string& a, const std::string& b, const std::string& attrs = "") {
  SCOPED_TRACE(op + " " + a + " * " + b + " " + attrs);
  expect_compiled_matches_interpreter(product_fn(op, a, b, attrs), reduction_tolerance());
}

TEST(NnCompute, DenseTiles) {
  // Both operands contiguous along k: the panel tiles over b transposed inside the kernel.
  std::string source =
      expect_compiled_matches_interpreter(product_fn("nn.dense", "8, 40", "12, 40", ""), reduction_tolerance());
  EXPECT_NE(source.find("kiln_sgemm_panels_nt_f32("), std::string::npos) << source;
  // More than 512 rows and no divisor of at least 64 to split them by: the NT tile.
  source = expect_compiled_matches_interpreter(product_fn("nn.dense", "521, 8", "8, 8", ""), reduction_tolerance());
  EXPECT_NE(source.find("kiln_sgemm_nt_f32_1x8("), std::string::npos) << source;
  expect_product("nn.dense", "3, 10", "7, 10");      // no tile divides: 1 x 1
  expect_product("nn.dense", "1, 70", "48, 70");     // a vector: 1 x 8, k with a partial vector
  expect_product("nn.dense", "6, 33", "20, 33");     // 2 x 4
  expect_product("nn.dense", "2, 4, 24", "16, 24");  // 3-D data
  expect_product("nn.dense", "10", "6, 10");         // 1-D data
  expect_product("nn.dense", "4, 100", "256, 100");  // several column blocks
}

TEST(NnCompute, DenseOtherDtypes) {
  expect_compiled_matches_interpreter(product_fn("nn.dense", "3, 5", "4, 5", "", "int32"));
  expect_compiled_matches_interpreter(product_fn("nn.dense", "3, 5", "4, 5", "", "float64"));
  expect_compiled_matches_interpreter(product_fn("nn.dense", "3, 5", "4, 5", "out_dtype=\"int64\"", "int8"));
}

TEST(NnCompute, Matmul) {
  std::string source =
      expect_compiled_matches_interpreter(product_fn("nn.matmul", "2, 5, 10", "10, 37", ""), reduction_tolerance());
  // a contiguous along k, b along n: the panel GEMM over b's rows, any row count.
  EXPECT_NE(source.find("kiln_sgemm_panels_f32("), std::string::npos) << source;
  expect_product("nn.matmul", "16, 24", "24, 100");      // several column tiles, the last partial
  expect_product("nn.matmul", "2, 1, 5, 6", "3, 6, 7");  // batch broadcasting
  expect_product("nn.matmul", "6, 5", "6, 9", "transpose_a=True");
  expect_product("nn.matmul", "4, 5, 6", "8, 6", "transpose_b=True");
  expect_product("nn.matmul", "6, 5", "9, 6", "transpose_a=True, transpose_b=True");
  expect_product("nn.matmul", "6", "6, 4");  // vectors
  expect_product("nn.matmul", "3, 6", "6");
  expect_product("nn.matmul", "6", "6");
  expect_compiled_matches_interpreter(product_fn("nn.matmul", "3, 4", "4, 5", "", "int64"));
}

// int16 operands into int32 (QnnLegalize's form of qnn.matmul): the integer NN tile when b is
// contiguous along n; full-range values make the int32 sums wrap, as the reference kernels do.
TEST(NnCompute, IntegerProductsIntoInt32Wrap) {
  CompareOptions o = testing::inputs_in(-32768, 32767);
  o.rtol = o.atol = 0;
  const std::string to_int32 = "out_dtype=\"int32\"";
  std::string source =
      expect_compiled_matches_interpreter(product_fn("nn.matmul", "2, 9, 40", "40, 37", to_int32, "int16"), o);
  EXPECT_NE(source.find("kiln_igemm_nn_s16_"), std::string::npos) << source;
  expect_compiled_matches_interpreter(product_fn("nn.matmul", "6, 5", "6, 9", "transpose_a=True, " + to_int32, "int16"),
                                      o);
  expect_compiled_matches_interpreter(product_fn("nn.dense", "5, 30", "7, 30", to_int32, "int16"), o);
  expect_compiled_matches_interpreter(product_fn("nn.batch_matmul", "2, 4, 9", "2, 6, 9", to_int32, "int8"), o);
}

// Q x K^T: b (batch, N, K) is no constant; odd rows, a partial last panel, k over several blocks.
TEST(NnCompute, BatchMatmulTransposedBOnPanelTiles) {
  std::string source = expect_compiled_matches_interpreter(product_fn("nn.batch_matmul", "2, 37, 70", "2, 45, 70", ""),
                                                           reduction_tolerance());
  EXPECT_NE(source.find("kiln_sgemm_panels_nt_f32("), std::string::npos) << source;
  expect_product("nn.batch_matmul", "3, 13, 600", "3, 33, 600");  // k-blocks of at most 256
  expect_product("nn.batch_matmul", "1, 9, 5", "3, 70, 5");       // batch 1 broadcast, three panels
  expect_product("nn.matmul", "2, 3, 11, 17", "3, 31, 17", "transpose_b=True");
  expect_product("nn.dense", "1, 1", "65, 1");  // k = 1
}

TEST(NnCompute, BatchMatmul) {
  expect_product("nn.batch_matmul", "3, 8, 16", "3, 12, 16");  // y transposed (the default)
  expect_product("nn.batch_matmul", "3, 8, 16", "3, 16, 20", "transpose_b=False");
  expect_product("nn.batch_matmul", "1, 5, 7", "4, 9, 7");  // batch 1 broadcast
  expect_product("nn.batch_matmul", "4, 7, 5", "1, 7, 9", "transpose_a=True, transpose_b=False");
  expect_product("nn.batch_matmul", "2, 7, 5", "2, 9, 7", "transpose_a=True");
}

TEST(NnCompute, DenseAndMatmulFusedAddRelu) {
  if (!has_computes({"add", "nn.relu"})) GTEST_SKIP() << "add or nn.relu has no compute yet";
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(8, 40), float32], %w: Tensor[(12, 40), float32], %b: Tensor[(12), float32], Primitive=1) "
      "{ %0 = nn.dense(%x, %w); %1 = add(%0, %b); nn.relu(%1) }",
      reduction_tolerance());
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(1, 70), float32], %w: Tensor[(48, 70), float32], %b: Tensor[(48), float32], Primitive=1) "
      "{ %0 = nn.dense(%x, %w); %1 = add(%0, %b); nn.relu(%1) }",
      reduction_tolerance());
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(1, 10, 24), float32], %w: Tensor[(24, 40), float32], %b: Tensor[(40), float32], Primitive=1) "
      "{ %0 = nn.matmul(%x, %w); %1 = add(%0, %b); nn.relu(%1) }",
      reduction_tolerance());
}

std::string pool_fn(const std::string& op, const std::string& shape, const std::string& attrs,
                    const std::string& dtype = "float32") {
  return "fn (%x: Tensor[(" + shape + "), " + dtype + "], Primitive=1) { " + op + "(%x" +
         (attrs.empty() ? "" : ", " + attrs) + ") }";
}

void expect_pool(const std::string& op, const std::string& shape, const std::string& attrs,
                 const std::string& dtype = "float32") {
  SCOPED_TRACE(op + " " + shape + " " + attrs + " " + dtype);
  expect_compiled_matches_interpreter(pool_fn(op, shape, attrs, dtype), reduction_tolerance());
}

TEST(NnCompute, MaxPool2d) {
  expect_pool("nn.max_pool2d", "1, 4, 16, 16", "pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]");
  expect_pool("nn.max_pool2d", "2, 3, 11, 12", "pool_size=[2, 2], strides=[2, 2], ceil_mode=True");
  expect_pool("nn.max_pool2d", "1, 3, 13, 9",
              "pool_size=[3, 2], strides=[2, 1], padding=[1, 0, 2, 1], dilation=[2, 1]");
  expect_pool("nn.max_pool2d", "1, 3, 17, 19", "pool_size=[5, 5], strides=[2, 2], padding=[2, 2]");  // a reduction
  expect_pool("nn.max_pool2d", "1, 9, 8, 5", "pool_size=[3, 3], strides=[2, 2], padding=[1, 1], layout=\"NHWC\"");
  expect_pool("nn.max_pool2d", "1, 3, 9, 9", "pool_size=[3, 3], strides=[2, 2], padding=[1, 1]", "int32");
}

TEST(NnCompute, AvgPool2d) {
  expect_pool("nn.avg_pool2d", "1, 4, 16, 16", "pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]");
  expect_pool("nn.avg_pool2d", "1, 4, 16, 16",
              "pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], count_include_pad=True");
  expect_pool("nn.avg_pool2d", "1, 3, 17, 19",
              "pool_size=[3, 2], strides=[2, 1], padding=[1, 0, 2, 1], ceil_mode=True, count_include_pad=True");
  expect_pool("nn.avg_pool2d", "1, 3, 17, 19",
              "pool_size=[3, 2], strides=[2, 1], padding=[1, 0, 2, 1], ceil_mode=True");
  expect_pool("nn.avg_pool2d", "2, 3, 17, 19", "pool_size=[5, 5], strides=[2, 2], padding=[2, 2], dilation=[1, 2]");
  expect_pool("nn.avg_pool2d", "2, 3, 17, 19",
              "pool_size=[5, 5], strides=[2, 2], padding=[2, 2], count_include_pad=True");
  expect_pool("nn.avg_pool2d", "1, 7, 6, 5", "pool_size=[2, 2], padding=[1, 1], layout=\"NHWC\"");
  expect_pool("nn.avg_pool2d", "1, 3, 9, 9", "pool_size=[3, 3], strides=[2, 2], padding=[1, 1]", "int32");
  expect_pool("nn.avg_pool2d", "1, 3, 9, 9", "pool_size=[3, 3], strides=[2, 2], padding=[1, 1]", "float64");
}

TEST(NnCompute, GlobalPools) {
  for (const char* op : {"nn.global_avg_pool2d", "nn.global_max_pool2d"}) {
    expect_pool(op, "2, 5, 9, 11", "");
    expect_pool(op, "1, 32, 56, 56", "");
    expect_pool(op, "1, 6, 7, 5", "layout=\"NHWC\"");
    expect_pool(op, "1, 3, 4, 4", "", "int32");
  }
}

// NCHW{x}c data (AlterOpLayout's): unrolled windows with and without padding, reductions, the
// global pools, a pool fused with an element-wise tail.
TEST(NnCompute, BlockedPools) {
  expect_pool("nn.max_pool2d", "1, 2, 16, 16, 8",
              "pool_size=[3, 3], strides=[2, 2], padding=[1, 1], layout=\"NCHW8c\"");
  expect_pool("nn.max_pool2d", "2, 1, 11, 12, 16",
              "pool_size=[2, 2], strides=[2, 2], ceil_mode=True, layout=\"NCHW16c\"");
  expect_pool("nn.max_pool2d", "1, 1, 17, 19, 8",
              "pool_size=[5, 5], strides=[2, 2], padding=[2, 2], layout=\"NCHW8c\"");  // a reduction
  expect_pool("nn.avg_pool2d", "1, 2, 16, 16, 8",
              "pool_size=[3, 3], strides=[2, 2], padding=[1, 1], count_include_pad=True, layout=\"NCHW8c\"");
  expect_pool("nn.avg_pool2d", "1, 1, 17, 19, 8",
              "pool_size=[3, 2], strides=[2, 1], padding=[1, 0, 2, 1], dilation=[2, 1], ceil_mode=True, "
              "layout=\"NCHW8c\"");
  expect_pool("nn.avg_pool2d", "2, 1, 17, 19, 8",
              "pool_size=[5, 5], strides=[2, 2], padding=[2, 2], layout=\"NCHW8c\"");
  for (const char* op : {"nn.global_avg_pool2d", "nn.global_max_pool2d"}) {
    expect_pool(op, "1, 4, 7, 7, 16", "layout=\"NCHW16c\"");
    expect_pool(op, "2, 1, 3, 4, 8", "layout=\"NCHW8c\"");
  }
  if (!has_computes({"nn.relu"})) GTEST_SKIP() << "nn.relu has no compute yet";
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(1, 2, 16, 16, 8), float32], Primitive=1) { %0 = nn.max_pool2d(%x, pool_size=[3, 3], "
      "strides=[2, 2], padding=[1, 1], layout=\"NCHW8c\"); nn.relu(%0) }");
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(1, 4, 7, 7, 8), float32], Primitive=1) { %0 = nn.global_avg_pool2d(%x, "
      "layout=\"NCHW8c\"); nn.relu(%0) }",
      reduction_tolerance());
}

// A padded average pool over blocked data reads a padded copy made row by row (no bounds test per
// tap, so the channel loop vectorises); a padded maximum over undilated windows reads the data's
// nearest row and column instead (the same window's element). Padding never wins a maximum, even
// over negative data, and NaN taps win as in the reference kernel (inputs 5% NaN); dilated or
// not, the results match the interpreter.
TEST(NnCompute, BlockedPaddedPoolsReadACopyOrClampTheirTaps) {
  CompareOptions with_nans;
  with_nans.nan_fraction = 0.05;
  for (const std::string layout : {"NCHW16c", "NCHW8c"}) {
    SCOPED_TRACE(layout);
    const std::string block = layout == "NCHW16c" ? "16" : "8";
    const std::string head =
        "fn (%x: Tensor[(1, 2, 13, 14, " + block + "), float32], Primitive=1) { %0 = negative(%x); ";
    const std::string window = "pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], layout=\"" + layout + "\"";
    EXPECT_NE(expect_compiled_matches_interpreter(head + "nn.avg_pool2d(%0, " + window + ") }").find("_data["),
              std::string::npos);
    EXPECT_EQ(
        expect_compiled_matches_interpreter(head + "nn.max_pool2d(%0, " + window + ") }", with_nans).find("_data["),
        std::string::npos);
    expect_compiled_matches_interpreter(head + "nn.max_pool2d(%0, " + window + ", ceil_mode=True) }", with_nans);
    expect_compiled_matches_interpreter(head + "nn.max_pool2d(%0, " + window + ", dilation=[2, 2]) }", with_nans);
  }
}

// NCHW: clamped taps where the windows are undilated and all overlap the data; a padded copy
// for dilated windows and for windows that lie wholly in the padding (the first one here).
TEST(NnCompute, PaddedMaxPoolPropagatesNaN) {
  CompareOptions with_nans;
  with_nans.nan_fraction = 0.05;
  for (const std::string window : {"pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]",
                                   "pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], ceil_mode=True",
                                   "pool_size=[2, 3], strides=[1, 2], padding=[0, 1, 1, 1]",
                                   "pool_size=[3, 3], padding=[2, 2, 2, 2], dilation=[2, 2]",
                                   "pool_size=[2, 2], strides=[3, 3], padding=[2, 2, 2, 2]"}) {
    SCOPED_TRACE(window);
    expect_compiled_matches_interpreter(
        "fn (%x: Tensor[(1, 3, 13, 14), float32], Primitive=1) { nn.max_pool2d(%x, " + window + ") }", with_nans);
  }
}

TEST(NnCompute, PoolFusedWithElementwise) {
  if (!has_computes({"nn.relu"})) GTEST_SKIP() << "nn.relu has no compute yet";
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(1, 4, 16, 16), float32], Primitive=1) "
      "{ %0 = nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1]); nn.relu(%0) }");
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(1, 4, 16, 16), float32], Primitive=1) { %0 = nn.global_avg_pool2d(%x); nn.relu(%0) }",
      reduction_tolerance());
}

}  // namespace
}  // namespace kiln
