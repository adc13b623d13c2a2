/* Hand-written micro-kernels that generated code calls where a schedule tensorizes a loop nest.
 * Plain C (static inline, so lib.so carries its own copy), usable from C and C++.
 *
 * GEMM tiles compute C[m x n] += A[m x k] * B[k x n] on row-major slices whose rows are lda, ldb,
 * ldc elements apart. They return 0 (the status convention of generated code). */
#ifndef KILN_RUNTIME_MICROKERNELS_H_
#define KILN_RUNTIME_MICROKERNELS_H_

#include <stdint.h>

#ifdef __cplusplus
#define KILN_RESTRICT __restrict__
#else
#define KILN_RESTRICT restrict
#endif

#define KILN_SGEMM_MR 4
#define KILN_SGEMM_NR 16

/* A 4 x 16 register tile: the accumulators (64 floats: 8 AVX or 4 AVX-512 registers) stay in
 * registers over the whole k loop, each step is a broadcast of A times a row of B. The constant
 * trip counts let the compiler unroll and vectorise the tile completely. */
static inline int32_t kiln_sgemm_f32_4x16(int64_t k, const float* KILN_RESTRICT a, int64_t lda,
                                          const float* KILN_RESTRICT b, int64_t ldb, float* KILN_RESTRICT c,
                                          int64_t ldc) {
  float acc[KILN_SGEMM_MR][KILN_SGEMM_NR];
  for (int i = 0; i < KILN_SGEMM_MR; ++i)
    for (int j = 0; j < KILN_SGEMM_NR; ++j) acc[i][j] = c[i * ldc + j];
  for (int64_t p = 0; p < k; ++p) {
    const float* KILN_RESTRICT b_row = b + p * ldb;
    for (int i = 0; i < KILN_SGEMM_MR; ++i) {
      const float a_ip = a[i * lda + p];
      for (int j = 0; j < KILN_SGEMM_NR; ++j) acc[i][j] += a_ip * b_row[j];
    }
  }
  for (int i = 0; i < KILN_SGEMM_MR; ++i)
    for (int j = 0; j < KILN_SGEMM_NR; ++j) c[i * ldc + j] = acc[i][j];
  return 0;
}

/* Any tile size; rows of C are updated along contiguous rows of B so the inner loop vectorises. */
static inline int32_t kiln_sgemm_f32(int64_t m, int64_t n, int64_t k, const float* KILN_RESTRICT a, int64_t lda,
                                     const float* KILN_RESTRICT b, int64_t ldb, float* KILN_RESTRICT c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float* KILN_RESTRICT c_row = c + i * ldc;
    for (int64_t p = 0; p < k; ++p) {
      const float a_ip = a[i * lda + p];
      const float* KILN_RESTRICT b_row = b + p * ldb;
      for (int64_t j = 0; j < n; ++j) c_row[j] += a_ip * b_row[j];
    }
  }
  return 0;
}

#endif /* KILN_RUNTIME_MICROKERNELS_H_ */
