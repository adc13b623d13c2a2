#include "fp32_peak.h"

#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kiln::cli {
namespace {

// Twelve chains cover the 4-cycle latency of two FMA pipes; each chain is one register.
constexpr int kChains = 12;

template <class Body>
double gflops_of(Body body, int flops_per_step, double seconds) {
  using Clock = std::chrono::steady_clock;
  int64_t steps = 1 << 16;
  for (;;) {
    const auto start = Clock::now();
    body(steps);
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (elapsed >= seconds || steps >= (int64_t{1} << 40))
      return static_cast<double>(steps) * flops_per_step / elapsed / 1e9;
    steps *= 2;
  }
}

volatile float sink;

#if defined(__x86_64__)

__attribute__((target("avx512f"))) void chains_avx512(int64_t steps) {
  __m512 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm512_set1_ps(0.001f * static_cast<float>(k));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t s = 0; s < steps; ++s)
    for (int k = 0; k < kChains; ++k) acc[k] = _mm512_fmadd_ps(acc[k], a, b);
  __m512 total = acc[0];
  for (int k = 1; k < kChains; ++k) total = _mm512_add_ps(total, acc[k]);
  float lanes[16];  // not _mm512_reduce_add_ps: GCC 12 warns inside it
  _mm512_storeu_ps(lanes, total);
  sink = lanes[0] + lanes[15];
}

__attribute__((target("avx2,fma"))) void chains_avx2(int64_t steps) {
  __m256 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm256_set1_ps(0.001f * static_cast<float>(k));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t s = 0; s < steps; ++s)
    for (int k = 0; k < kChains; ++k) acc[k] = _mm256_fmadd_ps(acc[k], a, b);
  float lanes[8];
  __m256 total = acc[0];
  for (int k = 1; k < kChains; ++k) total = _mm256_add_ps(total, acc[k]);
  _mm256_storeu_ps(lanes, total);
  sink = lanes[0];
}

#endif

void chains_scalar(int64_t steps) {
  float acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = 0.001f * static_cast<float>(k);
  for (int64_t s = 0; s < steps; ++s)
    for (int k = 0; k < kChains; ++k) acc[k] = acc[k] * 0.999999f + 1e-7f;
  sink = acc[0] + acc[kChains - 1];
}

}  // namespace

double measure_fp32_peak_gflops(double seconds) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return gflops_of(chains_avx512, kChains * 16 * 2, seconds);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return gflops_of(chains_avx2, kChains * 8 * 2, seconds);
#endif
  return gflops_of(chains_scalar, kChains * 2, seconds);
}

}  // namespace kiln::cli
