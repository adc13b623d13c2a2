// The 1x1 blocked convolution tile of kiln/runtime/microkernels.h (kiln_conv_nchwc_f32, one tap)
// compiled as generated code is (CCompiler, -march=native: the AVX-512 tile on such a machine),
// called with literal rows, blocks and stride as the schedule emits them: row counts from 1 to 14,
// one to four output blocks, strides 1 and 2, several input channel blocks; the tile adds to what
// the output held and writes nothing outside its rows and blocks.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "codegen/kernel_test_util.h"

namespace kiln::codegen {
namespace {

constexpr int64_t kMaxRows = 14, kMaxBlocks = 4, kInputBlocks = 3, kOutputBlocks = 5;
// The accumulators are one macro per (block, row): the first and last rows, and a few between.
const std::vector<int64_t> kRows = {1, 2, 7, 8, 13, 14};
// Data positions and output positions per channel block; the output's tile starts at position 1.
constexpr int64_t kPositions = 2 * kMaxRows + 1, kOutPositions = kMaxRows + 2;

std::string tile_name(int64_t rows, int64_t blocks, int64_t stride) {
  return "tile_" + std::to_string(rows) + "_" + std::to_string(blocks) + "_" + std::to_string(stride);
}

// One function per (rows, blocks, stride): args data, weight, out. The weight's output blocks
// are kInputBlocks * 256 floats apart; the output's channel blocks kOutPositions * 16.
std::string source() {
  std::string s = testing::kMicrokernelPreamble;
  for (int64_t stride = 1; stride <= 2; ++stride)
    for (int64_t rows : kRows)
      for (int64_t blocks = 1; blocks <= kMaxBlocks; ++blocks)
        s += "int32_t " + tile_name(rows, blocks, stride) + "(void* const* args) { return kiln_conv_nchwc_f32(" +
             std::to_string(rows) + ", " + std::to_string(blocks) + ", " + std::to_string(stride) + ", " +
             std::to_string(kInputBlocks) + ", 16, 16, 1, 1, (const float*)args[0], " +
             std::to_string(kPositions * 16) + ", 0, 0, (const float*)args[1], 256, " +
             std::to_string(kInputBlocks * 256) + ", 0, 0, (float*)args[2] + 16, " +
             std::to_string(kOutPositions * 16) + "); }\n";
  return s;
}

class Conv1x1TileTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cache_ = std::make_unique<testing::TestKernelCache>();
    library_ = cache_->compile(source());
  }
  static void TearDownTestSuite() { cache_.reset(); }

  static inline std::unique_ptr<testing::TestKernelCache> cache_;
  static inline std::string library_;
};

TEST_F(Conv1x1TileTest, EveryTileShapeAddsItsSumsAndNothingElse) {
  testing::LoadedKernels lib(library_);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> data(kInputBlocks * kPositions * 16), weight(kOutputBlocks * kInputBlocks * 256);
  for (float& v : data) v = uniform(rng);
  for (float& v : weight) v = uniform(rng);
  for (int64_t stride = 1; stride <= 2; ++stride)
    for (int64_t rows : kRows)
      for (int64_t blocks = 1; blocks <= kMaxBlocks; ++blocks) {
        const std::string name = tile_name(rows, blocks, stride);
        std::vector<float> out(kOutputBlocks * kOutPositions * 16, 0.5f);
        ASSERT_EQ(lib.call(name, {data.data(), weight.data(), out.data()}), 0) << name;
        for (int64_t b = 0; b < kOutputBlocks; ++b)
          for (int64_t p = 0; p < kOutPositions; ++p)
            for (int64_t l = 0; l < 16; ++l) {
              const float got = out[(b * kOutPositions + p) * 16 + l];
              const int64_t r = p - 1;
              if (b >= blocks || r < 0 || r >= rows) {
                ASSERT_EQ(got, 0.5f) << name << " wrote block " << b << " position " << p;
                continue;
              }
              double want = 0.5;
              for (int64_t ic = 0; ic < kInputBlocks; ++ic)
                for (int64_t i = 0; i < 16; ++i)
                  want += static_cast<double>(data[(ic * kPositions + r * stride) * 16 + i]) *
                          weight[((b * kInputBlocks + ic) * 16 + i) * 16 + l];
              ASSERT_NEAR(got, want, 1e-4) << name << " block " << b << " row " << r << " lane " << l;
            }
      }
}

}  // namespace
}  // namespace kiln::codegen
