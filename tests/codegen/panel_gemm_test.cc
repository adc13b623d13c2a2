// The panel GEMM of kiln/runtime/microkernels.h (kiln_sgemm_panels_f32, kiln_sgemm_panels_nt_f32)
// compiled as generated code is, for each instruction set the header has a path for (AVX-512's
// row tiles of 12, AVX2's 6-row groups and one-row tile, the portable loops), on sizes that leave
// remainders everywhere: m not a multiple of the row tile, n not a multiple of the 32-column
// panel, k not a multiple of the k-block or odd, packed and row-major B.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "codegen/kernel_test_util.h"

namespace kiln::codegen {
namespace {

// args: m, n, k, kc (int64 each), a, b, c; the shapes' strides are derived as a caller's would be.
const std::string kSource = std::string(testing::kMicrokernelPreamble) +
                            R"(#define SIZES                                                                         \
  const int64_t m = *(const int64_t*)args[0], n = *(const int64_t*)args[1],           \
                k = *(const int64_t*)args[2], kc = *(const int64_t*)args[3];          \
  const float* a = (const float*)args[4];                                             \
  const float* b = (const float*)args[5];                                             \
  float* c = (float*)args[6];
/* b packed as (panels, k, 32); c has n + 3 columns, the last 3 must stay untouched. */
int32_t packed(void* const* args) {
  SIZES
  return kiln_sgemm_panels_f32(m, n, k, a, k, b, KILN_PANEL_NR, k * KILN_PANEL_NR, c, n + 3, kc);
}
/* b row-major (k, n). */
int32_t row_major(void* const* args) {
  SIZES
  return kiln_sgemm_panels_f32(m, n, k, a, k, b, n, KILN_PANEL_NR, c, n + 3, kc);
}
/* b as n rows of k. */
int32_t transposed(void* const* args) {
  SIZES
  return kiln_sgemm_panels_nt_f32(m, n, k, a, k, b, k, c, n + 3, kc);
}
)";

using PanelGemmTest = testing::PerIsaKernelTest;

struct Sizes {
  int64_t m, n, k, kc;
};

enum class BLayout { kPacked, kRowMajor, kTransposed };

// b (k, n) in the layout the kernel reads, zero padding past n for the packed panels.
std::vector<float> lay_out(const std::vector<float>& b, const Sizes& s, BLayout layout) {
  if (layout == BLayout::kRowMajor) return b;
  if (layout == BLayout::kTransposed) {
    std::vector<float> t(s.n * s.k);
    for (int64_t p = 0; p < s.k; ++p)
      for (int64_t j = 0; j < s.n; ++j) t[j * s.k + p] = b[p * s.n + j];
    return t;
  }
  const int64_t panels = (s.n + 31) / 32;
  std::vector<float> packed(panels * s.k * 32, 0.0f);
  for (int64_t p = 0; p < s.k; ++p)
    for (int64_t j = 0; j < s.n; ++j) packed[(j / 32) * s.k * 32 + p * 32 + j % 32] = b[p * s.n + j];
  return packed;
}

// c (m rows of n + 3, starting from ones) += a b, checked entry by entry against double sums.
void expect_product(const testing::LoadedKernels& lib, const char* kernel, const Sizes& s, BLayout layout) {
  std::mt19937 rng(static_cast<uint32_t>(s.m * 1000003 + s.n * 1009 + s.k));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(s.m * s.k), b(s.k * s.n);
  for (float& v : a) v = uniform(rng);
  for (float& v : b) v = uniform(rng);
  const int64_t ldc = s.n + 3;
  std::vector<float> c(s.m * ldc, 1.0f);
  std::vector<float> b_laid_out = lay_out(b, s, layout);
  Sizes sizes = s;
  ASSERT_EQ(lib.call(kernel, {&sizes.m, &sizes.n, &sizes.k, &sizes.kc, a.data(), b_laid_out.data(), c.data()}), 0);
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double expected = 1.0;
      for (int64_t p = 0; p < s.k; ++p) expected += static_cast<double>(a[i * s.k + p]) * b[p * s.n + j];
      ASSERT_NEAR(c[i * ldc + j], expected, 1e-5 * (s.k + 1)) << kernel << " m " << s.m << " n " << s.n << " k " << s.k
                                                              << " kc " << s.kc << " at (" << i << ", " << j << ")";
    }
    for (int64_t j = s.n; j < ldc; ++j)
      ASSERT_EQ(c[i * ldc + j], 1.0f) << kernel << " wrote column " << j << " past n = " << s.n;
  }
}

// Row counts around the row tiles of 6, 8 and 12 (one row, a partial tile, whole tiles plus a rest),
// columns around the 32-column panel, k in several k-blocks with a partial last one. A single
// row tile runs the whole k whatever kc says, prefetching KILN_PANEL_STREAM_AHEAD rows ahead:
// k past that distance, with a kc it must ignore; an odd k for the one-row tile's step pairs.
const std::vector<Sizes> kSizes = {{1, 32, 16, 0},    {5, 7, 3, 0},      {12, 32, 40, 16},  {13, 45, 37, 16},
                                   {25, 100, 70, 32}, {24, 64, 200, 64}, {197, 33, 50, 16}, {1, 70, 300, 64},
                                   {3, 40, 131, 32},  {1, 64, 77, 0}};

TEST_P(PanelGemmTest, PackedPanels) {
  if (!cpu_runs_param()) GTEST_SKIP() << "this CPU has no AVX-512";
  testing::LoadedKernels lib(compile_for_param(kSource));
  for (const Sizes& s : kSizes) expect_product(lib, "packed", s, BLayout::kPacked);
}

TEST_P(PanelGemmTest, RowMajorB) {
  if (!cpu_runs_param()) GTEST_SKIP() << "this CPU has no AVX-512";
  testing::LoadedKernels lib(compile_for_param(kSource));
  for (const Sizes& s : kSizes) expect_product(lib, "row_major", s, BLayout::kRowMajor);
}

TEST_P(PanelGemmTest, TransposedB) {
  if (!cpu_runs_param()) GTEST_SKIP() << "this CPU has no AVX-512";
  testing::LoadedKernels lib(compile_for_param(kSource));
  for (const Sizes& s : kSizes) expect_product(lib, "transposed", s, BLayout::kTransposed);
}

INSTANTIATE_TEST_SUITE_P(InstructionSets, PanelGemmTest, testing::kKernelInstructionSets);

}  // namespace
}  // namespace kiln::codegen
