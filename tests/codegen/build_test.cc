// End to end: tensor expressions -> schedule -> tir -> C -> lib.so, run and compared with plain
// C++ loops.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "codegen/kernel_test_util.h"
#include "kiln/codegen/c_compiler.h"
#include "kiln/codegen/codegen_c.h"
#include "kiln/support/error.h"
#include "kiln/te/lower.h"

namespace kiln::codegen {
namespace {

using namespace kiln::te;
using kiln::testing::LoadedKernels;
using kiln::testing::serial_runtime_stats;

std::string test_cache_dir() { return ::testing::TempDir() + "kiln_codegen_test_cache"; }

std::string build(const std::vector<tir::PrimFunc>& funcs, std::string* source_out = nullptr) {
  std::string source = generate_c(funcs);
  if (source_out) *source_out = source;
  CCompilerOptions options;
  options.cache_dir = test_cache_dir();
  return CCompiler(options).compile(source);
}

std::vector<float> random_values(size_t n, unsigned seed, float lo = -1, float hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, float tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tolerance * (1 + std::fabs(want[i]))) << "element " << i;
}

TEST(CodegenBuild, FusedAddExpRunsInParallelTasks) {
  Tensor a = placeholder({8, 33}, DType::kFloat32, "A");
  Tensor b = placeholder({8, 33}, DType::kFloat32, "B");
  Tensor sum_ab = compute({8, 33}, "T", [&](const Indices& i) { return a(i[0], i[1]) + b(i[0], i[1]); });
  Tensor e = compute({8, 33}, "E", [&](const Indices& i) { return tir::call("exp", {sum_ab(i[0], i[1])}); });
  Schedule s({e});
  s[sum_ab].compute_inline();
  s[e].parallel(s[e].axis(0));
  auto [jo, ji] = s[e].split(s[e].axis(1), 8);  // 33 = 4 * 8 + 1: the last tile is guarded
  s[e].vectorize(ji);
  std::string source;
  LoadedKernels lib(build({lower(s, {a, b, e}, "fused_add_exp")}, &source));
  EXPECT_NE(source.find("KILN_VECTORIZE"), std::string::npos);

  std::vector<float> x = random_values(8 * 33, 1), y = random_values(8 * 33, 2), out(8 * 33, -7.0f);
  int calls_before = serial_runtime_stats().parallel_calls;
  int64_t tasks_before = serial_runtime_stats().parallel_tasks;
  ASSERT_EQ(lib.call("fused_add_exp", {x.data(), y.data(), out.data()}), 0);
  EXPECT_EQ(serial_runtime_stats().parallel_calls, calls_before + 1);
  EXPECT_EQ(serial_runtime_stats().parallel_tasks, tasks_before + 8);
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = std::exp(x[i] + y[i]);
  expect_near_all(out, want, 1e-6f);
}

// Tiles that overhang both axes (10 = 4 + 4 + 2 rows, 13 = 8 + 5 columns): the column guard
// becomes the vector loop's end and the row guard, which the vector loop does not change, is
// tested once around it; the elements past the edges are not written.
TEST(CodegenBuild, GuardOfAnOuterAxisIsTestedAroundTheVectorLoop) {
  Tensor a = placeholder({10, 13}, DType::kFloat32, "A");
  Tensor twice = compute({10, 13}, "T", [&](const Indices& i) { return a(i[0], i[1]) + a(i[0], i[1]); });
  Schedule s({twice});
  auto [io, ii] = s[twice].split(s[twice].axis(0), 4);
  auto [jo, ji] = s[twice].split(s[twice].axis(1), 8);
  s[twice].reorder({io, jo, ii, ji});
  s[twice].vectorize(ji);
  std::string source;
  LoadedKernels lib(build({lower(s, {a, twice}, "twice")}, &source));
  const size_t vector_loop = source.find("KILN_VECTORIZE", source.find("int32_t twice("));
  ASSERT_NE(vector_loop, std::string::npos) << source;
  const size_t row_guard = source.rfind("if (", vector_loop);
  ASSERT_NE(row_guard, std::string::npos) << source;
  EXPECT_EQ(source.find("if (", vector_loop), std::string::npos) << "a guard left inside the vector loop\n" << source;

  std::vector<float> x = random_values(10 * 13, 3), out(10 * 13, 0.0f);
  ASSERT_EQ(lib.call("twice", {x.data(), out.data()}), 0);
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = 2.0f * x[i];
  expect_near_all(out, want, 0.0f);
}

std::vector<float> reference_matmul(const std::vector<float>& a, const std::vector<float>& b, int m, int n, int k) {
  std::vector<float> c(static_cast<size_t>(m * n));
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int p = 0; p < k; ++p) acc += double(a[i * k + p]) * b[p * n + j];
      c[i * n + j] = static_cast<float>(acc);
    }
  return c;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  IterVar k = reduce_axis(a.shape()[1], "k");
  return compute({a.shape()[0], b.shape()[1]}, "C",
                 [&](const Indices& i) { return sum(a(i[0], k) * b(k, i[1]), {k}); });
}

TEST(CodegenBuild, TensorizedMatmulCallsTheMicroKernel) {
  Tensor a = placeholder({64, 64}, DType::kFloat32, "A");
  Tensor b = placeholder({64, 64}, DType::kFloat32, "B");
  Tensor c = matmul(a, b);
  Schedule s({c});
  auto [io, ii] = s[c].split(s[c].axis(0), 4);
  auto [jo, ji] = s[c].split(s[c].axis(1), 16);
  s[c].reorder({io, jo, ii, ji, s[c].reduce_axis(0)});
  s[c].tensorize(ii, gemm_f32_intrin(4, 16, 64));
  s[c].parallel(io);
  std::string source;
  LoadedKernels lib(build({lower(s, {a, b, c}, "matmul_tensorized")}, &source));
  EXPECT_NE(source.find("kiln_sgemm_f32_4x16(64, (A + (i_outer * 256)), 64, (B + (j_outer * 16)), 64"),
            std::string::npos)
      << source;

  std::vector<float> x = random_values(64 * 64, 3), y = random_values(64 * 64, 4), out(64 * 64, 123.0f);
  ASSERT_EQ(lib.call("matmul_tensorized", {x.data(), y.data(), out.data()}), 0);
  expect_near_all(out, reference_matmul(x, y, 64, 64, 64), 1e-4f);
}

TEST(CodegenBuild, ScheduledMatmulMatchesLoops) {
  Tensor a = placeholder({48, 40}, DType::kFloat32, "A");
  Tensor b = placeholder({40, 36}, DType::kFloat32, "B");
  Tensor c = matmul(a, b);
  Schedule s({c});
  Tensor local = s.cache_write(c);
  auto [io, ii] = s[c].split(s[c].axis(0), 8);
  auto [jo, ji] = s[c].split(s[c].axis(1), 16);  // 36 columns: a partial last tile
  s[c].reorder({io, jo, ii, ji});
  s[c].parallel(io);
  s[c].vectorize(ji);
  s[local].compute_at(s[c], jo);
  IterVar k = s[local].reduce_axis(0);
  s[local].reorder({k, s[local].axis(0), s[local].axis(1)});
  s[local].vectorize(s[local].axis(1));
  LoadedKernels lib(build({lower(s, {a, b, c}, "matmul_tiled")}));
  std::vector<float> x = random_values(48 * 40, 5), y = random_values(40 * 36, 6), out(48 * 36, 0.0f);
  ASSERT_EQ(lib.call("matmul_tiled", {x.data(), y.data(), out.data()}), 0);
  expect_near_all(out, reference_matmul(x, y, 48, 36, 40), 1e-4f);
}

TEST(CodegenBuild, ReductionsMatchLoops) {
  Tensor x = placeholder({16, 100}, DType::kFloat32, "X");
  IterVar k = reduce_axis(100, "k");
  Tensor row_sum = compute({16}, "row_sum", [&](const Indices& i) { return sum(x(i[0], k), {k}); });
  IterVar k2 = reduce_axis(100, "k2");
  Tensor row_max = compute({16}, "row_max", [&](const Indices& i) { return te::max(x(i[0], k2), {k2}); });
  Schedule s({row_sum});
  auto [ko, ki] = s[row_sum].split(s[row_sum].reduce_axis(0), 8);  // 100 = 12 * 8 + 4: guarded
  s[row_sum].reorder({ko, s[row_sum].axis(0), ki});
  Schedule s_max({row_max});
  s_max[row_max].parallel(s_max[row_max].axis(0));
  LoadedKernels lib(build({lower(s, {x, row_sum}, "row_sum"), lower(s_max, {x, row_max}, "row_max")}));

  std::vector<float> in = random_values(16 * 100, 7), sums(16, 99.0f), maxes(16, 99.0f);
  ASSERT_EQ(lib.call("row_sum", {in.data(), sums.data()}), 0);
  ASSERT_EQ(lib.call("row_max", {in.data(), maxes.data()}), 0);
  std::vector<float> want_sum(16), want_max(16);
  for (int i = 0; i < 16; ++i) {
    double acc = 0;
    float m = -INFINITY;
    for (int j = 0; j < 100; ++j) {
      acc += in[i * 100 + j];
      m = std::max(m, in[i * 100 + j]);
    }
    want_sum[i] = static_cast<float>(acc);
    want_max[i] = m;
  }
  expect_near_all(sums, want_sum, 1e-5f);
  expect_near_all(maxes, want_max, 0);
}

// The convolution of lower_test.cc under its three schedules, against direct loops.
TEST(CodegenBuild, ConvSchedulesMatchLoops) {
  Tensor x = placeholder({8, 8}, DType::kFloat32, "X");
  Tensor w = placeholder({3, 3}, DType::kFloat32, "W");
  Tensor pad = compute({10, 10}, "pad", [&](const Indices& i) {
    PrimExpr inside = tir::logical_and(tir::logical_and(tir::ge(i[0], 1), tir::lt(i[0], 9)),
                                       tir::logical_and(tir::ge(i[1], 1), tir::lt(i[1], 9)));
    return tir::select(inside, x(i[0] - 1, i[1] - 1), tir::float_imm(0));
  });
  IterVar r = reduce_axis(3, "r"), q = reduce_axis(3, "q");
  Tensor out = compute({8, 8}, "out", [&](const Indices& i) { return sum(pad(i[0] + r, i[1] + q) * w(r, q), {r, q}); });

  std::vector<tir::PrimFunc> funcs;
  {
    Schedule s({out});
    s[pad].compute_inline();
    funcs.push_back(lower(s, {x, w, out}, "conv_inline"));
  }
  {
    Schedule s({out});
    auto [io, ii] = s[out].split(s[out].axis(0), 3);  // 8 rows in tiles of 3: regions reach past the edge
    s[pad].compute_at(s[out], io);
    funcs.push_back(lower(s, {x, w, out}, "conv_compute_at"));
  }
  {
    Schedule s({out});
    Tensor local = s.cache_write(out);
    auto [io, ii] = s[out].split(s[out].axis(0), 2);
    auto [jo, ji] = s[out].split(s[out].axis(1), 4);
    s[out].reorder({io, jo, ii, ji});
    s[local].compute_at(s[out], jo);
    s[pad].compute_at(s[local], s[local].axis(1));
    s[out].parallel(io);
    funcs.push_back(lower(s, {x, w, out}, "conv_cache_write"));
  }
  {
    Schedule s({out});  // pad materialised at the root as scratch
    funcs.push_back(lower(s, {x, w, out}, "conv_root"));
  }
  LoadedKernels lib(build(funcs));

  std::vector<float> image = random_values(64, 8), filter = random_values(9, 9);
  std::vector<float> want(64);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      float acc = 0;
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
          int y = i + a - 1, z = j + b - 1;
          if (y >= 0 && y < 8 && z >= 0 && z < 8) acc += image[y * 8 + z] * filter[a * 3 + b];
        }
      want[i * 8 + j] = acc;
    }
  for (const auto& f : funcs) {
    SCOPED_TRACE(f.name);
    std::vector<float> got(64, 42.0f);
    ASSERT_EQ(lib.call(f.name, {image.data(), filter.data(), got.data()}), 0);
    expect_near_all(got, want, 1e-5f);
  }
}

TEST(CodegenBuild, LargeScratchComesFromTheWorkspace) {
  Tensor a = placeholder({128, 128}, DType::kFloat32, "A");
  Tensor twice = compute({128, 128}, "twice", [&](const Indices& i) { return a(i[0], i[1]) * 2; });
  Tensor out = compute({128, 128}, "out", [&](const Indices& i) { return twice(i[1], i[0]) + 1; });
  Schedule s({out});
  std::string source;
  LoadedKernels lib(build({lower(s, {a, out}, "transpose_twice")}, &source));
  EXPECT_NE(source.find("workspace_alloc(65536)"), std::string::npos) << source;
  std::vector<float> in = random_values(128 * 128, 10), got(128 * 128);
  int allocs = serial_runtime_stats().workspace_allocs, frees = serial_runtime_stats().workspace_frees;
  ASSERT_EQ(lib.call("transpose_twice", {in.data(), got.data()}), 0);
  EXPECT_EQ(serial_runtime_stats().workspace_allocs, allocs + 1);
  EXPECT_EQ(serial_runtime_stats().workspace_frees, frees + 1);
  for (int i = 0; i < 128; ++i)
    for (int j = 0; j < 128; ++j) ASSERT_EQ(got[i * 128 + j], in[j * 128 + i] * 2 + 1);
}

TEST(CodegenBuild, IntegerFloorDivisionAndCasts) {
  Tensor a = placeholder({12}, DType::kInt32, "A");
  Tensor out = compute({12}, "out", [&](const Indices& i) {
    PrimExpr v = tir::cast(DType::kInt64, a(i[0]));
    PrimExpr mixed = tir::floordiv(v, 4) * 10 + tir::floormod(v, 4);
    return tir::cast(DType::kFloat32, tir::select(tir::lt(v, 0), mixed, tir::min(v, 5)));
  });
  Schedule s({out});
  LoadedKernels lib(build({lower(s, {a, out}, "int_ops")}));
  std::vector<int32_t> in = {-9, -8, -5, -4, -1, 0, 1, 3, 4, 5, 7, 100};
  std::vector<float> got(12);
  ASSERT_EQ(lib.call("int_ops", {in.data(), got.data()}), 0);
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t v = in[i];
    int64_t fdiv = v >= 0 ? v / 4 : -((-v + 3) / 4), fmod = v - fdiv * 4;
    float want = static_cast<float>(v < 0 ? fdiv * 10 + fmod : std::min<int64_t>(v, 5));
    EXPECT_EQ(got[i], want) << "input " << v;
  }
}

TEST(CodegenC, RejectsBadFunctionNames) {
  Tensor a = placeholder({4}, DType::kFloat32, "A");
  Tensor b = compute({4}, "B", [&](const Indices& i) { return a(i[0]); });
  Schedule s({b});
  tir::PrimFunc f = lower(s, {a, b}, "copy");
  EXPECT_THROW(generate_c({f, f}), Error);
  f.name = "not a name";
  EXPECT_THROW(generate_c({f}), Error);
  f.name = "kiln_abi_version";
  EXPECT_THROW(generate_c({f}), Error);
}

}  // namespace
}  // namespace kiln::codegen
