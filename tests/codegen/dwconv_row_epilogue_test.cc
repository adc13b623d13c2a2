// The depthwise row kernel of kiln/runtime/microkernels.h with its register epilogue
// (kiln_dwconv_row_ep_f32: start at a per-channel init, store through an activation) against
// the accumulating row (kiln_dwconv_row_f32) started at the init and activated afterwards, and
// both against double sums. Compiled as generated code is (CCompiler) for each instruction set
// the header has a path for: 16-lane AVX-512, 8-lane AVX2 and the portable loops, so the paths
// this host's kernels do not take are checked too.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel_test_util.h"

namespace kiln::codegen {
namespace {

// args: ints (lanes, ow, kh, kw, sw, dh, dw, h, w, row0, col0, act), plane, weight, init, out.
// ep: the row with the epilogue; plain: out set to init by the caller, the accumulating row, then
// the scalar activation of each element.
const std::string kSource =
    std::string(testing::kMicrokernelPreamble) + testing::kActivationParameters +
    R"(#define ARGS                                                                                 \
  const int64_t* i = (const int64_t*)args[0];                                                \
  const float *plane = (const float*)args[1], *weight = (const float*)args[2],               \
              *init = (const float*)args[3];                                                 \
  float* out = (float*)args[4];
int32_t ep(void* const* args) {
  ARGS
  return kiln_dwconv_row_ep_f32(i[0], i[1], i[2], i[3], i[4], i[5], i[6], plane, i[7], i[8], i[8] * i[0], i[9],
                                i[10], weight, out, init, (int32_t)i[11], ACT_LO(i[11]), ACT_HI(i[11]));
}
int32_t plain(void* const* args) {
  ARGS
  for (int64_t p = 0; p < i[1] * i[0]; ++p) out[p] = init[p % i[0]];
  int32_t status = kiln_dwconv_row_f32(i[0], i[1], i[2], i[3], i[4], i[5], i[6], plane, i[7], i[8], i[8] * i[0],
                                       i[9], i[10], weight, out);
  for (int64_t p = 0; p < i[1] * i[0]; ++p)
    out[p] = kiln_activate_f32((int32_t)i[11], ACT_LO(i[11]), ACT_HI(i[11]), out[p]);
  return status;
}
)";

struct Row {
  int64_t lanes, ow, kh, kw, sw, dh, dw, h, w, row0, col0;
};

// Rows with border positions on both sides, strides 1 and 2, dilation, 5x5 windows, tap rows
// partly and wholly outside the plane (row0 below -kh and past h), 16 and 32 lanes.
const std::vector<Row> kRows = {{16, 11, 3, 3, 1, 1, 1, 9, 11, -1, -1},  {16, 6, 3, 3, 2, 1, 1, 9, 11, 7, -1},
                                {16, 13, 5, 5, 1, 1, 1, 8, 13, -2, -2},  {32, 7, 5, 5, 2, 1, 1, 8, 13, 5, -2},
                                {16, 20, 3, 3, 1, 2, 2, 10, 20, -2, -2}, {16, 9, 3, 3, 1, 1, 1, 4, 9, -5, -1},
                                {16, 9, 3, 3, 1, 1, 1, 4, 9, 4, -1},     {32, 29, 3, 3, 1, 1, 1, 3, 29, 0, -1}};

using DwconvRowEpilogueTest = testing::PerIsaKernelTest;

void expect_row(const testing::LoadedKernels& lib, const Row& r, int64_t act) {
  std::vector<float> plane(r.h * r.w * r.lanes), weight(r.kh * r.kw * r.lanes), init(r.lanes);
  for (size_t p = 0; p < plane.size(); ++p) plane[p] = static_cast<float>((p * 37) % 23) / 7.0f - 1.5f;
  for (size_t p = 0; p < weight.size(); ++p) weight[p] = static_cast<float>((p * 11) % 13) / 5.0f - 1.2f;
  for (size_t p = 0; p < init.size(); ++p) init[p] = static_cast<float>(p) * 0.25f - 2.0f;
  const std::vector<int64_t> ints = {r.lanes, r.ow, r.kh, r.kw, r.sw, r.dh, r.dw, r.h, r.w, r.row0, r.col0, act};
  std::vector<float> with_ep(r.ow * r.lanes, 1e30f), without(r.ow * r.lanes);
  ASSERT_EQ(
      lib.call("ep", {const_cast<int64_t*>(ints.data()), plane.data(), weight.data(), init.data(), with_ep.data()}), 0);
  ASSERT_EQ(
      lib.call("plain", {const_cast<int64_t*>(ints.data()), plane.data(), weight.data(), init.data(), without.data()}),
      0);
  for (int64_t x = 0; x < r.ow; ++x)
    for (int64_t c = 0; c < r.lanes; ++c) {
      double sum = init[c];
      for (int64_t ty = 0; ty < r.kh; ++ty)
        for (int64_t tx = 0; tx < r.kw; ++tx) {
          const int64_t y = r.row0 + ty * r.dh, col = r.col0 + x * r.sw + tx * r.dw;
          if (y >= 0 && y < r.h && col >= 0 && col < r.w)
            sum += static_cast<double>(plane[(y * r.w + col) * r.lanes + c]) * weight[(ty * r.kw + tx) * r.lanes + c];
        }
      const double want = testing::reference_activation(sum, act);
      const size_t at = x * r.lanes + c;
      ASSERT_NEAR(with_ep[at], want, 1e-4 * (1 + std::fabs(want)))
          << "ep: act " << act << " row0 " << r.row0 << " x " << x;
      ASSERT_NEAR(without[at], want, 1e-4 * (1 + std::fabs(want))) << "plain: act " << act << " row0 " << r.row0;
    }
}

TEST_P(DwconvRowEpilogueTest, MatchesTheAccumulatingRowAndDoubleSums) {
  if (!cpu_runs_param()) GTEST_SKIP() << "this CPU has no AVX-512";
  testing::LoadedKernels lib(compile_for_param(kSource));
  for (const Row& r : kRows)
    for (int64_t act : {0, 1, 2, 3}) expect_row(lib, r, act);
}

INSTANTIATE_TEST_SUITE_P(InstructionSets, DwconvRowEpilogueTest, testing::kKernelInstructionSets);

}  // namespace
}  // namespace kiln::codegen
