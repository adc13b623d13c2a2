// The convolution tile of kiln/runtime/microkernels.h with its register epilogue
// (kiln_conv_nchwc_ep_f32: start at the bias, add a residual after the reduction, store through
// an activation) against double sums, for 3x3 windows with strides 1 and 2 and several tile
// shapes, with output blocks of 16 and of 8 channels. Compiled as generated code is (CCompiler, the
// shape as literals) for each instruction set the header has a path for: AVX-512's register tile
// (16 lanes), AVX2's (8 lanes) and the loops every other width and x86-64 take, so the paths this
// host's kernels do not take are checked too. The tile writes its rows and blocks and nothing else.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel_test_util.h"

namespace kiln::codegen {
namespace {

struct Tile {
  int64_t rows, blocks, stride, y;  // y: output channels per block
};

// AVX-512's tiles (28 accumulators) and AVX2's (sub-tiles of up to 12 accumulators, of equal
// positions or of two sizes: 13 x 1 as 7 + 6, 7 x 4 as 3 + 2 + 2; 12 x 4 and 11 x 4 in pairs of
// blocks, 6 + 6 and 6 + 5 positions; AVX2 tiles wider than AVX-512's: 17 x 4, 30 x 1).
const std::vector<Tile> kTiles = {{7, 4, 1, 16}, {14, 2, 2, 16}, {3, 1, 1, 16}, {8, 3, 2, 16}, {4, 3, 1, 8},
                                  {6, 2, 2, 8},  {2, 4, 1, 8},   {14, 1, 1, 8}, {13, 1, 1, 8}, {7, 4, 2, 8},
                                  {12, 4, 1, 8}, {11, 4, 2, 8},  {17, 4, 1, 8}, {30, 1, 2, 8}};
constexpr int64_t kInputBlocks = 2, kWindow = 3, kLanes = 16;

// The data of one input block: kWindow rows of the padded width the tile's taps reach.
int64_t data_width(const Tile& t) { return (t.rows - 1) * t.stride + kWindow; }
int64_t data_block(const Tile& t) { return kWindow * data_width(t) * kLanes; }
// Output (and residual) channel blocks are one row of y floats longer than the tile: the gap
// shows a store past the tile's rows.
int64_t out_block(const Tile& t) { return (t.rows + 1) * t.y; }
int64_t weight_in(const Tile& t) { return kWindow * kWindow * kLanes * t.y; }
int64_t weight_out(const Tile& t) { return kInputBlocks * weight_in(t); }

std::string tile_name(const Tile& t) {
  return "tile_" + std::to_string(t.rows) + "_" + std::to_string(t.blocks) + "_" + std::to_string(t.stride) + "_" +
         std::to_string(t.y);
}

// args: act (int64), data, weight, bias and residual (NULL for none), out.
std::string source() {
  std::string s = std::string(testing::kMicrokernelPreamble) + testing::kActivationParameters;
  for (const Tile& t : kTiles) {
    const auto str = [](int64_t v) { return std::to_string(v); };
    s += "int32_t " + tile_name(t) +
         "(void* const* args) {\n"
         "  const int32_t act = (int32_t)*(const int64_t*)args[0];\n"
         "  return kiln_conv_nchwc_ep_f32(" +
         str(t.rows) + ", " + str(t.blocks) + ", " + str(t.stride) + ", " + str(kInputBlocks) + ", " + str(kLanes) +
         ", " + str(t.y) + ", 3, 3, (const float*)args[1], " + str(data_block(t)) + ", " + str(data_width(t) * kLanes) +
         ", " + str(kLanes) + ", (const float*)args[2], " + str(weight_in(t)) + ", " + str(weight_out(t)) + ", " +
         str(kWindow * kLanes * t.y) + ", " + str(kLanes * t.y) + ", (float*)args[5], " + str(out_block(t)) +
         ", (const float*)args[3], (const float*)args[4], act, ACT_LO(act), ACT_HI(act), 0);\n}\n";
  }
  return s;
}

using ConvTileEpilogueTest = testing::PerIsaKernelTest;

// Without a bias the accumulators start at the tile's values in C (a sum continued).
void expect_tile(const testing::LoadedKernels& lib, const Tile& t, int64_t act, bool with_residual, bool with_bias) {
  std::vector<float> data(kInputBlocks * data_block(t)), weight(t.blocks * weight_out(t)), bias(t.blocks * t.y);
  std::vector<float> residual(t.blocks * out_block(t));
  for (size_t p = 0; p < data.size(); ++p) data[p] = static_cast<float>((p * 37) % 23) / 7.0f - 1.5f;
  for (size_t p = 0; p < weight.size(); ++p) weight[p] = static_cast<float>((p * 11) % 13) / 50.0f - 0.12f;
  for (size_t p = 0; p < bias.size(); ++p) bias[p] = static_cast<float>(p % 7) * 0.25f - 0.5f;
  for (size_t p = 0; p < residual.size(); ++p) residual[p] = static_cast<float>((p * 5) % 17) / 4.0f - 2.0f;
  constexpr float kUntouched = 1e30f;
  std::vector<float> out(t.blocks * out_block(t), kUntouched);
  auto start_in_c = [](int64_t i) { return static_cast<float>(i % 9) * 0.125f - 0.5f; };
  if (!with_bias)
    for (int64_t b = 0; b < t.blocks; ++b)
      for (int64_t i = 0; i < t.rows * t.y; ++i) out[b * out_block(t) + i] = start_in_c(b * out_block(t) + i);
  int64_t act_arg = act;
  ASSERT_EQ(lib.call(tile_name(t), {&act_arg, data.data(), weight.data(), with_bias ? bias.data() : nullptr,
                                    with_residual ? residual.data() : nullptr, out.data()}),
            0);
  for (int64_t b = 0; b < t.blocks; ++b) {
    for (int64_t r = 0; r < t.rows; ++r)
      for (int64_t l = 0; l < t.y; ++l) {
        double sum = with_bias ? bias[b * t.y + l] : start_in_c(b * out_block(t) + r * t.y + l);
        for (int64_t ic = 0; ic < kInputBlocks; ++ic)
          for (int64_t ty = 0; ty < kWindow; ++ty)
            for (int64_t tx = 0; tx < kWindow; ++tx)
              for (int64_t i = 0; i < kLanes; ++i)
                sum += static_cast<double>(
                           data[ic * data_block(t) + (ty * data_width(t) + r * t.stride + tx) * kLanes + i]) *
                       weight[b * weight_out(t) + ic * weight_in(t) + (ty * kWindow + tx) * kLanes * t.y + i * t.y + l];
        if (with_residual) sum += residual[b * out_block(t) + r * t.y + l];
        const double want = testing::reference_activation(sum, act);
        ASSERT_NEAR(out[b * out_block(t) + r * t.y + l], want, 1e-4 * (1 + std::fabs(want)))
            << tile_name(t) << " act " << act << (with_residual ? " with" : " without") << " residual,"
            << (with_bias ? " with" : " without") << " bias, block " << b << " row " << r << " lane " << l;
      }
    for (int64_t l = 0; l < t.y; ++l)
      ASSERT_EQ(out[b * out_block(t) + t.rows * t.y + l], kUntouched) << tile_name(t) << " stored past its rows";
  }
}

TEST_P(ConvTileEpilogueTest, StartsAtTheBiasAddsTheResidualAndActivates) {
  if (!cpu_runs_param()) GTEST_SKIP() << "this CPU has no AVX-512";
  testing::LoadedKernels lib(compile_for_param(source()));
  for (const Tile& t : kTiles)
    for (int64_t act : {0, 1, 3})
      for (bool with_residual : {false, true})
        for (bool with_bias : {true, false}) expect_tile(lib, t, act, with_residual, with_bias);
}

INSTANTIATE_TEST_SUITE_P(InstructionSets, ConvTileEpilogueTest, testing::kKernelInstructionSets);

}  // namespace
}  // namespace kiln::codegen
