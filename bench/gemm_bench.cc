// Micro-benchmark of the float32 panel GEMM (include/kiln/runtime/microkernels.h) on the products
// of ViT-B/16 and BERT-base, called as the generated code calls it: B packed into (panels, K, 32)
// as PackDenseWeights does, one kiln_sgemm_panels_f32 call per tile of rows x nr columns (nr as
// plan_panels in src/op/nn/dense.cc widens it), the k-block as panel_k_block picks it, the tiles
// spread over a kiln::ThreadPool. Built with -march=native like the generated code. A benchmark,
// not a test (bench/README.md).
// usage: gemm_bench [THREADS] [REPEATS] [M N K]  (one shape instead of the models')
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "kiln/runtime/microkernels.h"
#include "runtime/thread_pool.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

struct Shape {
  const char* model;
  int64_t m, n, k;
};

// One core's fp32 peak in GFLOP/s: independent FMA chains as `kiln bench --profile` measures it,
// the fastest of many short bursts (on a shared machine, some run undisturbed); 0 without AVX-512.
double peak_gflops() {
#if defined(__AVX512F__)
  static volatile float sink;
  constexpr int kChains = 12;
  const int64_t steps = int64_t{1} << 14;
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(0.001f * static_cast<float>(c));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  double best = 1e30;
  for (int burst = 0; burst < 400; ++burst) {
    const auto start = Clock::now();
    for (int64_t s = 0; s < steps; ++s)
      for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  __m512 total = acc[0];
  for (int c = 1; c < kChains; ++c) total = _mm512_add_ps(total, acc[c]);
  float lanes[16];
  _mm512_storeu_ps(lanes, total);
  sink = lanes[0];
  return static_cast<double>(steps) * kChains * 32 / best / 1e9;
#else
  return 0.0;
#endif
}

int64_t cache_bytes(int name, int64_t fallback) {
  const long bytes = sysconf(name);
  return bytes > 0 ? bytes : fallback;
}

// panel_k_block of src/op/nn/dense.cc.
int64_t k_block(int64_t rows, int64_t k) {
  const int64_t l1 = cache_bytes(_SC_LEVEL1_DCACHE_SIZE, 32 << 10), l2 = cache_bytes(_SC_LEVEL2_CACHE_SIZE, 1 << 20);
  int64_t kc = std::max<int64_t>(16, l1 / 2 / (KILN_PANEL_NR * 4) / 16 * 16);
  kc = std::max<int64_t>(16, std::min(kc, l2 / 2 / (rows * 4) / 16 * 16));
  return std::min(kc, k);
}

// plan_panels of src/op/nn/dense.cc: columns per call.
int64_t columns_per_call(int64_t m, int64_t n) {
  const int64_t np = (n + KILN_PANEL_NR - 1) / KILN_PANEL_NR * KILN_PANEL_NR;
  int64_t nr = KILN_PANEL_NR;
  while (np % (2 * nr) == 0 && np / (2 * nr) >= 8 && (np / (2 * nr)) % 2 == 0 && m * 2 * nr * 4 <= (256 << 10)) nr *= 2;
  return nr;
}

// (K, N) row-major -> (panels, K, 32), zero past n.
std::vector<float> pack_panels(const std::vector<float>& b, int64_t n, int64_t k) {
  const int64_t panels = (n + KILN_PANEL_NR - 1) / KILN_PANEL_NR;
  std::vector<float> packed(panels * k * KILN_PANEL_NR, 0.0f);
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j)
      packed[(j / KILN_PANEL_NR) * k * KILN_PANEL_NR + p * KILN_PANEL_NR + j % KILN_PANEL_NR] = b[p * n + j];
  return packed;
}

// Largest relative error of C against a double-precision product on a few sampled entries.
double sampled_error(const Shape& s, const std::vector<float>& a, const std::vector<float>& b,
                     const std::vector<float>& c) {
  double worst = 0;
  for (int64_t t = 0; t < 64; ++t) {
    const int64_t i = (t * 37) % s.m, j = (t * 101) % s.n;
    double ref = 0, scale = 0;
    for (int64_t p = 0; p < s.k; ++p) {
      ref += static_cast<double>(a[i * s.k + p]) * b[p * s.n + j];
      scale += std::abs(static_cast<double>(a[i * s.k + p]) * b[p * s.n + j]);
    }
    worst = std::max(worst, std::abs(ref - c[i * s.n + j]) / (scale + 1e-30));
  }
  return worst;
}

void run_shape(kiln::ThreadPool& pool, const Shape& s, int repeats, double peak) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n);
  for (float& v : a) v = uniform(rng);
  for (float& v : b) v = uniform(rng);
  const std::vector<float> packed = pack_panels(b, s.n, s.k);
  const int64_t nr = columns_per_call(s.m, s.n), kc = k_block(s.m, s.k);
  const int64_t tiles = (s.n + nr - 1) / nr;
  auto run_tile = [&](int64_t t) {
    const int64_t j0 = t * nr;
    float* out = c.data() + j0;
    for (int64_t i = 0; i < s.m; ++i) std::fill(out + i * s.n, out + i * s.n + std::min(nr, s.n - j0), 0.0f);
    kiln_sgemm_panels_f32(s.m, std::min(nr, s.n - j0), s.k, a.data(), s.k,
                          packed.data() + (j0 / KILN_PANEL_NR) * s.k * KILN_PANEL_NR, KILN_PANEL_NR,
                          s.k * KILN_PANEL_NR, out, s.n, kc);
  };
  pool.parallel_for(tiles, run_tile);
  const double error = sampled_error(s, a, b, c);
  // The median of whole products, and the sum over tiles of each tile's fastest call (one thread:
  // on a shared machine a call of a fraction of a millisecond often runs undisturbed).
  std::vector<double> ms;
  std::vector<double> tile_best(tiles, 1e30);
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    pool.parallel_for(tiles, [&](int64_t t) {
      const auto tile_start = Clock::now();
      run_tile(t);
      tile_best[t] =
          std::min(tile_best[t], std::chrono::duration<double, std::milli>(Clock::now() - tile_start).count());
    });
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  double best = 0;
  for (double t : tile_best) best += t;
  best /= pool.num_threads();
  const double flops = 2.0 * s.m * s.n * s.k;
  const double gflops = flops / (median * 1e6), best_gflops = flops / (best * 1e6);
  const double share = peak > 0 ? 100 * best_gflops / (peak * pool.num_threads()) : 0;
  std::printf(
      "%-5s %4lld x %4lld x %4lld  nr %3lld kc %4lld  median %7.3f ms %6.1f GFLOP/s  best tiles %7.3f ms %6.1f "
      "GFLOP/s %5.1f%%  err %.1e\n",
      s.model, static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k),
      static_cast<long long>(nr), static_cast<long long>(kc), median, gflops, best, best_gflops, share, error);
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::max(1, std::atoi(argv[1])) : 1;
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 50;
  const double peak = peak_gflops();
  std::printf("panel GEMM, %d thread%s, MR %d NR %d; fp32 peak per core %.1f GFLOP/s (m x n x k, median of %d)\n",
              threads, threads == 1 ? "" : "s", KILN_PANEL_MR, KILN_PANEL_NR, peak, repeats);
  kiln::ThreadPool pool(threads);
  std::vector<Shape> shapes{{"vit", 197, 768, 768},  {"vit", 197, 3072, 768}, {"vit", 197, 768, 3072},
                            {"vit", 197, 2304, 768}, {"bert", 128, 768, 768}, {"bert", 128, 3072, 768},
                            {"bert", 128, 768, 3072}};
  if (argc > 5) shapes = {{"arg", std::atoll(argv[3]), std::atoll(argv[4]), std::atoll(argv[5])}};
  for (const Shape& s : shapes) run_shape(pool, s, repeats, peak);
  return 0;
}
