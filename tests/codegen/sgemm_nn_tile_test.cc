// The NN register tiles of kiln/runtime/microkernels.h (kiln_sgemm_nn_f32_<MR>x<NR>, which the
// NCHW convolution and row-major product schedules call) against double sums, for every tile the
// header defines, 1x1, 3x3 and 2x1 windows, and column counts from one to the tile's width: whole
// 16-column strips and the masked strips of a tile hanging over the end of B and C. Compiled as
// generated code is for each instruction set the header has a path for (AVX-512's tiles, AVX2's
// groups of up to six rows, the portable loops), so the paths this host does not take are checked
// too. The tile adds to what C held and writes nothing outside its rows and first n columns.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/kernel_test_util.h"

namespace kiln::codegen {
namespace {

struct Tile {
  int64_t mr, nr;
};
const std::vector<Tile> kTiles = {{1, 16}, {2, 16}, {4, 16}, {8, 16}, {1, 32}, {2, 32}, {4, 32}, {8, 32}, {12, 32}};
struct Window {
  int64_t h, w;
};
const std::vector<Window> kWindows = {{1, 1}, {3, 3}, {2, 1}};
constexpr int64_t kChannels = 5;
// B is kChannels images of kImageRows x kImageWidth; a tap (r, s) shifts the tile's columns by
// s and its rows by r, as a convolution's window does along an NCHW row.
constexpr int64_t kImageRows = 4, kImageWidth = 40;

std::string tile_name(const Tile& t) { return "nn_" + std::to_string(t.mr) + "x" + std::to_string(t.nr); }

// args: taps_h, taps_w, n (int64 each), a, b, c. A's rows hold the taps channel-major (OIHW), one
// float of padding at the end of each row; C's rows are 8 floats longer than the tile.
std::string source() {
  std::string s = testing::kMicrokernelPreamble;
  for (const Tile& t : kTiles)
    s += "int32_t " + tile_name(t) +
         "(void* const* args) {\n"
         "  const int64_t th = *(const int64_t*)args[0], tw = *(const int64_t*)args[1], n = *(const int64_t*)args[2];\n"
         "  return kiln_sgemm_nn_f32_" +
         std::to_string(t.mr) + "x" + std::to_string(t.nr) + "(" + std::to_string(kChannels) +
         ", th, tw, (const float*)args[3], " + std::to_string(kChannels) + " * th * tw + 1, th * tw, tw, 1, " +
         "(const float*)args[4], " + std::to_string(kImageRows * kImageWidth) + ", " + std::to_string(kImageWidth) +
         ", 1, (float*)args[5], " + std::to_string(t.nr + 8) + ", n);\n}\n";
  return s;
}

using SgemmNnTileTest = testing::PerIsaKernelTest;

void expect_tile(const testing::LoadedKernels& lib, const Tile& t, const Window& w, int64_t n) {
  const int64_t a_k = w.h * w.w, a_row = kChannels * a_k + 1, c_row = t.nr + 8;
  std::vector<float> a(t.mr * a_row), b(kChannels * kImageRows * kImageWidth);
  for (size_t p = 0; p < a.size(); ++p) a[p] = static_cast<float>((p * 7) % 19) / 9.0f - 1.0f;
  for (size_t p = 0; p < b.size(); ++p) b[p] = static_cast<float>((p * 13) % 29) / 14.0f - 1.0f;
  constexpr float kStart = 0.5f;
  std::vector<float> c((t.mr + 1) * c_row, kStart);
  int64_t th = w.h, tw = w.w, cols = n;
  ASSERT_EQ(lib.call(tile_name(t), {&th, &tw, &cols, a.data(), b.data(), c.data()}), 0);
  const std::string where =
      tile_name(t) + " window " + std::to_string(w.h) + "x" + std::to_string(w.w) + " n " + std::to_string(n);
  for (int64_t i = 0; i <= t.mr; ++i)
    for (int64_t j = 0; j < c_row; ++j) {
      const float got = c[i * c_row + j];
      if (i == t.mr || j >= n) {
        ASSERT_EQ(got, kStart) << where << " wrote row " << i << " column " << j;
        continue;
      }
      double want = kStart;
      for (int64_t p = 0; p < kChannels; ++p)
        for (int64_t r = 0; r < w.h; ++r)
          for (int64_t s = 0; s < w.w; ++s)
            want += static_cast<double>(a[i * a_row + p * a_k + r * w.w + s]) *
                    b[p * kImageRows * kImageWidth + r * kImageWidth + s + j];
      ASSERT_NEAR(got, want, 1e-4 * (1 + std::abs(want))) << where << " row " << i << " column " << j;
    }
}

TEST_P(SgemmNnTileTest, EveryTileAddsItsSumsToItsRowsAndColumnsOnly) {
  if (!cpu_runs_param()) GTEST_SKIP() << "this CPU has no AVX-512";
  testing::LoadedKernels lib(compile_for_param(source()));
  for (const Tile& t : kTiles)
    for (const Window& w : kWindows)
      for (int64_t n : {t.nr, t.nr - 1, int64_t{17}, int64_t{16}, int64_t{9}, int64_t{8}, int64_t{1}})
        if (n <= t.nr) expect_tile(lib, t, w, n);
}

INSTANTIATE_TEST_SUITE_P(InstructionSets, SgemmNnTileTest, testing::kKernelInstructionSets);

}  // namespace
}  // namespace kiln::codegen
