/* Hand-written micro-kernels that generated code calls where a schedule tensorizes a loop nest.
 * Plain C (static inline, so lib.so carries its own copy), usable from C and C++.
 *
 * GEMM tiles compute C[m x n] += A[m x k] * B[k x n] on row-major slices whose rows are lda, ldb,
 * ldc elements apart. They return 0 (the status convention of generated code). */
#ifndef KILN_RUNTIME_MICROKERNELS_H_
#define KILN_RUNTIME_MICROKERNELS_H_

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "kiln/runtime/kernel_abi.h"
#include "kiln/runtime/vector_math.h"

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

/* ----- Register tiles for the nn op schedules (src/op/nn/conv.cc, dense.cc) -----
 *
 * NN tile with window taps, for convolutions and row-major products:
 *   C[i][j] += sum over r < taps_h, s < taps_w, p < k of
 *              A[i*a_row + p*a_k + r*a_th + s*a_tw] * B[p*b_k + r*b_th + s*b_tw + j]
 * for i < MR and j < n (n <= NR, B and C contiguous in j). Columns from n on are neither
 * read nor written, so a tile may hang over the end of B and C. A plain product is taps 1 x 1.
 *
 * NT tile, for products with both operands contiguous along the reduction (nn.dense):
 *   C[i][j] += sum over p < k of A[i*lda + p] * B[j*ldb + p]   for i < MR, j < NR. */

#if defined(__AVX512F__)
#include <immintrin.h>

static inline __mmask16 kiln_tail_mask16(int64_t n) {
  return n >= 16 ? (__mmask16)0xFFFF : (n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u));
}

/* The accumulators (MR x NR/16 zmm registers) stay in registers over all channels and taps. Taps
 * run innermost so that the weights (OIHW: channel-major, taps contiguous) are read in order; the
 * common 1x1 and 3x3 windows get loops of constant trip count, unrolled by the compiler. */
#define KILN_SGEMM_NN_LOOP(MR, NV, TAPS_H, TAPS_W)                                             \
  for (int64_t p = 0; p < k; ++p)                                                              \
    for (int64_t r = 0; r < (TAPS_H); ++r)                                                     \
      for (int64_t s = 0; s < (TAPS_W); ++s) {                                                 \
        const float* KILN_RESTRICT a_tap = a + p * a_k + r * a_th + s * a_tw;                  \
        const float* KILN_RESTRICT b_tap = b + p * b_k + r * b_th + s * b_tw;                  \
        __m512 bv[NV];                                                                         \
        for (int v = 0; v < (NV); ++v) bv[v] = _mm512_maskz_loadu_ps(mask[v], b_tap + 16 * v); \
        for (int i = 0; i < (MR); ++i) {                                                       \
          const __m512 av = _mm512_set1_ps(a_tap[i * a_row]);                                  \
          for (int v = 0; v < (NV); ++v) acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);    \
        }                                                                                      \
      }

#define KILN_DEFINE_SGEMM_NN(MR, NR)                                                                       \
  static inline int32_t kiln_sgemm_nn_f32_##MR##x##NR(                                                     \
      int64_t k, int64_t taps_h, int64_t taps_w, const float* KILN_RESTRICT a, int64_t a_row, int64_t a_k, \
      int64_t a_th, int64_t a_tw, const float* KILN_RESTRICT b, int64_t b_k, int64_t b_th, int64_t b_tw,   \
      float* KILN_RESTRICT c, int64_t c_row, int64_t n) {                                                  \
    enum { NV = (NR) / 16 };                                                                               \
    __mmask16 mask[NV];                                                                                    \
    __m512 acc[MR][NV];                                                                                    \
    for (int v = 0; v < NV; ++v) mask[v] = kiln_tail_mask16(n - 16 * v);                                   \
    for (int i = 0; i < (MR); ++i)                                                                         \
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_maskz_loadu_ps(mask[v], c + i * c_row + 16 * v);     \
    if (taps_h == 1 && taps_w == 1) {                                                                      \
      KILN_SGEMM_NN_LOOP(MR, NV, 1, 1)                                                                     \
    } else if (taps_h == 3 && taps_w == 3) {                                                               \
      KILN_SGEMM_NN_LOOP(MR, NV, 3, 3)                                                                     \
    } else {                                                                                               \
      KILN_SGEMM_NN_LOOP(MR, NV, taps_h, taps_w)                                                           \
    }                                                                                                      \
    for (int i = 0; i < (MR); ++i)                                                                         \
      for (int v = 0; v < NV; ++v) _mm512_mask_storeu_ps(c + i * c_row + 16 * v, mask[v], acc[i][v]);      \
    return 0;                                                                                              \
  }

/* MR x NR dot products at once: MR + NR vector loads feed MR * NR multiply-adds. */
#define KILN_DEFINE_SGEMM_NT(MR, NR)                                                                        \
  static inline int32_t kiln_sgemm_nt_f32_##MR##x##NR(int64_t k, const float* KILN_RESTRICT a, int64_t lda, \
                                                      const float* KILN_RESTRICT b, int64_t ldb,            \
                                                      float* KILN_RESTRICT c, int64_t ldc) {                \
    __m512 acc[MR][NR];                                                                                     \
    for (int i = 0; i < (MR); ++i)                                                                          \
      for (int j = 0; j < (NR); ++j) acc[i][j] = _mm512_setzero_ps();                                       \
    for (int64_t p = 0; p < k; p += 16) {                                                                   \
      const __mmask16 m = kiln_tail_mask16(k - p);                                                          \
      __m512 av[MR], bv[NR];                                                                                \
      for (int i = 0; i < (MR); ++i) av[i] = _mm512_maskz_loadu_ps(m, a + i * lda + p);                     \
      for (int j = 0; j < (NR); ++j) bv[j] = _mm512_maskz_loadu_ps(m, b + j * ldb + p);                     \
      for (int i = 0; i < (MR); ++i)                                                                        \
        for (int j = 0; j < (NR); ++j) acc[i][j] = _mm512_fmadd_ps(av[i], bv[j], acc[i][j]);                \
    }                                                                                                       \
    for (int i = 0; i < (MR); ++i)                                                                          \
      for (int j = 0; j < (NR); ++j) c[i * ldc + j] += _mm512_reduce_add_ps(acc[i][j]);                     \
    return 0;                                                                                               \
  }

#else /* without AVX-512: the same contracts; the NT tile left to the compiler */

#define KILN_DEFINE_SGEMM_NT(MR, NR)                                                                        \
  static inline int32_t kiln_sgemm_nt_f32_##MR##x##NR(int64_t k, const float* KILN_RESTRICT a, int64_t lda, \
                                                      const float* KILN_RESTRICT b, int64_t ldb,            \
                                                      float* KILN_RESTRICT c, int64_t ldc) {                \
    for (int i = 0; i < (MR); ++i)                                                                          \
      for (int j = 0; j < (NR); ++j) {                                                                      \
        float acc = 0;                                                                                      \
        for (int64_t p = 0; p < k; ++p) acc += a[i * lda + p] * b[j * ldb + p];                             \
        c[i * ldc + j] += acc;                                                                              \
      }                                                                                                     \
    return 0;                                                                                               \
  }

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

/* 16 ymm registers: the tile runs as strips of 16 columns, each in groups of up to six rows (12
 * accumulators beside two B vectors and the broadcast; MR = 8 as two groups of four). The
 * accumulators are named variables, as in the panel group: GCC keeps arrays of vectors on the
 * stack. A strip narrower than 16 columns loads and stores through lane masks, one vector per row
 * when it is 8 columns or fewer (`vecs` and `full` are literals once inlined, so whole strips
 * carry no mask). */
#define KILN_GROUP_FOR_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
static inline __attribute__((always_inline)) __m256 kiln_nn_load8(const float* p, __m256i mask, int full) {
  return full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask);
}
static inline __attribute__((always_inline)) void kiln_nn_store8(float* p, __m256i mask, int full, __m256 v) {
  if (full)
    _mm256_storeu_ps(p, v);
  else
    _mm256_maskstore_ps(p, mask, v);
}
#define KILN_NN_GROUP_LOAD(i)                                          \
  __m256 c0_##i = _mm256_setzero_ps(), c1_##i = c0_##i;                \
  if ((i) < rows) {                                                    \
    c0_##i = kiln_nn_load8(c + (i)*c_row, m0, full);                   \
    if (vecs > 1) c1_##i = kiln_nn_load8(c + (i)*c_row + 8, m1, full); \
  }
#define KILN_NN_GROUP_FMA(i)                                  \
  if ((i) < rows) {                                           \
    const __m256 av = _mm256_broadcast_ss(a_tap + (i)*a_row); \
    c0_##i = _mm256_fmadd_ps(av, b0, c0_##i);                 \
    if (vecs > 1) c1_##i = _mm256_fmadd_ps(av, b1, c1_##i);   \
  }
#define KILN_NN_GROUP_STORE(i)                                         \
  if ((i) < rows) {                                                    \
    kiln_nn_store8(c + (i)*c_row, m0, full, c0_##i);                   \
    if (vecs > 1) kiln_nn_store8(c + (i)*c_row + 8, m1, full, c1_##i); \
  }
#define KILN_NN_GROUP_LOOP(TAPS_H, TAPS_W)                                    \
  for (int64_t p = 0; p < k; ++p)                                             \
    for (int64_t r = 0; r < (TAPS_H); ++r)                                    \
      for (int64_t s = 0; s < (TAPS_W); ++s) {                                \
        const float* KILN_RESTRICT a_tap = a + p * a_k + r * a_th + s * a_tw; \
        const float* KILN_RESTRICT b_tap = b + p * b_k + r * b_th + s * b_tw; \
        const __m256 b0 = kiln_nn_load8(b_tap, m0, full);                     \
        const __m256 b1 = vecs > 1 ? kiln_nn_load8(b_tap + 8, m1, full) : b0; \
        KILN_GROUP_FOR_ROWS(KILN_NN_GROUP_FMA)                                \
      }

/* rows (<= 6) x min(cols, 8 vecs) columns of the NN tile's contract, in vecs (1 or 2) vectors. */
static inline __attribute__((always_inline)) void kiln_sgemm_nn_group_f32(
    int64_t rows, int vecs, int full, int64_t cols, int64_t k, int64_t taps_h, int64_t taps_w,
    const float* KILN_RESTRICT a, int64_t a_row, int64_t a_k, int64_t a_th, int64_t a_tw, const float* KILN_RESTRICT b,
    int64_t b_k, int64_t b_th, int64_t b_tw, float* KILN_RESTRICT c, int64_t c_row) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const int32_t left = cols < 16 ? (int32_t)cols : 16;
  const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(left), lane);
  const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(left - 8), lane);
  KILN_GROUP_FOR_ROWS(KILN_NN_GROUP_LOAD)
  if (taps_h == 1 && taps_w == 1) {
    KILN_NN_GROUP_LOOP(1, 1)
  } else if (taps_h == 3 && taps_w == 3) {
    KILN_NN_GROUP_LOOP(3, 3)
  } else {
    KILN_NN_GROUP_LOOP(taps_h, taps_w)
  }
  KILN_GROUP_FOR_ROWS(KILN_NN_GROUP_STORE)
}

#define KILN_NN_GROUPS(VECS, FULL, COLS)                                                                              \
  kiln_sgemm_nn_group_f32(R_, VECS, FULL, COLS, k, taps_h, taps_w, a, a_row, a_k, a_th, a_tw, b + j, b_k, b_th, b_tw, \
                          c + j, c_row);                                                                              \
  if (G_ > 1)                                                                                                         \
    kiln_sgemm_nn_group_f32(M_ - R_, VECS, FULL, COLS, k, taps_h, taps_w, a + R_ * a_row, a_row, a_k, a_th, a_tw,     \
                            b + j, b_k, b_th, b_tw, c + R_ * c_row + j, c_row);

#define KILN_DEFINE_SGEMM_NN(MR, NR)                                                                       \
  static inline int32_t kiln_sgemm_nn_f32_##MR##x##NR(                                                     \
      int64_t k, int64_t taps_h, int64_t taps_w, const float* KILN_RESTRICT a, int64_t a_row, int64_t a_k, \
      int64_t a_th, int64_t a_tw, const float* KILN_RESTRICT b, int64_t b_k, int64_t b_th, int64_t b_tw,   \
      float* KILN_RESTRICT c, int64_t c_row, int64_t n) {                                                  \
    enum { M_ = (MR), G_ = (M_ + 5) / 6, R_ = (M_ + G_ - 1) / G_ };                                        \
    for (int64_t j = 0; j < (NR) && j < n; j += 16) {                                                      \
      if (n - j >= 16) {                                                                                   \
        KILN_NN_GROUPS(2, 1, 16)                                                                           \
      } else if (n - j > 8) {                                                                              \
        KILN_NN_GROUPS(2, 0, n - j)                                                                        \
      } else {                                                                                             \
        KILN_NN_GROUPS(1, 0, n - j)                                                                        \
      }                                                                                                    \
    }                                                                                                      \
    return 0;                                                                                              \
  }

#else /* portable */

#define KILN_DEFINE_SGEMM_NN(MR, NR)                                                                       \
  static inline int32_t kiln_sgemm_nn_f32_##MR##x##NR(                                                     \
      int64_t k, int64_t taps_h, int64_t taps_w, const float* KILN_RESTRICT a, int64_t a_row, int64_t a_k, \
      int64_t a_th, int64_t a_tw, const float* KILN_RESTRICT b, int64_t b_k, int64_t b_th, int64_t b_tw,   \
      float* KILN_RESTRICT c, int64_t c_row, int64_t n) {                                                  \
    const int64_t cols = n < (NR) ? n : (NR);                                                              \
    float acc[MR][NR];                                                                                     \
    for (int i = 0; i < (MR); ++i)                                                                         \
      for (int64_t j = 0; j < cols; ++j) acc[i][j] = c[i * c_row + j];                                     \
    for (int64_t r = 0; r < taps_h; ++r)                                                                   \
      for (int64_t s = 0; s < taps_w; ++s)                                                                 \
        for (int64_t p = 0; p < k; ++p) {                                                                  \
          const float* KILN_RESTRICT b_row = b + p * b_k + r * b_th + s * b_tw;                            \
          for (int i = 0; i < (MR); ++i) {                                                                 \
            const float av = a[i * a_row + p * a_k + r * a_th + s * a_tw];                                 \
            for (int64_t j = 0; j < cols; ++j) acc[i][j] += av * b_row[j];                                 \
          }                                                                                                \
        }                                                                                                  \
    for (int i = 0; i < (MR); ++i)                                                                         \
      for (int64_t j = 0; j < cols; ++j) c[i * c_row + j] = acc[i][j];                                     \
    return 0;                                                                                              \
  }

#endif

#endif

KILN_DEFINE_SGEMM_NN(1, 16)
KILN_DEFINE_SGEMM_NN(2, 16)
KILN_DEFINE_SGEMM_NN(4, 16)
KILN_DEFINE_SGEMM_NN(8, 16)
KILN_DEFINE_SGEMM_NN(1, 32)
KILN_DEFINE_SGEMM_NN(2, 32)
KILN_DEFINE_SGEMM_NN(4, 32)
KILN_DEFINE_SGEMM_NN(8, 32)
KILN_DEFINE_SGEMM_NN(12, 32) /* 24 accumulators: the AVX-512 register file holds 32 */
KILN_DEFINE_SGEMM_NT(1, 1)
KILN_DEFINE_SGEMM_NT(1, 4)
KILN_DEFINE_SGEMM_NT(1, 8)
KILN_DEFINE_SGEMM_NT(2, 4)
KILN_DEFINE_SGEMM_NT(4, 4)

/* ----- Panel GEMM, for float32 products whose B is contiguous along n (src/op/nn/dense.cc) -----
 *
 * B is read in panels of KILN_PANEL_NR columns: element (p, j) of B is
 *   b[(j / KILN_PANEL_NR) * panel_stride + p * b_k + j % KILN_PANEL_NR].
 * A weight packed by PackDenseWeights, (panels, K, 32), has b_k = 32 and panel_stride = 32 K: every
 * panel is one contiguous stream. A row-major (K, N) matrix has b_k = N and panel_stride = 32.
 * kiln_sgemm_panels_f32 computes
 *   C[i][j] += sum over p < k of A[i*lda + p] * B(p, j)    for i < m, j < n
 * in k-blocks of kc rows: a block of one panel (kc x 32 floats, sized by the caller to half of L1)
 * stays in L1 while every row tile of A (the block of A, m x kc, sized to stay in L2) passes over
 * it. Row tiles are KILN_PANEL_MR rows (fewer at the end, any m works): 12 with AVX-512, whose 32
 * registers hold 24 accumulators, 6 with AVX2 (12 of its 16), else 8; columns from n on are
 * neither read nor written. */
#define KILN_PANEL_NR 32

/* Lines [first, first + count) of the next k-block of a panel (two 64-byte lines per row of 32
 * floats, rows b_k floats apart) that a row tile prefetches, one line per k step in the AVX-512
 * tile (the AVX2 and portable tiles issue them before their loop): the driver
 * spreads the next block over the row tiles of the current one, so that a weight streaming in
 * from L3 or memory is in L1 before its first row tile, without a burst of prefetches that the
 * line fill buffers would drop.
 * With one row tile (batch 1) no row tile follows to hide a block behind, and each weight is read
 * once, from memory: the driver runs the whole k as one block, and the AVX-512 tile (AVX2's
 * one-row tile too), given `ahead` > 0, prefetches its own panel's row p + ahead into L2 at step p. The hardware
 * prefetcher alone keeps too few lines in flight for one core to stream at memory speed: a
 * 25088 x 4096 dense at batch 1 (VGG-11's first classifier layer) ran 10-15% faster in median
 * with both changes, at one and at two threads (2-core Xeon). */
typedef struct {
  const float* b;
  int64_t b_k, first, count, ahead;
} KilnPanelPrefetch;

/* Rows of a panel (128 bytes each) that a single row tile prefetches ahead: 8 KB, the lines in
 * flight that a memory latency of ~100 ns at ~20 GB/s needs, with a margin. */
#define KILN_PANEL_STREAM_AHEAD 64

static inline void kiln_panel_prefetch_line_f32(KilnPanelPrefetch pf, int64_t p) {
#if defined(__GNUC__)
  const int64_t line = pf.first + p;
  __builtin_prefetch(pf.b + (line >> 1) * pf.b_k + (line & 1) * 16, 0, 3);
#else
  (void)pf, (void)p;
#endif
}

#if defined(__AVX512F__)
#include <immintrin.h>
#define KILN_PANEL_MR 12

/* MR rows x 32 columns: 2 MR zmm accumulators; each k step loads two B vectors and broadcasts
 * one A value per row. The accumulators are named variables, one pair per row (rows past MR are
 * dead code): GCC keeps arrays of vectors on the stack and stores them on every step. */
#define KILN_PANEL_FOR_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define KILN_PANEL_LOAD(i)                                \
  __m512 c0_##i = _mm512_setzero_ps(), c1_##i = c0_##i;   \
  if ((i) < MR_) {                                        \
    c0_##i = _mm512_maskz_loadu_ps(m0, c + (i)*ldc);      \
    c1_##i = _mm512_maskz_loadu_ps(m1, c + (i)*ldc + 16); \
  }
#define KILN_PANEL_FMA(i)                             \
  if ((i) < MR_) {                                    \
    const __m512 av = _mm512_set1_ps(a[(i)*lda + p]); \
    c0_##i = _mm512_fmadd_ps(av, b0, c0_##i);         \
    c1_##i = _mm512_fmadd_ps(av, b1, c1_##i);         \
  }
#define KILN_PANEL_STORE(i)                              \
  if ((i) < MR_) {                                       \
    _mm512_mask_storeu_ps(c + (i)*ldc, m0, c0_##i);      \
    _mm512_mask_storeu_ps(c + (i)*ldc + 16, m1, c1_##i); \
  }
#define KILN_DEFINE_PANEL_TILE(MR)                                                                                \
  static inline void kiln_panel_tile_f32_##MR(int64_t k, const float* KILN_RESTRICT a, int64_t lda,               \
                                              const float* KILN_RESTRICT b, int64_t b_k, float* KILN_RESTRICT c,  \
                                              int64_t ldc, int64_t n, KilnPanelPrefetch pf) {                     \
    enum { MR_ = (MR) };                                                                                          \
    const __mmask16 m0 = kiln_tail_mask16(n), m1 = kiln_tail_mask16(n - 16);                                      \
    KILN_PANEL_FOR_ROWS(KILN_PANEL_LOAD)                                                                          \
    for (int64_t p = 0; p < k; ++p) {                                                                             \
      if (p < pf.count) kiln_panel_prefetch_line_f32(pf, p);                                                      \
      if (pf.ahead) {                                                                                             \
        _mm_prefetch((const char*)(b + (p + pf.ahead) * b_k), _MM_HINT_T1);                                       \
        _mm_prefetch((const char*)(b + (p + pf.ahead) * b_k + 16), _MM_HINT_T1);                                  \
      }                                                                                                           \
      const __m512 b0 = _mm512_maskz_loadu_ps(m0, b + p * b_k), b1 = _mm512_maskz_loadu_ps(m1, b + p * b_k + 16); \
      KILN_PANEL_FOR_ROWS(KILN_PANEL_FMA)                                                                         \
    }                                                                                                             \
    KILN_PANEL_FOR_ROWS(KILN_PANEL_STORE)                                                                         \
  }

#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define KILN_PANEL_MR 6

/* 16 ymm registers: each half of the panel (16 columns) in groups of up to six rows, 12
 * accumulators beside the two B vectors and the broadcast. The accumulators are named variables
 * (rows past the group's are dead code): as arrays GCC kept them on the stack, and 8-row tiles of
 * 16 accumulators spilled (ViT-B/16's products at 34% of the peak on Zen 3). Partial panels take
 * the portable loop. */
#define KILN_PANEL_GROUP_LOAD(i)                        \
  __m256 c0_##i = _mm256_setzero_ps(), c1_##i = c0_##i; \
  if ((i) < rows) {                                     \
    c0_##i = _mm256_loadu_ps(c + (i)*ldc);              \
    c1_##i = _mm256_loadu_ps(c + (i)*ldc + 8);          \
  }
#define KILN_PANEL_GROUP_FMA(i)                             \
  if ((i) < rows) {                                         \
    const __m256 av = _mm256_broadcast_ss(a + (i)*lda + p); \
    c0_##i = _mm256_fmadd_ps(av, b0, c0_##i);               \
    c1_##i = _mm256_fmadd_ps(av, b1, c1_##i);               \
  }
#define KILN_PANEL_GROUP_STORE(i)              \
  if ((i) < rows) {                            \
    _mm256_storeu_ps(c + (i)*ldc, c0_##i);     \
    _mm256_storeu_ps(c + (i)*ldc + 8, c1_##i); \
  }

/* rows (<= 6, a literal once inlined) x 16 columns of C += A x B. */
static inline __attribute__((always_inline)) void kiln_panel_group_f32(int64_t rows, int64_t k,
                                                                       const float* KILN_RESTRICT a, int64_t lda,
                                                                       const float* KILN_RESTRICT b, int64_t b_k,
                                                                       float* KILN_RESTRICT c, int64_t ldc) {
  KILN_GROUP_FOR_ROWS(KILN_PANEL_GROUP_LOAD)
  for (int64_t p = 0; p < k; ++p) {
    const __m256 b0 = _mm256_loadu_ps(b + p * b_k), b1 = _mm256_loadu_ps(b + p * b_k + 8);
    KILN_GROUP_FOR_ROWS(KILN_PANEL_GROUP_FMA)
  }
  KILN_GROUP_FOR_ROWS(KILN_PANEL_GROUP_STORE)
}

/* One row (a batch-1 product: the classifier, a vector times the panels): the group's two
 * accumulators per half would chain every multiply-add on the one before. Here all 32 columns at
 * once, even and odd steps apart: eight chains. With `ahead`, each step prefetches its panel row
 * that far ahead into L2, as the AVX-512 tile does (the weights are read once, from memory). */
static inline void kiln_panel_row_f32(int64_t k, const float* KILN_RESTRICT a, const float* KILN_RESTRICT b,
                                      int64_t b_k, float* KILN_RESTRICT c, int64_t ahead) {
  __m256 e0 = _mm256_loadu_ps(c), e1 = _mm256_loadu_ps(c + 8), e2 = _mm256_loadu_ps(c + 16),
         e3 = _mm256_loadu_ps(c + 24);
  __m256 o0 = _mm256_setzero_ps(), o1 = o0, o2 = o0, o3 = o0;
  int64_t p = 0;
  for (; p + 2 <= k; p += 2) {
    if (ahead) {
      const float* next = b + (p + ahead) * b_k;
      _mm_prefetch((const char*)next, _MM_HINT_T1);
      _mm_prefetch((const char*)(next + 16), _MM_HINT_T1);
      _mm_prefetch((const char*)(next + b_k), _MM_HINT_T1);
      _mm_prefetch((const char*)(next + b_k + 16), _MM_HINT_T1);
    }
    const float* KILN_RESTRICT r0 = b + p * b_k;
    const float* KILN_RESTRICT r1 = r0 + b_k;
    const __m256 a0 = _mm256_broadcast_ss(a + p), a1 = _mm256_broadcast_ss(a + p + 1);
    e0 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(r0), e0);
    e1 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(r0 + 8), e1);
    e2 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(r0 + 16), e2);
    e3 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(r0 + 24), e3);
    o0 = _mm256_fmadd_ps(a1, _mm256_loadu_ps(r1), o0);
    o1 = _mm256_fmadd_ps(a1, _mm256_loadu_ps(r1 + 8), o1);
    o2 = _mm256_fmadd_ps(a1, _mm256_loadu_ps(r1 + 16), o2);
    o3 = _mm256_fmadd_ps(a1, _mm256_loadu_ps(r1 + 24), o3);
  }
  if (p < k) {
    const float* KILN_RESTRICT r0 = b + p * b_k;
    const __m256 a0 = _mm256_broadcast_ss(a + p);
    e0 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(r0), e0);
    e1 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(r0 + 8), e1);
    e2 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(r0 + 16), e2);
    e3 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(r0 + 24), e3);
  }
  _mm256_storeu_ps(c, _mm256_add_ps(e0, o0));
  _mm256_storeu_ps(c + 8, _mm256_add_ps(e1, o1));
  _mm256_storeu_ps(c + 16, _mm256_add_ps(e2, o2));
  _mm256_storeu_ps(c + 24, _mm256_add_ps(e3, o3));
}

#define KILN_DEFINE_PANEL_TILE(MR)                                                                               \
  static inline void kiln_panel_tile_f32_##MR(int64_t k, const float* KILN_RESTRICT a, int64_t lda,              \
                                              const float* KILN_RESTRICT b, int64_t b_k, float* KILN_RESTRICT c, \
                                              int64_t ldc, int64_t n, KilnPanelPrefetch pf) {                    \
    for (int64_t p = 0; p < pf.count; ++p) kiln_panel_prefetch_line_f32(pf, p);                                  \
    if (n < KILN_PANEL_NR) {                                                                                     \
      for (int i = 0; i < (MR); ++i)                                                                             \
        for (int64_t p = 0; p < k; ++p)                                                                          \
          for (int64_t j = 0; j < n; ++j) c[i * ldc + j] += a[i * lda + p] * b[p * b_k + j];                     \
      return;                                                                                                    \
    }                                                                                                            \
    if ((MR) == 1) {                                                                                             \
      kiln_panel_row_f32(k, a, b, b_k, c, pf.ahead);                                                             \
      return;                                                                                                    \
    }                                                                                                            \
    for (int h = 0; h < KILN_PANEL_NR; h += 16) {                                                                \
      kiln_panel_group_f32((MR) < 6 ? (MR) : 6, k, a, lda, b + h, b_k, c + h, ldc);                              \
      if ((MR) > 6) kiln_panel_group_f32((MR)-6, k, a + 6 * lda, lda, b + h, b_k, c + 6 * ldc + h, ldc);         \
    }                                                                                                            \
  }

#else /* portable version: the same contract, left to the compiler */
#define KILN_PANEL_MR 8

#define KILN_DEFINE_PANEL_TILE(MR)                                                                               \
  static inline void kiln_panel_tile_f32_##MR(int64_t k, const float* KILN_RESTRICT a, int64_t lda,              \
                                              const float* KILN_RESTRICT b, int64_t b_k, float* KILN_RESTRICT c, \
                                              int64_t ldc, int64_t n, KilnPanelPrefetch pf) {                    \
    for (int64_t p = 0; p < pf.count; ++p) kiln_panel_prefetch_line_f32(pf, p);                                  \
    const int64_t cols = n < KILN_PANEL_NR ? n : KILN_PANEL_NR;                                                  \
    float acc[MR][KILN_PANEL_NR];                                                                                \
    for (int i = 0; i < (MR); ++i)                                                                               \
      for (int64_t j = 0; j < cols; ++j) acc[i][j] = c[i * ldc + j];                                             \
    for (int64_t p = 0; p < k; ++p)                                                                              \
      for (int i = 0; i < (MR); ++i) {                                                                           \
        const float av = a[i * lda + p];                                                                         \
        for (int64_t j = 0; j < cols; ++j) acc[i][j] += av * b[p * b_k + j];                                     \
      }                                                                                                          \
    for (int i = 0; i < (MR); ++i)                                                                               \
      for (int64_t j = 0; j < cols; ++j) c[i * ldc + j] = acc[i][j];                                             \
  }

#endif

KILN_DEFINE_PANEL_TILE(1)
KILN_DEFINE_PANEL_TILE(2)
KILN_DEFINE_PANEL_TILE(3)
KILN_DEFINE_PANEL_TILE(4)
KILN_DEFINE_PANEL_TILE(5)
KILN_DEFINE_PANEL_TILE(6)
KILN_DEFINE_PANEL_TILE(7)
KILN_DEFINE_PANEL_TILE(8)
#if KILN_PANEL_MR > 8
KILN_DEFINE_PANEL_TILE(9)
KILN_DEFINE_PANEL_TILE(10)
KILN_DEFINE_PANEL_TILE(11)
KILN_DEFINE_PANEL_TILE(12)
#endif

static inline void kiln_panel_rows_f32(int64_t rows, int64_t k, const float* KILN_RESTRICT a, int64_t lda,
                                       const float* KILN_RESTRICT b, int64_t b_k, float* KILN_RESTRICT c, int64_t ldc,
                                       int64_t n, KilnPanelPrefetch pf) {
  switch (rows) {
    case 1: kiln_panel_tile_f32_1(k, a, lda, b, b_k, c, ldc, n, pf); break;
    case 2: kiln_panel_tile_f32_2(k, a, lda, b, b_k, c, ldc, n, pf); break;
    case 3: kiln_panel_tile_f32_3(k, a, lda, b, b_k, c, ldc, n, pf); break;
    case 4: kiln_panel_tile_f32_4(k, a, lda, b, b_k, c, ldc, n, pf); break;
    case 5: kiln_panel_tile_f32_5(k, a, lda, b, b_k, c, ldc, n, pf); break;
    case 6: kiln_panel_tile_f32_6(k, a, lda, b, b_k, c, ldc, n, pf); break;
    case 7: kiln_panel_tile_f32_7(k, a, lda, b, b_k, c, ldc, n, pf); break;
#if KILN_PANEL_MR > 8
    case 8: kiln_panel_tile_f32_8(k, a, lda, b, b_k, c, ldc, n, pf); break;
    case 9: kiln_panel_tile_f32_9(k, a, lda, b, b_k, c, ldc, n, pf); break;
    case 10: kiln_panel_tile_f32_10(k, a, lda, b, b_k, c, ldc, n, pf); break;
    case 11: kiln_panel_tile_f32_11(k, a, lda, b, b_k, c, ldc, n, pf); break;
    default: kiln_panel_tile_f32_12(k, a, lda, b, b_k, c, ldc, n, pf); break;
#else
    default: kiln_panel_tile_f32_8(k, a, lda, b, b_k, c, ldc, n, pf); break;
#endif
  }
}

static inline int32_t kiln_sgemm_panels_f32(int64_t m, int64_t n, int64_t k, const float* KILN_RESTRICT a, int64_t lda,
                                            const float* KILN_RESTRICT b, int64_t b_k, int64_t panel_stride,
                                            float* KILN_RESTRICT c, int64_t ldc, int64_t kc) {
  const int64_t row_tiles = (m + KILN_PANEL_MR - 1) / KILN_PANEL_MR;
  /* k-blocks keep a block of a panel in L1 for the next row tile: with one there is none. */
  if (kc <= 0 || row_tiles < 2) kc = k;
  const int64_t ahead = row_tiles < 2 ? KILN_PANEL_STREAM_AHEAD : 0;
  for (int64_t k0 = 0; k0 < k; k0 += kc) {
    const int64_t kb = k - k0 < kc ? k - k0 : kc;
    for (int64_t j0 = 0; j0 < n; j0 += KILN_PANEL_NR) {
      const float* KILN_RESTRICT panel = b + (j0 / KILN_PANEL_NR) * panel_stride + k0 * b_k;
      /* The block after this one: the next panel's, else the first panel's of the next k-block
       * (none for a single row tile: a block used once gains little from it, a vector-matrix
       * product of the recurrent kernels would issue two prefetches per step). */
      const float* next = 0;
      int64_t next_lines = 0;
      if (row_tiles < 2) {
      } else if (j0 + KILN_PANEL_NR < n) {
        next = panel + panel_stride;
        next_lines = 2 * kb;
      } else if (k0 + kb < k) {
        next = b + (k0 + kb) * b_k;
        next_lines = 2 * (k - k0 - kb < kc ? k - k0 - kb : kc);
      }
      for (int64_t i0 = 0, t = 0; i0 < m; i0 += KILN_PANEL_MR, ++t) {
        const int64_t rows = m - i0 < KILN_PANEL_MR ? m - i0 : KILN_PANEL_MR;
        const int64_t first = t * next_lines / row_tiles;
        const KilnPanelPrefetch pf = {next, b_k, first, next ? (t + 1) * next_lines / row_tiles - first : 0, ahead};
        kiln_panel_rows_f32(rows, kb, a + i0 * lda + k0, lda, panel, b_k, c + i0 * ldc + j0, ldc, n - j0, pf);
      }
    }
  }
  return 0;
}

/* kiln_sgemm_panels_nt_f32: the same product with B stored as n rows of k, B(p, j) = b[j * ldb + p]
 * (Q x K^T as batch_matmul with transpose_b, a dense whose weight is computed: nothing to pack at
 * build time). Each k-block of a panel is
 * transposed once into a local kc x 32 buffer (in L1) that every row tile of A then streams, so
 * the product runs on the panel tiles at the cost of one copy of B per call. */
#define KILN_PANEL_NT_KC 256

static inline int32_t kiln_sgemm_panels_nt_f32(int64_t m, int64_t n, int64_t k, const float* KILN_RESTRICT a,
                                               int64_t lda, const float* KILN_RESTRICT b, int64_t ldb,
                                               float* KILN_RESTRICT c, int64_t ldc, int64_t kc) {
  float panel[KILN_PANEL_NT_KC * KILN_PANEL_NR];
  if (kc <= 0 || kc > KILN_PANEL_NT_KC) kc = KILN_PANEL_NT_KC;
  for (int64_t k0 = 0; k0 < k; k0 += kc) {
    const int64_t kb = k - k0 < kc ? k - k0 : kc;
    for (int64_t j0 = 0; j0 < n; j0 += KILN_PANEL_NR) {
      const int64_t cols = n - j0 < KILN_PANEL_NR ? n - j0 : KILN_PANEL_NR;
      for (int64_t j = 0; j < KILN_PANEL_NR; ++j) {
        /* Columns past n are zeros: the AVX2 tile reads whole panels. */
        if (j < cols)
          for (int64_t p = 0; p < kb; ++p) panel[p * KILN_PANEL_NR + j] = b[(j0 + j) * ldb + k0 + p];
        else
          for (int64_t p = 0; p < kb; ++p) panel[p * KILN_PANEL_NR + j] = 0.0f;
      }
      for (int64_t i0 = 0; i0 < m; i0 += KILN_PANEL_MR) {
        const int64_t rows = m - i0 < KILN_PANEL_MR ? m - i0 : KILN_PANEL_MR;
        const KilnPanelPrefetch none = {0, 0, 0, 0, 0};
        kiln_panel_rows_f32(rows, kb, a + i0 * lda + k0, lda, panel, KILN_PANEL_NR, c + i0 * ldc + j0, ldc, n - j0,
                            none);
      }
    }
  }
  return 0;
}

/* ----- Softmax rows (src/op/nn/softmax.cc tensorizes its two reductions with these) -----
 *
 * kiln_row_max_f32:      *m = max(*m, x[0..n)), NaN if any x is NaN (as the reference's compare).
 * kiln_row_sum_exp_f32:  *s += sum over j of exp(x[j] - shift), shift = *m, or 0 when *m is -inf.
 * kiln_softmax_row_f32:  the row's outputs, exp(x[j] - shift) / *s.
 * Sixteen partial results so that the loops vectorize without reassociating float sums
 * across the whole row (the partial sums do reassociate: within rounding of the reference). */
#if defined(__AVX512F__)
#include <immintrin.h>

/* GCC does not vectorize the NaN-propagating compare: vmaxps plus a NaN mask instead. */
static inline int32_t kiln_row_max_f32(int64_t n, const float* KILN_RESTRICT x, float* KILN_RESTRICT m) {
  const __m512 lowest = _mm512_set1_ps(-(1.0f / 0.0f));
  __m512 acc = lowest;
  __mmask16 nan = 0;
  for (int64_t j = 0; j < n; j += 16) {
    const __m512 v = _mm512_mask_loadu_ps(lowest, kiln_tail_mask16(n - j), x + j);
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    acc = _mm512_max_ps(acc, v);
  }
  const float r = _mm512_reduce_max_ps(acc);
  if (nan || *m != *m)
    *m = 0.0f / 0.0f;
  else if (r > *m)
    *m = r;
  return 0;
}

#else

static inline int32_t kiln_row_max_f32(int64_t n, const float* KILN_RESTRICT x, float* KILN_RESTRICT m) {
  float r = *m;
  for (int64_t j = 0; j < n; ++j) r = (x[j] > r || x[j] != x[j]) ? x[j] : r;
  *m = r;
  return 0;
}

#endif

static inline int32_t kiln_row_sum_exp_f32(int64_t n, const float* KILN_RESTRICT x, const float* KILN_RESTRICT m,
                                           float* KILN_RESTRICT s) {
  const float shift = *m == -(1.0f / 0.0f) ? 0.0f : *m;
  float part[16];
  for (int l = 0; l < 16; ++l) part[l] = 0.0f;
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    for (int l = 0; l < 16; ++l) part[l] += kiln_expf(x[j + l] - shift);
  /* The tail as one masked vector, the partial sums added pairwise: no scalar loop or chain. */
  for (int l = 0; l < 16; ++l)
    if (j + l < n) part[l] += kiln_expf(x[j + l] - shift);
  for (int width = 8; width > 0; width /= 2)
    for (int l = 0; l < width; ++l) part[l] += part[l + width];
  *s += part[0];
  return 0;
}

/* softmax's outputs of one row: out[j] = exp(x[j] - shift) * (1 / *s), shift as above. */
static inline int32_t kiln_softmax_row_f32(int64_t n, const float* KILN_RESTRICT x, const float* KILN_RESTRICT m,
                                           const float* KILN_RESTRICT s, float* KILN_RESTRICT out) {
  const float shift = *m == -(1.0f / 0.0f) ? 0.0f : *m;
  const float inv = 1.0f / *s;
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    for (int l = 0; l < 16; ++l) out[j + l] = kiln_expf(x[j + l] - shift) * inv;
  for (int l = 0; l < 16; ++l)
    if (j + l < n) out[j + l] = kiln_expf(x[j + l] - shift) * inv;
  return 0;
}

/* ----- Layer norm rows (src/op/nn/norm.cc tensorizes its statistics and outputs with these) -----
 *
 * kiln_row_sum_f64_f32 / kiln_row_sum_squares_f64_f32: *s += the sum of x[j] (of x[j]^2) in
 *   double, so that E[x^2] - E[x]^2 keeps float32 data's variance well within float32 rounding.
 * kiln_layer_norm_row_f32: out[j] = (x[j] - mean) * rstd * gamma[j] + beta[j], with mean =
 *   *sum * inv_n, rstd = 1 / sqrt(max(*squares * inv_n - mean^2, 0) + eps) worked out once in double.
 * Eight partial sums so that the loops vectorize. */
#define KILN_DEFINE_ROW_SUM_F64(NAME, TERM)                                                      \
  static inline int32_t NAME(int64_t n, const float* KILN_RESTRICT x, double* KILN_RESTRICT s) { \
    double part[8];                                                                              \
    for (int l = 0; l < 8; ++l) part[l] = 0.0;                                                   \
    int64_t j = 0;                                                                               \
    for (; j + 8 <= n; j += 8)                                                                   \
      for (int l = 0; l < 8; ++l) {                                                              \
        const double v = (double)x[j + l];                                                       \
        part[l] += (TERM);                                                                       \
      }                                                                                          \
    for (int l = 0; j + l < n; ++l) {                                                            \
      const double v = (double)x[j + l];                                                         \
      part[l] += (TERM);                                                                         \
    }                                                                                            \
    double r = 0.0;                                                                              \
    for (int l = 0; l < 8; ++l) r += part[l];                                                    \
    *s += r;                                                                                     \
    return 0;                                                                                    \
  }
KILN_DEFINE_ROW_SUM_F64(kiln_row_sum_f64_f32, v)
KILN_DEFINE_ROW_SUM_F64(kiln_row_sum_squares_f64_f32, v* v)

/* gamma and beta may be NULL (layer_norm's scale=False / center=False): the wrappers below. */
static inline int32_t kiln_layer_norm_row_any_f32(int64_t n, const float* KILN_RESTRICT x,
                                                  const double* KILN_RESTRICT sum, const double* KILN_RESTRICT squares,
                                                  const float* KILN_RESTRICT gamma, const float* KILN_RESTRICT beta,
                                                  double inv_n, double eps, float* KILN_RESTRICT out) {
  const double mean = *sum * inv_n;
  double var = *squares * inv_n - mean * mean;
  if (var < 0.0) var = 0.0;
  const float m = (float)mean, rstd = (float)(1.0 / sqrt(var + eps));
  if (gamma && beta)
    for (int64_t j = 0; j < n; ++j) out[j] = (x[j] - m) * rstd * gamma[j] + beta[j];
  else if (gamma)
    for (int64_t j = 0; j < n; ++j) out[j] = (x[j] - m) * rstd * gamma[j];
  else if (beta)
    for (int64_t j = 0; j < n; ++j) out[j] = (x[j] - m) * rstd + beta[j];
  else
    for (int64_t j = 0; j < n; ++j) out[j] = (x[j] - m) * rstd;
  return 0;
}

static inline int32_t kiln_layer_norm_row_f32(int64_t n, const float* KILN_RESTRICT x, const double* KILN_RESTRICT sum,
                                              const double* KILN_RESTRICT squares, const float* KILN_RESTRICT gamma,
                                              const float* KILN_RESTRICT beta, double inv_n, double eps,
                                              float* KILN_RESTRICT out) {
  return kiln_layer_norm_row_any_f32(n, x, sum, squares, gamma, beta, inv_n, eps, out);
}

static inline int32_t kiln_layer_norm_row_scale_f32(int64_t n, const float* KILN_RESTRICT x,
                                                    const double* KILN_RESTRICT sum,
                                                    const double* KILN_RESTRICT squares,
                                                    const float* KILN_RESTRICT gamma, double inv_n, double eps,
                                                    float* KILN_RESTRICT out) {
  return kiln_layer_norm_row_any_f32(n, x, sum, squares, gamma, 0, inv_n, eps, out);
}

static inline int32_t kiln_layer_norm_row_shift_f32(int64_t n, const float* KILN_RESTRICT x,
                                                    const double* KILN_RESTRICT sum,
                                                    const double* KILN_RESTRICT squares,
                                                    const float* KILN_RESTRICT beta, double inv_n, double eps,
                                                    float* KILN_RESTRICT out) {
  return kiln_layer_norm_row_any_f32(n, x, sum, squares, 0, beta, inv_n, eps, out);
}

static inline int32_t kiln_layer_norm_row_plain_f32(int64_t n, const float* KILN_RESTRICT x,
                                                    const double* KILN_RESTRICT sum,
                                                    const double* KILN_RESTRICT squares, double inv_n, double eps,
                                                    float* KILN_RESTRICT out) {
  return kiln_layer_norm_row_any_f32(n, x, sum, squares, 0, 0, inv_n, eps, out);
}

/* ----- Integer NN tiles for quantized convolutions (qnn.conv2d through src/op/nn/conv.cc) -----
 *
 * The NN tile's contract on int16 operands (zero-point-shifted 8-bit values) and int32 C:
 *   C[i][j] += sum over r < taps_h, s < taps_w, p < k of
 *              A[i*a_row + p*a_k + r*a_th + s*a_tw] * B[p*b_k + r*b_th + s*b_tw + j]
 * The int32 sums wrap (ONNX's ConvInteger: "the accumulation may overflow if and only if in 32
 * bits"), so any summation order gives the same result. Channels p and p + 1 are taken in pairs:
 * a pair of 16-bit products summed into 32 bits is one vpmaddwd (or AVX512-VNNI vpdpwssd) lane,
 * which cannot overflow for operands within +-255. */

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)

#if defined(__AVX512VNNI__)
#define KILN_DPWSSD(acc, a, b) _mm512_dpwssd_epi32((acc), (a), (b))
#else
#define KILN_DPWSSD(acc, a, b) _mm512_add_epi32((acc), _mm512_madd_epi16((a), (b)))
#endif

/* 16 columns of rows b0 and b1 interleaved: 32-bit lane j holds (b0[j], b1[j]). */
static inline __m512i kiln_pair_rows_s16(const int16_t* b0, const int16_t* b1, __mmask16 mask, int second) {
  const __m512i index = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7, 38, 6, 37,
                                         5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
  const __m256i lo = _mm256_maskz_loadu_epi16(mask, b0);
  const __m256i hi = second ? _mm256_maskz_loadu_epi16(mask, b1) : _mm256_setzero_si256();
  return _mm512_permutex2var_epi16(_mm512_zextsi256_si512(lo), index, _mm512_zextsi256_si512(hi));
}

/* a0 and a1 as one 32-bit pair broadcast to every lane. */
static inline __m512i kiln_pair_broadcast_s16(const int16_t* a, int64_t a_k, int second) {
  const uint32_t lo = (uint16_t)a[0], hi = second ? (uint16_t)a[a_k] : 0u;
  return _mm512_set1_epi32((int32_t)(lo | (hi << 16)));
}

#define KILN_IGEMM_NN_STEP(MR, NV, TAPS_H, TAPS_W, SECOND)                                   \
  for (int64_t r = 0; r < (TAPS_H); ++r)                                                     \
    for (int64_t s = 0; s < (TAPS_W); ++s) {                                                 \
      const int16_t* KILN_RESTRICT a_tap = a + p * a_k + r * a_th + s * a_tw;                \
      const int16_t* KILN_RESTRICT b_tap = b + p * b_k + r * b_th + s * b_tw;                \
      __m512i bv[NV];                                                                        \
      for (int v = 0; v < (NV); ++v)                                                         \
        bv[v] = kiln_pair_rows_s16(b_tap + 16 * v, b_tap + b_k + 16 * v, mask[v], (SECOND)); \
      for (int i = 0; i < (MR); ++i) {                                                       \
        const __m512i av = kiln_pair_broadcast_s16(a_tap + i * a_row, a_k, (SECOND));        \
        for (int v = 0; v < (NV); ++v) acc[i][v] = KILN_DPWSSD(acc[i][v], av, bv[v]);        \
      }                                                                                      \
    }

#define KILN_IGEMM_NN_LOOP(MR, NV, TAPS_H, TAPS_W)                          \
  {                                                                         \
    int64_t p = 0;                                                          \
    for (; p + 1 < k; p += 2) KILN_IGEMM_NN_STEP(MR, NV, TAPS_H, TAPS_W, 1) \
    if (p < k) KILN_IGEMM_NN_STEP(MR, NV, TAPS_H, TAPS_W, 0)                \
  }

#define KILN_DEFINE_IGEMM_NN(MR, NR)                                                                         \
  static inline int32_t kiln_igemm_nn_s16_##MR##x##NR(                                                       \
      int64_t k, int64_t taps_h, int64_t taps_w, const int16_t* KILN_RESTRICT a, int64_t a_row, int64_t a_k, \
      int64_t a_th, int64_t a_tw, const int16_t* KILN_RESTRICT b, int64_t b_k, int64_t b_th, int64_t b_tw,   \
      int32_t* KILN_RESTRICT c, int64_t c_row, int64_t n) {                                                  \
    enum { NV = (NR) / 16 };                                                                                 \
    __mmask16 mask[NV];                                                                                      \
    __m512i acc[MR][NV];                                                                                     \
    for (int v = 0; v < NV; ++v) mask[v] = kiln_tail_mask16(n - 16 * v);                                     \
    for (int i = 0; i < (MR); ++i)                                                                           \
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_maskz_loadu_epi32(mask[v], c + i * c_row + 16 * v);    \
    if (taps_h == 1 && taps_w == 1) {                                                                        \
      KILN_IGEMM_NN_LOOP(MR, NV, 1, 1)                                                                       \
    } else if (taps_h == 3 && taps_w == 3) {                                                                 \
      KILN_IGEMM_NN_LOOP(MR, NV, 3, 3)                                                                       \
    } else {                                                                                                 \
      KILN_IGEMM_NN_LOOP(MR, NV, taps_h, taps_w)                                                             \
    }                                                                                                        \
    for (int i = 0; i < (MR); ++i)                                                                           \
      for (int v = 0; v < NV; ++v) _mm512_mask_storeu_epi32(c + i * c_row + 16 * v, mask[v], acc[i][v]);     \
    return 0;                                                                                                \
  }

#else /* portable version: the same contract, left to the compiler (unsigned sums wrap) */

#define KILN_DEFINE_IGEMM_NN(MR, NR)                                                                         \
  static inline int32_t kiln_igemm_nn_s16_##MR##x##NR(                                                       \
      int64_t k, int64_t taps_h, int64_t taps_w, const int16_t* KILN_RESTRICT a, int64_t a_row, int64_t a_k, \
      int64_t a_th, int64_t a_tw, const int16_t* KILN_RESTRICT b, int64_t b_k, int64_t b_th, int64_t b_tw,   \
      int32_t* KILN_RESTRICT c, int64_t c_row, int64_t n) {                                                  \
    const int64_t cols = n < (NR) ? n : (NR);                                                                \
    uint32_t acc[MR][NR];                                                                                    \
    for (int i = 0; i < (MR); ++i)                                                                           \
      for (int64_t j = 0; j < cols; ++j) acc[i][j] = (uint32_t)c[i * c_row + j];                             \
    for (int64_t r = 0; r < taps_h; ++r)                                                                     \
      for (int64_t s = 0; s < taps_w; ++s)                                                                   \
        for (int64_t p = 0; p < k; ++p) {                                                                    \
          const int16_t* KILN_RESTRICT b_row = b + p * b_k + r * b_th + s * b_tw;                            \
          for (int i = 0; i < (MR); ++i) {                                                                   \
            const int32_t av = a[i * a_row + p * a_k + r * a_th + s * a_tw];                                 \
            for (int64_t j = 0; j < cols; ++j) acc[i][j] += (uint32_t)(av * (int32_t)b_row[j]);              \
          }                                                                                                  \
        }                                                                                                    \
    for (int i = 0; i < (MR); ++i)                                                                           \
      for (int64_t j = 0; j < cols; ++j) c[i * c_row + j] = (int32_t)acc[i][j];                              \
    return 0;                                                                                                \
  }

#endif

KILN_DEFINE_IGEMM_NN(1, 16)
KILN_DEFINE_IGEMM_NN(2, 16)
KILN_DEFINE_IGEMM_NN(4, 16)
KILN_DEFINE_IGEMM_NN(8, 16)
KILN_DEFINE_IGEMM_NN(1, 32)
KILN_DEFINE_IGEMM_NN(2, 32)
KILN_DEFINE_IGEMM_NN(4, 32)
KILN_DEFINE_IGEMM_NN(8, 32)

/* ----- Recurrent sequences: nn.lstm, nn.gru, nn.rnn (src/op/nn/recurrent.cc) -----
 *
 * One layer and direction over the whole sequence in one call, so no kernel is launched per step.
 * proj [seq][batch][gates * hidden] is the input projection of every step (x W^T plus the biases
 * that do not depend on h), one GEMM ahead of the call. r holds R^T in panels of 32 columns,
 * [gates * hp / 32][hidden][32] with hp = hidden rounded up to 32: column g * hp + u is unit u of
 * gate g (zero for u >= hidden), so every gate starts at a panel. A step multiplies h by the
 * panels into a scratch row of gates * hp per batch row, then runs the gate math over that row
 * and the step's projection. The units are split in two tasks of whole panels run through the
 * executor's pool (generated code; inline elsewhere): each task multiplies by its units' columns
 * of every gate and finishes their gate math, so two cores each stream half of R (LSTM 256: 512 KB
 * each, in L2) and one step costs one pool dispatch (GRU without linear_before_reset: two, as its
 * candidate reads r * h of every unit). h is double-buffered, c updated in place (a unit belongs
 * to one task). out [seq][batch][hidden] gets h (or c, for output_cell) of every step. Gate
 * orders are ONNX's: LSTM (i, o, f, c), GRU (z, r, h). Returns 0, or -1 when the scratch cannot be
 * allocated. */
#define KILN_REC_HP(hidden) (((hidden) + KILN_PANEL_NR - 1) / KILN_PANEL_NR * KILN_PANEL_NR)

#ifndef __cplusplus
/* Defined by the generated code's preamble, set by the loader. */
extern const KilnRuntimeApi* kiln_runtime_api;
#endif

/* Scratch of a call or task: the runtime's workspace (kept per thread for the next request that
 * fits, runtime/workspace.h) where a loader installed it, else malloc. */
static inline void* kiln_scratch_alloc(int64_t nbytes) {
#ifndef __cplusplus
  if (kiln_runtime_api) return kiln_runtime_api->workspace_alloc(nbytes);
#endif
  return malloc((size_t)nbytes);
}

static inline void kiln_scratch_free(void* p) {
#ifndef __cplusplus
  if (kiln_runtime_api) {
    kiln_runtime_api->workspace_free(p);
    return;
  }
#endif
  free(p);
}

static inline int32_t kiln_rec_parallel(int64_t tasks, kiln_parallel_body body, void* env) {
#ifndef __cplusplus
  if (tasks > 1 && kiln_runtime_api) return kiln_runtime_api->parallel_for(tasks, body, env);
#endif
  for (int64_t t = 0; t < tasks; ++t) {
    const int32_t rc = body(t, tasks, env);
    if (rc != 0) return rc;
  }
  return 0;
}

/* One step of one sequence, shared by its tasks. */
typedef struct KilnRecStep {
  int64_t batch, hidden, hp, gates, tasks;
  const float* x;     /* the step's projection, batch x gates * hidden */
  const float* r;     /* the panels */
  const float* h;     /* h of the previous step, batch x hidden */
  float* h_next;      /* h of this step */
  float* c;           /* LSTM: the cell state, updated in place */
  float* rh;          /* GRU without linear_before_reset: r * h */
  float* acc;         /* batch x gates * hp: the recurrent products */
  const float* extra; /* LSTM: the peepholes (i, o, f); GRU: rb_h */
  float* out;         /* the step's output rows, batch x hidden */
  int32_t flag;       /* LSTM: output_cell; GRU: linear_before_reset */
} KilnRecStep;

/* Task `task`'s panels of each gate, [*p0, *p1). */
static inline void kiln_rec_task_panels(const KilnRecStep* s, int64_t task, int64_t* p0, int64_t* p1) {
  const int64_t per_gate = s->hp / KILN_PANEL_NR;
  *p0 = per_gate * task / s->tasks;
  *p1 = per_gate * (task + 1) / s->tasks;
}

/* The vector the recurrent products' one-image path, the depthwise rows, the convolution tile and
 * the activations of convolution stores work in: 16 lanes with AVX-512, 8 with AVX2 and FMA; none
 * otherwise (scalar loops). */
#if defined(__AVX512F__)
#include <immintrin.h>
#define KILN_DW_VL 16
typedef __m512 kiln_dw_vec;
#define KILN_DW_LOAD(p) _mm512_loadu_ps(p)
#define KILN_DW_STORE(p, v) _mm512_storeu_ps((p), (v))
#define KILN_DW_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define KILN_DW_SET1(x) _mm512_set1_ps(x)
#define KILN_DW_MIN(a, b) _mm512_min_ps((a), (b))
#define KILN_DW_MAX(a, b) _mm512_max_ps((a), (b))
#define KILN_DW_ADD(a, b) _mm512_add_ps((a), (b))
#define KILN_DW_MUL(a, b) _mm512_mul_ps((a), (b))
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define KILN_DW_VL 8
typedef __m256 kiln_dw_vec;
#define KILN_DW_LOAD(p) _mm256_loadu_ps(p)
#define KILN_DW_STORE(p, v) _mm256_storeu_ps((p), (v))
#define KILN_DW_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define KILN_DW_SET1(x) _mm256_set1_ps(x)
#define KILN_DW_MIN(a, b) _mm256_min_ps((a), (b))
#define KILN_DW_MAX(a, b) _mm256_max_ps((a), (b))
#define KILN_DW_ADD(a, b) _mm256_add_ps((a), (b))
#define KILN_DW_MUL(a, b) _mm256_mul_ps((a), (b))
#endif

#if defined(KILN_DW_VL)
/* Accumulator j of the recurrent product's one-image path: vector j % (32 / VL) of panel
 * j / (32 / VL), eight in all. */
#define KILN_REC_PANELS (8 * KILN_DW_VL / KILN_PANEL_NR)
#define KILN_REC_AT(j) q[(j) / (KILN_PANEL_NR / KILN_DW_VL)] + e + ((j) % (KILN_PANEL_NR / KILN_DW_VL)) * KILN_DW_VL
#define KILN_REC_OUT(j) o[(j) / (KILN_PANEL_NR / KILN_DW_VL)] + ((j) % (KILN_PANEL_NR / KILN_DW_VL)) * KILN_DW_VL
#define KILN_REC_FOR_ACC(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define KILN_REC_ZERO(j) kiln_dw_vec c##j = KILN_DW_SET1(0.0f);
#define KILN_REC_FMA(j) c##j = KILN_DW_FMA(av, KILN_DW_LOAD(KILN_REC_AT(j)), c##j);
#define KILN_REC_STORE(j) KILN_DW_STORE(KILN_REC_OUT(j), c##j);
#endif

/* acc[b][g * hp + j] = a[b] . R^T column g * hp + j, for the gates [g0, g1) and the task's columns.
 * One row (batch 1, the usual inference case) is a GEMV over KILN_REC_PANELS panels at a time,
 * eight independent accumulators, so the loads of R rather than the FMA latency set the pace. */
static inline void kiln_rec_product_f32(const KilnRecStep* s, const float* KILN_RESTRICT a, int64_t g0, int64_t g1,
                                        int64_t p0, int64_t p1) {
  const int64_t k = s->hidden, per_gate = s->hp / KILN_PANEL_NR, stride = k * KILN_PANEL_NR, ldc = s->gates * s->hp;
  const int64_t np = p1 - p0;
  for (int64_t b = 0; b < s->batch; ++b)
    for (int64_t g = g0; g < g1; ++g)
      for (int64_t j = p0 * KILN_PANEL_NR; j < p1 * KILN_PANEL_NR; ++j) s->acc[b * ldc + g * s->hp + j] = 0.0f;
#if defined(KILN_DW_VL)
  /* One image: a vector times the panels, KILN_REC_PANELS panels at a time so that eight
   * accumulators (four panels of 2 zmm, or two of 4 ymm) are eight independent chains of
   * multiply-adds: the panel tile's one row chains its few (the 2-layer LSTM 256 on Zen 3,
   * 2.04 -> 1.40 ms). */
  if (s->batch == 1) {
    const int64_t count = (g1 - g0) * np;
    int64_t i = 0;
    for (; i + KILN_REC_PANELS <= count; i += KILN_REC_PANELS) {
      const float* q[KILN_REC_PANELS];
      float* o[KILN_REC_PANELS];
      for (int l = 0; l < KILN_REC_PANELS; ++l) {
        const int64_t g = g0 + (i + l) / np, p = p0 + (i + l) % np;
        q[l] = s->r + (g * per_gate + p) * stride;
        o[l] = s->acc + g * s->hp + p * KILN_PANEL_NR;
      }
      KILN_REC_FOR_ACC(KILN_REC_ZERO)
      for (int64_t p = 0; p < k; ++p) {
        const kiln_dw_vec av = KILN_DW_SET1(a[p]);
        const int64_t e = p * KILN_PANEL_NR;
        KILN_REC_FOR_ACC(KILN_REC_FMA)
      }
      KILN_REC_FOR_ACC(KILN_REC_STORE)
    }
    for (; i < count; ++i) {
      const int64_t g = g0 + i / np, p = p0 + i % np;
      kiln_sgemm_panels_f32(1, KILN_PANEL_NR, k, a, k, s->r + (g * per_gate + p) * stride, KILN_PANEL_NR, stride,
                            s->acc + g * s->hp + p * KILN_PANEL_NR, ldc, 0);
    }
    return;
  }
#endif
  for (int64_t g = g0; g < g1; ++g)
    kiln_sgemm_panels_f32(s->batch, np * KILN_PANEL_NR, k, a, k, s->r + (g * per_gate + p0) * stride, KILN_PANEL_NR,
                          stride, s->acc + g * s->hp + p0 * KILN_PANEL_NR, ldc, 0);
}

/* The task's units, [*u0, *u1). */
static inline void kiln_rec_task_units(const KilnRecStep* s, int64_t p0, int64_t p1, int64_t* u0, int64_t* u1) {
  *u0 = p0 * KILN_PANEL_NR;
  *u1 = p1 * KILN_PANEL_NR < s->hidden ? p1 * KILN_PANEL_NR : s->hidden;
}

/* What every step task does first: its panels' share of the product of `h` with gates [g0, g1)
 * of R, and the units [u0, u1) those panels cover. */
static inline void kiln_rec_task_begin(const KilnRecStep* s, int64_t task, const float* h, int64_t g0, int64_t g1,
                                       int64_t* u0, int64_t* u1) {
  int64_t p0, p1;
  kiln_rec_task_panels(s, task, &p0, &p1);
  kiln_rec_task_units(s, p0, p1, u0, u1);
  kiln_rec_product_f32(s, h, g0, g1, p0, p1);
}

/* The gate math of one batch row, units [u0, u1): restrict parameters (which GCC honours, unlike
 * block-scope ones) let the loop vectorize with kiln_sigmoidf / kiln_tanhf. */
static inline void kiln_lstm_gates_row(int64_t u0, int64_t u1, const float* KILN_RESTRICT xi,
                                       const float* KILN_RESTRICT xo, const float* KILN_RESTRICT xf,
                                       const float* KILN_RESTRICT xc, const float* KILN_RESTRICT ai,
                                       const float* KILN_RESTRICT ao, const float* KILN_RESTRICT af,
                                       const float* KILN_RESTRICT ac, const float* KILN_RESTRICT pi,
                                       const float* KILN_RESTRICT po, const float* KILN_RESTRICT pf,
                                       float* KILN_RESTRICT c, float* KILN_RESTRICT h, float* KILN_RESTRICT y,
                                       int32_t cell_out) {
  for (int64_t u = u0; u < u1; ++u) {
    const float cell = c[u];
    const float ig = kiln_sigmoidf((xi[u] + ai[u]) + pi[u] * cell);
    const float fg = kiln_sigmoidf((xf[u] + af[u]) + pf[u] * cell);
    const float g = kiln_tanhf(xc[u] + ac[u]);
    const float next = fg * cell + ig * g;
    const float og = kiln_sigmoidf((xo[u] + ao[u]) + po[u] * next);
    const float hn = og * kiln_tanhf(next);
    c[u] = next;
    h[u] = hn;
    y[u] = cell_out ? next : hn;
  }
}

/* GRU with linear_before_reset, one batch row. */
static inline void kiln_gru_gates_row(int64_t u0, int64_t u1, const float* KILN_RESTRICT xz,
                                      const float* KILN_RESTRICT xr, const float* KILN_RESTRICT xh,
                                      const float* KILN_RESTRICT az, const float* KILN_RESTRICT ar,
                                      const float* KILN_RESTRICT ah, const float* KILN_RESTRICT rb,
                                      const float* KILN_RESTRICT h, float* KILN_RESTRICT hn, float* KILN_RESTRICT y) {
  for (int64_t u = u0; u < u1; ++u) {
    const float z = kiln_sigmoidf(xz[u] + az[u]);
    const float rg = kiln_sigmoidf(xr[u] + ar[u]);
    const float cand = kiln_tanhf(xh[u] + rg * (ah[u] + rb[u]));
    const float next = (1.0f - z) * cand + z * h[u];
    hn[u] = next;
    y[u] = next;
  }
}

static inline int32_t kiln_lstm_step_task(int64_t task, int64_t num_tasks, void* env) {
  const KilnRecStep* s = (const KilnRecStep*)env;
  const int64_t n = s->hidden, hp = s->hp, width = 4 * hp;
  int64_t u0, u1;
  (void)num_tasks;
  kiln_rec_task_begin(s, task, s->h, 0, 4, &u0, &u1);
  const float* KILN_RESTRICT pi = s->extra;
  const float* KILN_RESTRICT po = s->extra + n;
  const float* KILN_RESTRICT pf = s->extra + 2 * n;
  const int32_t cell_out = s->flag;
  for (int64_t b = 0; b < s->batch; ++b) {
    const float* KILN_RESTRICT x = s->x + b * 4 * n;
    const float* KILN_RESTRICT a = s->acc + b * width;
    float* KILN_RESTRICT cb = s->c + b * n;
    float* KILN_RESTRICT hb = s->h_next + b * n;
    float* KILN_RESTRICT y = s->out + b * n;
    kiln_lstm_gates_row(u0, u1, x, x + n, x + 2 * n, x + 3 * n, a, a + hp, a + 2 * hp, a + 3 * hp, pi, po, pf, cb, hb,
                        y, cell_out);
  }
  return 0;
}

static inline int32_t kiln_rnn_step_task(int64_t task, int64_t num_tasks, void* env) {
  const KilnRecStep* s = (const KilnRecStep*)env;
  const int64_t n = s->hidden;
  int64_t u0, u1;
  (void)num_tasks;
  kiln_rec_task_begin(s, task, s->h, 0, 1, &u0, &u1);
  for (int64_t b = 0; b < s->batch; ++b) {
    const float* KILN_RESTRICT x = s->x + b * n;
    const float* KILN_RESTRICT a = s->acc + b * s->hp;
    float* KILN_RESTRICT hb = s->h_next + b * n;
    float* KILN_RESTRICT y = s->out + b * n;
    for (int64_t u = u0; u < u1; ++u) {
      const float hn = kiln_tanhf(x[u] + a[u]);
      hb[u] = hn;
      y[u] = hn;
    }
  }
  return 0;
}

/* GRU, linear_before_reset: h x R^T for all three gates, then the gate math. */
static inline int32_t kiln_gru_step_task(int64_t task, int64_t num_tasks, void* env) {
  const KilnRecStep* s = (const KilnRecStep*)env;
  const int64_t n = s->hidden, hp = s->hp, width = 3 * hp;
  int64_t u0, u1;
  (void)num_tasks;
  kiln_rec_task_begin(s, task, s->h, 0, 3, &u0, &u1);
  const float* KILN_RESTRICT rb = s->extra;
  for (int64_t b = 0; b < s->batch; ++b) {
    const float* KILN_RESTRICT x = s->x + b * 3 * n;
    const float* KILN_RESTRICT a = s->acc + b * width;
    const float* KILN_RESTRICT hb = s->h + b * n;
    float* KILN_RESTRICT hn = s->h_next + b * n;
    float* KILN_RESTRICT y = s->out + b * n;
    kiln_gru_gates_row(u0, u1, x, x + n, x + 2 * n, a, a + hp, a + 2 * hp, rb, hb, hn, y);
  }
  return 0;
}

/* GRU without linear_before_reset, first half: z (kept in its product's place) and r * h. */
static inline int32_t kiln_gru_gates_task(int64_t task, int64_t num_tasks, void* env) {
  const KilnRecStep* s = (const KilnRecStep*)env;
  const int64_t n = s->hidden, hp = s->hp, width = 3 * hp;
  int64_t u0, u1;
  (void)num_tasks;
  kiln_rec_task_begin(s, task, s->h, 0, 2, &u0, &u1);
  for (int64_t b = 0; b < s->batch; ++b) {
    const float* KILN_RESTRICT x = s->x + b * 3 * n;
    float* KILN_RESTRICT a = s->acc + b * width;
    const float* KILN_RESTRICT hb = s->h + b * n;
    float* KILN_RESTRICT rhb = s->rh + b * n;
    for (int64_t u = u0; u < u1; ++u) {
      a[u] = kiln_sigmoidf(x[u] + a[u]);
      rhb[u] = kiln_sigmoidf(x[n + u] + a[hp + u]) * hb[u];
    }
  }
  return 0;
}

/* Second half: the candidate from (r * h) x Rh^T, then h. */
static inline int32_t kiln_gru_candidate_task(int64_t task, int64_t num_tasks, void* env) {
  const KilnRecStep* s = (const KilnRecStep*)env;
  const int64_t n = s->hidden, hp = s->hp, width = 3 * hp;
  int64_t u0, u1;
  (void)num_tasks;
  kiln_rec_task_begin(s, task, s->rh, 2, 3, &u0, &u1);
  const float* KILN_RESTRICT rb = s->extra;
  for (int64_t b = 0; b < s->batch; ++b) {
    const float* KILN_RESTRICT x = s->x + b * 3 * n;
    const float* KILN_RESTRICT a = s->acc + b * width;
    const float* KILN_RESTRICT hb = s->h + b * n;
    float* KILN_RESTRICT hn = s->h_next + b * n;
    float* KILN_RESTRICT y = s->out + b * n;
    for (int64_t u = u0; u < u1; ++u) {
      const float z = a[u];
      const float cand = kiln_tanhf(x[2 * n + u] + (a[2 * hp + u] + rb[u]));
      const float h = (1.0f - z) * cand + z * hb[u];
      hn[u] = h;
      y[u] = h;
    }
  }
  return 0;
}

/* Two tasks when a step has enough work to pay for a dispatch (about 10 us of products). */
static inline int64_t kiln_rec_tasks(int64_t batch, int64_t hidden, int64_t gates) {
  const int64_t hp = KILN_REC_HP(hidden);
  return hp / KILN_PANEL_NR >= 2 && batch * gates * hp * hidden >= (1 << 17) ? 2 : 1;
}

/* Sets up the scratch (products, two h buffers, c, r * h) and runs the steps. */
static inline int32_t kiln_rec_sequence_f32(int64_t seq, int64_t batch, int64_t hidden, int64_t gates,
                                            const float* proj, const float* r, const float* h0, const float* c0,
                                            const float* extra, int32_t reverse, int32_t flag, float* out,
                                            kiln_parallel_body body, kiln_parallel_body first_half) {
  KilnRecStep s;
  const int64_t bh = batch * hidden;
  s.batch = batch;
  s.hidden = hidden;
  s.hp = KILN_REC_HP(hidden);
  s.gates = gates;
  s.tasks = kiln_rec_tasks(batch, hidden, gates);
  float* scratch = (float*)kiln_scratch_alloc((batch * gates * s.hp + 4 * bh) * (int64_t)sizeof(float));
  if (!scratch) return -1;
  float* h = scratch + batch * gates * s.hp;
  float* h_next = h + bh;
  s.c = h_next + bh;
  s.rh = s.c + bh;
  s.acc = scratch;
  s.r = r;
  s.extra = extra;
  s.flag = flag;
  for (int64_t i = 0; i < bh; ++i) {
    h[i] = h0[i];
    s.c[i] = c0 ? c0[i] : 0.0f;
  }
  int32_t rc = 0;
  for (int64_t step = 0; step < seq && rc == 0; ++step) {
    const int64_t t = reverse ? seq - 1 - step : step;
    s.x = proj + t * batch * gates * hidden;
    s.out = out + t * bh;
    s.h = h;
    s.h_next = h_next;
    if (first_half) rc = kiln_rec_parallel(s.tasks, first_half, &s);
    if (rc == 0) rc = kiln_rec_parallel(s.tasks, body, &s);
    h_next = h;
    h = (float*)s.h_next;
  }
  kiln_scratch_free(scratch);
  return rc;
}

static inline int32_t kiln_lstm_seq_f32(int64_t seq, int64_t batch, int64_t hidden, const float* proj, const float* r,
                                        const float* h0, const float* c0, const float* peepholes, int32_t reverse,
                                        int32_t output_cell, float* out) {
  return kiln_rec_sequence_f32(seq, batch, hidden, 4, proj, r, h0, c0, peepholes, reverse, output_cell, out,
                               kiln_lstm_step_task, NULL);
}

static inline int32_t kiln_gru_seq_f32(int64_t seq, int64_t batch, int64_t hidden, const float* proj, const float* r,
                                       const float* rb_h, const float* h0, int32_t reverse, int32_t linear_before_reset,
                                       float* out) {
  if (linear_before_reset)
    return kiln_rec_sequence_f32(seq, batch, hidden, 3, proj, r, h0, NULL, rb_h, reverse, 0, out, kiln_gru_step_task,
                                 NULL);
  return kiln_rec_sequence_f32(seq, batch, hidden, 3, proj, r, h0, NULL, rb_h, reverse, 0, out, kiln_gru_candidate_task,
                               kiln_gru_gates_task);
}

static inline int32_t kiln_rnn_seq_f32(int64_t seq, int64_t batch, int64_t hidden, const float* proj, const float* r,
                                       const float* h0, int32_t reverse, float* out) {
  return kiln_rec_sequence_f32(seq, batch, hidden, 1, proj, r, h0, NULL, NULL, reverse, 0, out, kiln_rnn_step_task,
                               NULL);
}

/* ---- Winograd F(4x4, 3x3) over blocked NCHW{x}c data ----------------------------------------
 * kiln_conv2d_winograd_f32 is a whole 3x3 stride-1 convolution (nn.conv2d_winograd): data
 * (n, cb, h, w, x), u from nn.winograd_weight_transform (36, kp/32, cb*x, 32) with
 * kp = out_channels rounded up to 32, out (n, ob, oh, ow, y). The output is cut into tiles of 4x4
 * positions; a task takes `block` tiles (sized by the caller so its scratch stays in L2) and
 *   1. transforms each tile's 6x6 input window (zeros outside the image) to V = B^T d B, stored as
 *      36 matrices of block x channels (row = tile, channels contiguous);
 *   2. multiplies each of the 36 by its U (channels x out_channels) on the panel GEMM, M = V U;
 *   3. transforms each tile's 36 vectors of M back to 4x4 outputs, Y = A^T M A, dropping the
 *      positions past the output's edge, and applies the epilogue before the store: plus
 *      bias[channel] and plus residual[position] (each may be NULL; the residual is laid out as
 *      out), then clamped to [lo, hi] (lower bound first, NaN stays: a folded relu or clip;
 *      -INFINITY, INFINITY for none). Folded here the tail costs no second pass over the output.
 * Per output that is 36 / 16 = 2.25 products per (input, output) channel pair instead of 9.
 * Tasks run on the executor's pool. Returns 0, or -1 when the scratch cannot be allocated. */
#define KILN_WINO_ALPHA 6
#define KILN_WINO_POINTS 36
#define KILN_WINO_MAX_LANES 64

/* r_i = (B^T d)_i for six vectors d_k (x lanes each) at stride ds; results at stride rs. Written
 * as 12 operations with explicit FMAs: -std=c11 contracts nothing, and the plain formulas compile
 * to 24 (the input transform was 14% of DenseNet-121's time). */
static inline void kiln_wino_bt6(const float* KILN_RESTRICT d, int64_t ds, float* KILN_RESTRICT r, int64_t rs,
                                 int64_t x) {
  for (int64_t l = 0; l < x; ++l) {
    const float d0 = d[l], d1 = d[ds + l], d2 = d[2 * ds + l], d3 = d[3 * ds + l], d4 = d[4 * ds + l],
                d5 = d[5 * ds + l];
    const float a = KILN_FMAF(-4.0f, d2, d4), b = KILN_FMAF(-4.0f, d1, d3); /* r1 = a + b, r2 = a - b */
    const float c = d4 - d2, e = d3 - d1;                                   /* r3 = c + 2e, r4 = c - 2e */
    r[l] = KILN_FMAF(4.0f, d0, KILN_FMAF(-5.0f, d2, d4));
    r[rs + l] = a + b;
    r[2 * rs + l] = a - b;
    r[3 * rs + l] = KILN_FMAF(2.0f, e, c);
    r[4 * rs + l] = KILN_FMAF(-2.0f, e, c);
    r[5 * rs + l] = KILN_FMAF(4.0f, d1, KILN_FMAF(-5.0f, d3, d5));
  }
}

/* o_i = (A^T m)_i, i < 4, for six vectors m_k at stride ms; results at stride os. */
static inline void kiln_wino_at6(const float* KILN_RESTRICT m, int64_t ms, float* KILN_RESTRICT o, int64_t os,
                                 int64_t x) {
  for (int64_t l = 0; l < x; ++l) {
    const float m0 = m[l], m1 = m[ms + l], m2 = m[2 * ms + l], m3 = m[3 * ms + l], m4 = m[4 * ms + l],
                m5 = m[5 * ms + l];
    const float s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
    o[l] = m0 + s12 + s34;
    o[os + l] = KILN_FMAF(2.0f, d34, d12);
    o[2 * os + l] = KILN_FMAF(4.0f, s34, s12);
    o[3 * os + l] = KILN_FMAF(8.0f, d34, d12 + m5);
  }
}

typedef struct KilnWinograd {
  int64_t n, cb, h, w, x;             /* data */
  int64_t ob, oh, ow, y;              /* output */
  int64_t pad_top, pad_left;          /* the other sides follow from oh, ow */
  int64_t channels, out_channels, kp; /* cb * x, ob * y, out_channels rounded up to 32 */
  int64_t tiles_h, tiles_w, tiles, block, kc;
  const float* data;
  const float* u;
  const float* bias;     /* out_channels values, or NULL */
  const float* residual; /* added after the bias: shaped as out, or NULL */
  float lo, hi;          /* the clamp after the bias and the residual */
  float* out;
} KilnWinograd;

/* The epilogue of one value of channel block lane l at offset i of its plane: v + bias[l] +
 * residual[i], clamped as clip does. */
static inline float kiln_wino_epilogue(const KilnWinograd* s, const float* bias, const float* residual, int64_t l,
                                       int64_t i, float v) {
  if (bias) v += bias[l];
  if (residual) v += residual[i];
  v = v < s->lo ? s->lo : v;
  return v > s->hi ? s->hi : v;
}

/* V of one tile and channel block: the 36 vectors go to v + point * v_stride. */
static inline void kiln_wino_input_tile(const KilnWinograd* s, const float* KILN_RESTRICT image, int64_t y0, int64_t x0,
                                        float* KILN_RESTRICT v, int64_t v_stride, int64_t x) {
  float window[KILN_WINO_POINTS * KILN_WINO_MAX_LANES], rows[KILN_WINO_POINTS * KILN_WINO_MAX_LANES];
  const float* d = image + (y0 * s->w + x0) * x;
  int64_t row_stride = s->w * x;
  if (y0 < 0 || x0 < 0 || y0 + KILN_WINO_ALPHA > s->h || x0 + KILN_WINO_ALPHA > s->w) {
    for (int64_t i = 0; i < KILN_WINO_ALPHA; ++i)
      for (int64_t j = 0; j < KILN_WINO_ALPHA; ++j) {
        const int64_t yy = y0 + i, xx = x0 + j;
        const int inside = yy >= 0 && yy < s->h && xx >= 0 && xx < s->w;
        for (int64_t l = 0; l < x; ++l)
          window[(i * KILN_WINO_ALPHA + j) * x + l] = inside ? image[(yy * s->w + xx) * x + l] : 0.0f;
      }
    d = window;
    row_stride = KILN_WINO_ALPHA * x;
  }
  /* Down the columns, then along the rows: point (i, j) of B^T d B. */
  for (int64_t j = 0; j < KILN_WINO_ALPHA; ++j)
    kiln_wino_bt6(d + j * x, row_stride, rows + j * x, KILN_WINO_ALPHA * x, x);
  for (int64_t i = 0; i < KILN_WINO_ALPHA; ++i)
    kiln_wino_bt6(rows + i * KILN_WINO_ALPHA * x, x, v + i * KILN_WINO_ALPHA * v_stride, v_stride, x);
}

/* Y of one tile and output channel block from the 36 vectors at m + point * m_stride; `bias` is the
 * block's y values or NULL, `residual` the block's plane of the residual or NULL. */
static inline void kiln_wino_output_tile(const KilnWinograd* s, const float* KILN_RESTRICT m, int64_t m_stride,
                                         const float* bias, const float* residual, float* KILN_RESTRICT plane,
                                         int64_t y0, int64_t x0, int64_t y) {
  float cols[4 * KILN_WINO_ALPHA * KILN_WINO_MAX_LANES], tile[16 * KILN_WINO_MAX_LANES];
  for (int64_t j = 0; j < KILN_WINO_ALPHA; ++j)
    kiln_wino_at6(m + j * m_stride, KILN_WINO_ALPHA * m_stride, cols + j * y, KILN_WINO_ALPHA * y, y);
  for (int64_t r = 0; r < 4; ++r) kiln_wino_at6(cols + r * KILN_WINO_ALPHA * y, y, tile + r * 4 * y, y, y);
  for (int64_t r = 0; r < 4 && y0 + r < s->oh; ++r)
    for (int64_t c = 0; c < 4 && x0 + c < s->ow; ++c)
      for (int64_t l = 0; l < y; ++l) {
        const int64_t i = ((y0 + r) * s->ow + x0 + c) * y + l;
        plane[i] = kiln_wino_epilogue(s, bias, residual, l, i, tile[(r * 4 + c) * y + l]);
      }
}

/* The transforms of whole-vector blocks in explicit vectors, six points of a column or row in
 * registers: 16 lanes on AVX-512, 8 on AVX2 with FMA. The lane-loop versions above ran the input
 * transform at about 550 cycles per tile and 16-channel block, half of DenseNet-121's Winograd
 * time (128 -> 32 channels); these take about 90 (8 lanes: about 300 -> 80), with the same
 * operations in the same order. A tap outside the image is a zero vector, and the output
 * transform skips the positions past the edge vector by vector. Its clamp is MIN(hi, MAX(lo, v)):
 * MAXPS and MINPS return their second operand when one is NaN, so NaN stays NaN as in clip.
 * KILN_WINO_VECTOR_TRANSFORMS defines kiln_wino_input_tile<L> and kiln_wino_output_tile<L> for
 * one vector type. */
#define KILN_WINO_VECTOR_TRANSFORMS(L, V, LOAD, STORE, FMA, ADD, SUB, MIN, MAX, ZERO, SET1)                          \
  static inline __attribute__((always_inline)) void kiln_wino_bt6_v##L(V d0, V d1, V d2, V d3, V d4, V d5,           \
                                                                       float* KILN_RESTRICT r, int64_t rs) {         \
    const V a = FMA(SET1(-4.0f), d2, d4), b = FMA(SET1(-4.0f), d1, d3), c = SUB(d4, d2), e = SUB(d3, d1);            \
    STORE(r, FMA(SET1(4.0f), d0, FMA(SET1(-5.0f), d2, d4)));                                                         \
    STORE(r + rs, ADD(a, b));                                                                                        \
    STORE(r + 2 * rs, SUB(a, b));                                                                                    \
    STORE(r + 3 * rs, FMA(SET1(2.0f), e, c));                                                                        \
    STORE(r + 4 * rs, FMA(SET1(-2.0f), e, c));                                                                       \
    STORE(r + 5 * rs, FMA(SET1(4.0f), d1, FMA(SET1(-5.0f), d3, d5)));                                                \
  }                                                                                                                  \
  static inline void kiln_wino_input_tile##L(const KilnWinograd* s, const float* KILN_RESTRICT image, int64_t y0,    \
                                             int64_t x0, float* KILN_RESTRICT v, int64_t v_stride) {                 \
    float rows[KILN_WINO_POINTS * L] __attribute__((aligned(64)));                                                   \
    const int inside = y0 >= 0 && x0 >= 0 && y0 + KILN_WINO_ALPHA <= s->h && x0 + KILN_WINO_ALPHA <= s->w;           \
    for (int64_t j = 0; j < KILN_WINO_ALPHA; ++j) {                                                                  \
      V d[KILN_WINO_ALPHA];                                                                                          \
      const int64_t xx = x0 + j;                                                                                     \
      for (int64_t i = 0; i < KILN_WINO_ALPHA; ++i) {                                                                \
        const int64_t yy = y0 + i;                                                                                   \
        const int tap_inside = inside || (yy >= 0 && yy < s->h && xx >= 0 && xx < s->w);                             \
        d[i] = tap_inside ? LOAD(image + (yy * s->w + xx) * L) : ZERO();                                             \
      }                                                                                                              \
      kiln_wino_bt6_v##L(d[0], d[1], d[2], d[3], d[4], d[5], rows + j * L, KILN_WINO_ALPHA * L);                     \
    }                                                                                                                \
    for (int64_t i = 0; i < KILN_WINO_ALPHA; ++i) {                                                                  \
      const float* r = rows + i * KILN_WINO_ALPHA * L;                                                               \
      kiln_wino_bt6_v##L(LOAD(r), LOAD(r + L), LOAD(r + 2 * L), LOAD(r + 3 * L), LOAD(r + 4 * L), LOAD(r + 5 * L),   \
                         v + i * KILN_WINO_ALPHA * v_stride, v_stride);                                              \
    }                                                                                                                \
  }                                                                                                                  \
  static inline __attribute__((always_inline)) void kiln_wino_at6_v##L(const V* m, V* o) {                           \
    const V s12 = ADD(m[1], m[2]), d12 = SUB(m[1], m[2]), s34 = ADD(m[3], m[4]), d34 = SUB(m[3], m[4]);              \
    o[0] = ADD(ADD(m[0], s12), s34);                                                                                 \
    o[1] = FMA(SET1(2.0f), d34, d12);                                                                                \
    o[2] = FMA(SET1(4.0f), s34, s12);                                                                                \
    o[3] = FMA(SET1(8.0f), d34, ADD(d12, m[5]));                                                                     \
  }                                                                                                                  \
  static inline void kiln_wino_output_tile##L(const KilnWinograd* s, const float* KILN_RESTRICT m, int64_t m_stride, \
                                              const float* bias, const float* residual, float* KILN_RESTRICT plane,  \
                                              int64_t y0, int64_t x0) {                                              \
    float cols[4 * KILN_WINO_ALPHA * L] __attribute__((aligned(64)));                                                \
    const V b = bias ? LOAD(bias) : ZERO(), lo = SET1(s->lo), hi = SET1(s->hi);                                      \
    for (int64_t j = 0; j < KILN_WINO_ALPHA; ++j) {                                                                  \
      V in[KILN_WINO_ALPHA], out[4];                                                                                 \
      for (int64_t i = 0; i < KILN_WINO_ALPHA; ++i) in[i] = LOAD(m + (i * KILN_WINO_ALPHA + j) * m_stride);          \
      kiln_wino_at6_v##L(in, out);                                                                                   \
      for (int64_t r = 0; r < 4; ++r) STORE(cols + (r * KILN_WINO_ALPHA + j) * L, out[r]);                           \
    }                                                                                                                \
    for (int64_t r = 0; r < 4 && y0 + r < s->oh; ++r) {                                                              \
      V in[KILN_WINO_ALPHA], out[4];                                                                                 \
      for (int64_t j = 0; j < KILN_WINO_ALPHA; ++j) in[j] = LOAD(cols + (r * KILN_WINO_ALPHA + j) * L);              \
      kiln_wino_at6_v##L(in, out);                                                                                   \
      const int64_t row = ((y0 + r) * s->ow + x0) * L;                                                               \
      for (int64_t c = 0; c < 4 && x0 + c < s->ow; ++c) {                                                            \
        V v = bias ? ADD(out[c], b) : out[c];                                                                        \
        if (residual) v = ADD(v, LOAD(residual + row + c * L));                                                      \
        STORE(plane + row + c * L, MIN(hi, MAX(lo, v)));                                                             \
      }                                                                                                              \
    }                                                                                                                \
  }

#if defined(__AVX512F__)
KILN_WINO_VECTOR_TRANSFORMS(16, __m512, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_fmadd_ps, _mm512_add_ps,
                            _mm512_sub_ps, _mm512_min_ps, _mm512_max_ps, _mm512_setzero_ps, _mm512_set1_ps)
#endif
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
KILN_WINO_VECTOR_TRANSFORMS(8, __m256, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_fmadd_ps, _mm256_add_ps, _mm256_sub_ps,
                            _mm256_min_ps, _mm256_max_ps, _mm256_setzero_ps, _mm256_set1_ps)
#endif

static inline void kiln_wino_tile_origin(const KilnWinograd* s, int64_t tile, int64_t* image, int64_t* ty,
                                         int64_t* tx) {
  const int64_t per_image = s->tiles_h * s->tiles_w;
  *image = tile / per_image;
  *ty = tile % per_image / s->tiles_w;
  *tx = tile % s->tiles_w;
}

/* The transforms for a block width: the vector ones where the target has them, else the lane loops. */
static inline void kiln_wino_input_tile_for(const KilnWinograd* s, const float* KILN_RESTRICT image, int64_t y0,
                                            int64_t x0, float* KILN_RESTRICT v, int64_t v_stride, int64_t x) {
#if defined(__AVX512F__)
  if (x == 16) {
    kiln_wino_input_tile16(s, image, y0, x0, v, v_stride);
    return;
  }
#endif
#if defined(__AVX2__) && defined(__FMA__)
  if (x == 8) {
    kiln_wino_input_tile8(s, image, y0, x0, v, v_stride);
    return;
  }
#endif
  kiln_wino_input_tile(s, image, y0, x0, v, v_stride, x);
}

static inline void kiln_wino_output_tile_for(const KilnWinograd* s, const float* KILN_RESTRICT m, int64_t m_stride,
                                             const float* bias, const float* residual, float* KILN_RESTRICT plane,
                                             int64_t y0, int64_t x0, int64_t y) {
#if defined(__AVX512F__)
  if (y == 16) {
    kiln_wino_output_tile16(s, m, m_stride, bias, residual, plane, y0, x0);
    return;
  }
#endif
#if defined(__AVX2__) && defined(__FMA__)
  if (y == 8) {
    kiln_wino_output_tile8(s, m, m_stride, bias, residual, plane, y0, x0);
    return;
  }
#endif
  kiln_wino_output_tile(s, m, m_stride, bias, residual, plane, y0, x0, y);
}

/* x and y are passed as literals where they are 16 or 8, so that the GEMM and the lane loops see constants. */
static inline void kiln_wino_task_body(const KilnWinograd* s, int64_t t0, int64_t rows, float* KILN_RESTRICT v,
                                       float* KILN_RESTRICT m, int64_t x, int64_t y) {
  const int64_t c = s->channels, kp = s->kp, block = s->block;
  for (int64_t t = 0; t < rows; ++t) {
    int64_t image, ty, tx;
    kiln_wino_tile_origin(s, t0 + t, &image, &ty, &tx);
    for (int64_t b = 0; b < s->cb; ++b)
      kiln_wino_input_tile_for(s, s->data + (image * s->cb + b) * s->h * s->w * x, ty * 4 - s->pad_top,
                               tx * 4 - s->pad_left, v + t * c + b * x, block * c, x);
  }
  for (int64_t p = 0; p < KILN_WINO_POINTS; ++p) {
    float* mp = m + p * block * kp;
    for (int64_t i = 0; i < rows * kp; ++i) mp[i] = 0.0f;
    kiln_sgemm_panels_f32(rows, s->out_channels, c, v + p * block * c, c, s->u + p * kp * c, KILN_PANEL_NR,
                          KILN_PANEL_NR * c, mp, kp, s->kc);
  }
  for (int64_t t = 0; t < rows; ++t) {
    int64_t image, ty, tx;
    kiln_wino_tile_origin(s, t0 + t, &image, &ty, &tx);
    for (int64_t o = 0; o < s->ob; ++o) {
      const int64_t plane = (image * s->ob + o) * s->oh * s->ow * y;
      kiln_wino_output_tile_for(s, m + t * kp + o * y, block * kp, s->bias ? s->bias + o * y : NULL,
                                s->residual ? s->residual + plane : NULL, s->out + plane, ty * 4, tx * 4, y);
    }
  }
}

static inline int32_t kiln_wino_task(int64_t task, int64_t num_tasks, void* env) {
  (void)num_tasks;
  const KilnWinograd* s = (const KilnWinograd*)env;
  const int64_t t0 = task * s->block;
  const int64_t rows = s->tiles - t0 < s->block ? s->tiles - t0 : s->block;
  float* v = (float*)kiln_scratch_alloc(KILN_WINO_POINTS * s->block * (s->channels + s->kp) * (int64_t)sizeof(float));
  if (!v) return -1;
  float* m = v + KILN_WINO_POINTS * s->block * s->channels;
  if (s->x == 16 && s->y == 16)
    kiln_wino_task_body(s, t0, rows, v, m, 16, 16);
  else if (s->x == 8 && s->y == 8)
    kiln_wino_task_body(s, t0, rows, v, m, 8, 8);
  else
    kiln_wino_task_body(s, t0, rows, v, m, s->x, s->y);
  kiln_scratch_free(v);
  return 0;
}

static inline int32_t kiln_conv2d_winograd_f32(int64_t n, int64_t cb, int64_t h, int64_t w, int64_t x, int64_t ob,
                                               int64_t oh, int64_t ow, int64_t y, int64_t pad_top, int64_t pad_left,
                                               int64_t block, int64_t kc, const float* data, const float* u,
                                               const float* bias, const float* residual, float lo, float hi,
                                               float* out) {
  if (x > KILN_WINO_MAX_LANES || y > KILN_WINO_MAX_LANES) return -1;
  KilnWinograd s;
  s.n = n;
  s.cb = cb;
  s.h = h;
  s.w = w;
  s.x = x;
  s.ob = ob;
  s.oh = oh;
  s.ow = ow;
  s.y = y;
  s.pad_top = pad_top;
  s.pad_left = pad_left;
  s.channels = cb * x;
  s.out_channels = ob * y;
  s.kp = (s.out_channels + KILN_PANEL_NR - 1) / KILN_PANEL_NR * KILN_PANEL_NR;
  s.tiles_h = (oh + 3) / 4;
  s.tiles_w = (ow + 3) / 4;
  s.tiles = n * s.tiles_h * s.tiles_w;
  s.block = block > 0 ? block : 8;
  s.kc = kc;
  s.data = data;
  s.u = u;
  s.bias = bias;
  s.residual = residual;
  s.lo = lo;
  s.hi = hi;
  s.out = out;
  return kiln_rec_parallel((s.tiles + s.block - 1) / s.block, kiln_wino_task, &s);
}

/* ----- Convolution tiles in the blocked layouts (src/op/nn/conv2d_nchwc.cc) -----
 * kiln_conv_nchwc_f32 accumulates `rows` output positions x `blocks` output channel blocks of a
 * kh x kw convolution over data NCHW{lanes}c, weight OIHW{lanes}i{y}o, output NCHW{y}c:
 *   C[b * c_block + r * y + l] += sum over ic < cb, taps (ty, tx), i < lanes of
 *       D[ic * d_block + r * lanes * stride + ty * d_tap_row + tx * d_tap_col + i]
 *         * W[b * w_out + ic * w_in + ty * w_tap_row + tx * w_tap_col + i * y + l]
 * for r < rows <= KILN_CONV_TILE_MAX_ROWS, b < blocks <= KILN_CONV_TILE_MAX_BLOCKS,
 * l < y <= 16. y is the vector width (16 with AVX-512, 8 with AVX2: one register per block and
 * position); other widths run plain loops. d_tap_row / d_tap_col are the dilated rows and columns
 * of a padded copy. The generated code passes rows, blocks, stride, lanes, y and the window as
 * literals: once the
 * always-inline kernel is inlined they are constants, so the rows x blocks accumulators are named
 * registers (GCC keeps arrays of vectors on the stack) and the positions' offsets are
 * displacements. Each step of the reduction loads the blocks' weight vectors once and each
 * position's input once for rows x blocks FMAs; the accumulators stay in registers over all input
 * blocks and taps, and per input block the taps' weights are one contiguous run (read in order,
 * prefetched KILN_CONV_PREFETCH_AHEAD floats ahead: a layer's weights come from memory once per
 * run, and the hardware prefetcher stops at every page). Returns 0.
 * kiln_conv_nchwc_ep_f32 is the same tile with an epilogue in registers: the accumulators start
 * at bias[b * y + l] instead of C's values, get residual[b * c_block + r * y + l] added after
 * the reduction when residual is not NULL (a residual block's add, in the graph's order), pass
 * through `act` (KILN_ACT_*, with lo, hi) and are stored to C and, when twin != 0, also twin
 * floats after each (kiln_pwdw_f32's ring). A residual was written layers earlier and has left
 * the caches: its lines are prefetched when the tile starts, so they arrive while it computes
 * (ResNet-50's 14x14 1x1 expansion with its residual 8-25% faster than with the residual loaded
 * into the starting accumulators, in alternating profiles on a noisy host; others level). */
/* Activations a convolution call applies before its stores: none, clamp to [lo, hi] (NaN kept, as
 * clip keeps it), swish (x * sigmoid(x)) or hard swish, x * clamp(x * lo + hi, 0, 1) (lo and hi
 * are then the hard sigmoid's slope and offset: MobileNetV3's x * relu6(x + 3) / 6 has 1/6, 1/2),
 * rounded as the element-wise tail rounds it (a product, then a sum). */
#define KILN_ACT_NONE 0
#define KILN_ACT_CLAMP 1
#define KILN_ACT_SWISH 2
#define KILN_ACT_HARD_SWISH 3

static inline __attribute__((always_inline)) float kiln_activate_f32(int32_t act, float lo, float hi, float v) {
  if (act == KILN_ACT_CLAMP) {
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
  }
  if (act == KILN_ACT_SWISH) return kiln_swishf(v);
  if (act == KILN_ACT_HARD_SWISH) {
    float gate = v * lo + hi;
    gate = gate < 0.0f ? 0.0f : gate;
    return v * (gate > 1.0f ? 1.0f : gate);
  }
  return v;
}

#if defined(KILN_DW_VL)
/* One vector through an activation; act is KILN_ACT_NONE where the caller has no epilogue. */
static inline __attribute__((always_inline)) kiln_dw_vec kiln_activate_vec(int32_t act, float lo, float hi,
                                                                           kiln_dw_vec v) {
  if (act == KILN_ACT_CLAMP) /* max / min return their second operand for a NaN: v stays NaN */
    return KILN_DW_MIN(KILN_DW_SET1(hi), KILN_DW_MAX(KILN_DW_SET1(lo), v));
  if (act == KILN_ACT_HARD_SWISH) {
    const kiln_dw_vec gate = KILN_DW_ADD(KILN_DW_MUL(v, KILN_DW_SET1(lo)), KILN_DW_SET1(hi));
    return KILN_DW_MUL(v, KILN_DW_MIN(KILN_DW_SET1(1.0f), KILN_DW_MAX(KILN_DW_SET1(0.0f), gate)));
  }
  if (act == KILN_ACT_SWISH) {
    float lanes_[KILN_DW_VL];
    KILN_DW_STORE(lanes_, v);
    for (int l = 0; l < KILN_DW_VL; ++l) lanes_[l] = kiln_swishf(lanes_[l]);
    return KILN_DW_LOAD(lanes_);
  }
  return v;
}
#endif

#define KILN_CONV_TILE_MAX_ROWS 14
#define KILN_CONV_TILE_MAX_BLOCKS 4

#if defined(KILN_DW_VL)
/* The register tile in vectors of KILN_DW_VL lanes, one vector per output block: zmm on AVX-512,
 * the whole tile in registers; ymm on AVX2, in sub-tiles (below). */

/* Row by row, each row's blocks together: a broadcast input is dead after its row's FMAs. */
#define KILN_CONV_TILE_FOR_BLOCKS(X, r) X(0, r) X(1, r) X(2, r) X(3, r)
/* clang-format off */
#define KILN_CONV_TILE_FOR_TILE(X)                                                                          \
  KILN_CONV_TILE_FOR_BLOCKS(X, 0) KILN_CONV_TILE_FOR_BLOCKS(X, 1) KILN_CONV_TILE_FOR_BLOCKS(X, 2)           \
  KILN_CONV_TILE_FOR_BLOCKS(X, 3) KILN_CONV_TILE_FOR_BLOCKS(X, 4) KILN_CONV_TILE_FOR_BLOCKS(X, 5)           \
  KILN_CONV_TILE_FOR_BLOCKS(X, 6) KILN_CONV_TILE_FOR_BLOCKS(X, 7) KILN_CONV_TILE_FOR_BLOCKS(X, 8)           \
  KILN_CONV_TILE_FOR_BLOCKS(X, 9) KILN_CONV_TILE_FOR_BLOCKS(X, 10) KILN_CONV_TILE_FOR_BLOCKS(X, 11)         \
  KILN_CONV_TILE_FOR_BLOCKS(X, 12) KILN_CONV_TILE_FOR_BLOCKS(X, 13)
/* clang-format on */
#define KILN_CONV_TILE_LIVE(b, r) ((b) < blocks && (r) < rows)
#define KILN_CONV_TILE_AT(b, r) ((b)*c_block + (r)*KILN_DW_VL)
#define KILN_CONV_TILE_LOAD(b, r)                                                                   \
  kiln_dw_vec acc##b##_##r = !KILN_CONV_TILE_LIVE(b, r) ? KILN_DW_SET1(0.0f)                        \
                             : !bias                    ? KILN_DW_LOAD(c + KILN_CONV_TILE_AT(b, r)) \
                                                        : KILN_DW_LOAD(bias + (b)*KILN_DW_VL);
#define KILN_CONV_TILE_PREFETCH_RESIDUAL(b, r) \
  if (KILN_CONV_TILE_LIVE(b, r)) _mm_prefetch((const char*)(residual + KILN_CONV_TILE_AT(b, r)), _MM_HINT_T0);
#define KILN_CONV_TILE_FMA(b, r) \
  if (KILN_CONV_TILE_LIVE(b, r)) acc##b##_##r = KILN_DW_FMA(KILN_DW_SET1(dc[(r)*step + i]), w##b, acc##b##_##r);
#define KILN_CONV_TILE_STORE(b, r)                                                                             \
  if (KILN_CONV_TILE_LIVE(b, r)) {                                                                             \
    const kiln_dw_vec sum_ =                                                                                   \
        residual ? KILN_DW_ADD(acc##b##_##r, KILN_DW_LOAD(residual + KILN_CONV_TILE_AT(b, r))) : acc##b##_##r; \
    const kiln_dw_vec out_ = kiln_activate_vec(act, lo, hi, sum_);                                             \
    KILN_DW_STORE(c + KILN_CONV_TILE_AT(b, r), out_);                                                          \
    if (twin) KILN_DW_STORE(c + twin + KILN_CONV_TILE_AT(b, r), out_);                                         \
  }
#ifndef KILN_CONV_PREFETCH_AHEAD
#define KILN_CONV_PREFETCH_AHEAD 1024
#endif
/* One prefetch per cache line (16 floats) of each block's weights: every step with 16 lanes,
 * every other step with 8. */
#define KILN_CONV_PREFETCH_WEIGHTS(p, i)                                       \
  if (((i)*KILN_DW_VL) % 16 == 0) {                                            \
    _mm_prefetch((const char*)(p), _MM_HINT_T0);                               \
    if (blocks > 1) _mm_prefetch((const char*)((p) + w_out), _MM_HINT_T0);     \
    if (blocks > 2) _mm_prefetch((const char*)((p) + 2 * w_out), _MM_HINT_T0); \
    if (blocks > 3) _mm_prefetch((const char*)((p) + 3 * w_out), _MM_HINT_T0); \
  }

/* The tile's positions in the input block KILN_CONV_DATA_AHEAD blocks ahead, one cache line per
 * step i, while there is such a block. Consecutive input blocks lie a whole plane apart, a stride
 * the hardware prefetchers do not follow, so without it each block's first reads wait on L2 or
 * L3 when a layer runs after others (ResNet-50 3-8% faster in whole at one and two threads; a
 * hot single layer gains nothing). */
#ifndef KILN_CONV_DATA_AHEAD
#define KILN_CONV_DATA_AHEAD 2
#endif
#define KILN_CONV_PREFETCH_DATA(p, i) \
  if ((i)*16 < rows * step && ic + KILN_CONV_DATA_AHEAD < cb) _mm_prefetch((const char*)((p) + (i)*16), _MM_HINT_T0);

#if KILN_DW_VL == 8
/* AVX2: sixteen registers cannot hold a tile whose weights are read from L1 for enough
 * multiply-adds, so the tile is walked in sub-tiles of up to 12 accumulators (at most 12 / B
 * positions x B of its blocks, kiln_conv8_sub_blocks) over chunks of input blocks whose weights fit
 * L1: each chunk's partial sums go through C, the weights stay in L1 while the tile's sub-tiles
 * reuse them. A sub-tile of three or four blocks takes its weights as the multiply-adds' memory
 * operands (12 accumulators, a broadcast, no weight registers), as GCC would otherwise keep each
 * block's weight in a register and spill; one of one or two blocks holds them in registers. */
#define KILN_CONV8_FMA_MEM(acc, x, p) __asm__("vfmadd231ps %2, %1, %0" : "+x"(acc) : "x"(x), "m"(*(const __m256_u*)(p)))
#define KILN_CONV8_FMA(acc, x, p)                            \
  {                                                          \
    if (blocks > 2)                                          \
      KILN_CONV8_FMA_MEM(acc, x, p);                         \
    else                                                     \
      acc = _mm256_fmadd_ps((x), _mm256_loadu_ps(p), (acc)); \
  }
/* Weights of the input blocks of one chunk: about half of L1. */
#define KILN_CONV8_CHUNK_BYTES 16384
#define KILN_CONV8_FOR_ROWS(X, b) \
  X(b, 0) X(b, 1) X(b, 2) X(b, 3) X(b, 4) X(b, 5) X(b, 6) X(b, 7) X(b, 8) X(b, 9) X(b, 10) X(b, 11)
#define KILN_CONV8_FOR_TILE(X) \
  KILN_CONV8_FOR_ROWS(X, 0) KILN_CONV8_FOR_ROWS(X, 1) KILN_CONV8_FOR_ROWS(X, 2) KILN_CONV8_FOR_ROWS(X, 3)
#define KILN_CONV8_ROW(r, i)                                     \
  if ((r) < rows) {                                              \
    const __m256 x_ = _mm256_broadcast_ss(dc + (r)*step + (i));  \
    KILN_CONV8_FMA(acc0_##r, x_, wi)                             \
    if (blocks > 1) KILN_CONV8_FMA(acc1_##r, x_, wi + w_out)     \
    if (blocks > 2) KILN_CONV8_FMA(acc2_##r, x_, wi + 2 * w_out) \
    if (blocks > 3) KILN_CONV8_FMA(acc3_##r, x_, wi + 3 * w_out) \
  }
/* clang-format off */
#define KILN_CONV8_STEP(i)                                                                                 \
  {                                                                                                        \
    const float* KILN_RESTRICT wi = wc + (i)*8;                                                            \
    KILN_CONV8_ROW(0, i) KILN_CONV8_ROW(1, i) KILN_CONV8_ROW(2, i) KILN_CONV8_ROW(3, i)                     \
    KILN_CONV8_ROW(4, i) KILN_CONV8_ROW(5, i) KILN_CONV8_ROW(6, i) KILN_CONV8_ROW(7, i)                     \
    KILN_CONV8_ROW(8, i) KILN_CONV8_ROW(9, i) KILN_CONV8_ROW(10, i) KILN_CONV8_ROW(11, i)                   \
  }
/* clang-format on */
/* A chunk's partial sums, before the last chunk's KILN_CONV_TILE_STORE through the epilogue. */
#define KILN_CONV8_STORE_PARTIAL(b, r) \
  if (KILN_CONV_TILE_LIVE(b, r)) KILN_DW_STORE(c + KILN_CONV_TILE_AT(b, r), acc##b##_##r);

/* `rows` positions (at most 12 / blocks) x blocks of input blocks [ic0, ic1): starting from the
 * bias (C when null), through the epilogue when `last`. The tile's KILN_CONV_TILE_* macros serve
 * its accumulators. */
static inline __attribute__((always_inline)) void kiln_conv8_subtile(
    int64_t rows, int64_t blocks, int64_t step, int64_t ic0, int64_t ic1, int64_t lanes, int64_t kh, int64_t kw,
    const float* KILN_RESTRICT d, int64_t d_block, int64_t d_tap_row, int64_t d_tap_col, const float* KILN_RESTRICT w,
    int64_t w_in, int64_t w_out, int64_t w_tap_row, int64_t w_tap_col, float* KILN_RESTRICT c, int64_t c_block,
    const float* KILN_RESTRICT bias, const float* KILN_RESTRICT residual, int32_t act, float lo, float hi, int64_t twin,
    int last) {
  KILN_CONV8_FOR_TILE(KILN_CONV_TILE_LOAD)
#pragma GCC unroll 1
  for (int64_t ic = ic0; ic < ic1; ++ic) {
    /* The sub-tile's rows of the input block KILN_CONV_DATA_AHEAD ahead (see KILN_CONV_PREFETCH_DATA). */
    if (ic + KILN_CONV_DATA_AHEAD < ic1)
      for (int64_t ty = 0; ty < kh; ++ty)
        for (int64_t x = 0; x < rows * step + (kw - 1) * d_tap_col; x += 16)
          _mm_prefetch((const char*)(d + (ic + KILN_CONV_DATA_AHEAD) * d_block + ty * d_tap_row + x), _MM_HINT_T0);
#pragma GCC unroll 1
    for (int64_t ty = 0; ty < kh; ++ty)
#pragma GCC unroll 1
      for (int64_t tx = 0; tx < kw; ++tx) {
        const float* KILN_RESTRICT dc = d + ic * d_block + ty * d_tap_row + tx * d_tap_col;
        const float* KILN_RESTRICT wc = w + ic * w_in + ty * w_tap_row + tx * w_tap_col;
        /* Opaque to the optimizer, so that every load of the step is a constant offset from these
         * two registers: GCC's induction variables otherwise took one pointer per broadcast,
         * kept them on the stack and added to each in memory per input block (RegNetY's 7 x 1
         * tiles at 26% of peak, 84% cache-resident without). */
        __asm__("" : "+r"(dc), "+r"(wc));
        if (lanes == 8) {
#pragma GCC unroll 8
          for (int64_t i = 0; i < 8; ++i) KILN_CONV8_STEP(i)
        } else {
#pragma GCC unroll 1
          for (int64_t i = 0; i < lanes; ++i) KILN_CONV8_STEP(i)
        }
      }
  }
  if (last) {
    KILN_CONV8_FOR_TILE(KILN_CONV_TILE_STORE)
  } else {
    KILN_CONV8_FOR_TILE(KILN_CONV8_STORE_PARTIAL)
  }
}

/* The blocks of a sub-tile: a four-block tile's pairs where its positions split into sub-tiles of
 * 4.5 or more on average (10-12 accumulators, two weight registers and no memory operands: 12 x 4
 * cache-resident at 98 GFLOP/s as 6 x 2 sub-tiles, at 76 as 3 x 4; 7 x 4 as 4 + 3 x 2 at 65,
 * as 3 + 2 + 2 x 4 at 74), else all of the tile's blocks. */
static inline __attribute__((always_inline)) int64_t kiln_conv8_sub_blocks(int64_t rows, int64_t blocks) {
  return blocks == 4 && 2 * rows >= 9 * ((rows + 5) / 6) ? 2 : blocks;
}

static inline __attribute__((always_inline)) int32_t kiln_conv_nchwc_vec_ep_f32(
    int64_t rows, int64_t blocks, int64_t stride, int64_t cb, int64_t lanes, int64_t kh, int64_t kw,
    const float* KILN_RESTRICT d, int64_t d_block, int64_t d_tap_row, int64_t d_tap_col, const float* KILN_RESTRICT w,
    int64_t w_in, int64_t w_out, int64_t w_tap_row, int64_t w_tap_col, float* KILN_RESTRICT c, int64_t c_block,
    const float* KILN_RESTRICT bias, const float* KILN_RESTRICT residual, int32_t act, float lo, float hi,
    int64_t twin) {
  const int64_t sub_blocks = kiln_conv8_sub_blocks(rows, blocks);
  const int64_t step = lanes * stride, max_sub = 12 / sub_blocks;
  /* Sub-tiles as equal in size as they divide: a short last one would wait on the latency of its
   * few accumulators' multiply-adds (14 x 1 as 12 + 2: 62 GFLOP/s cache-resident, as 7 + 7: 82). */
  const int64_t subs = (rows + max_sub - 1) / max_sub, sub = rows / subs, wider = rows % subs;
  const int64_t per_block = blocks * kh * kw * lanes * 8 * (int64_t)sizeof(float);
  const int64_t chunk = per_block >= KILN_CONV8_CHUNK_BYTES ? 1 : KILN_CONV8_CHUNK_BYTES / per_block;
  for (int64_t ic0 = 0; ic0 < cb; ic0 += chunk) {
    const int64_t ic1 = cb - ic0 > chunk ? ic0 + chunk : cb;
    const int last = ic1 == cb;
    for (int64_t b0 = 0; b0 < blocks; b0 += sub_blocks) {
      const float* KILN_RESTRICT w_b0 = w + b0 * w_out;
      float* KILN_RESTRICT c_b0 = c + b0 * c_block;
      const float* KILN_RESTRICT start = ic0 == 0 && bias ? bias + b0 * 8 : 0;
      const float* KILN_RESTRICT residual_b0 = residual ? residual + b0 * c_block : 0;
      int64_t p = 0;
      /* Two calls, each on a constant position count once inlined: `wider` of sub + 1, then sub. */
      for (int64_t k = 0; k < wider; ++k, p += sub + 1)
        kiln_conv8_subtile(sub + 1, sub_blocks, step, ic0, ic1, lanes, kh, kw, d + p * step, d_block, d_tap_row,
                           d_tap_col, w_b0, w_in, w_out, w_tap_row, w_tap_col, c_b0 + p * 8, c_block, start,
                           residual_b0 ? residual_b0 + p * 8 : 0, act, lo, hi, twin, last);
      for (; p < rows; p += sub)
        kiln_conv8_subtile(sub, sub_blocks, step, ic0, ic1, lanes, kh, kw, d + p * step, d_block, d_tap_row, d_tap_col,
                           w_b0, w_in, w_out, w_tap_row, w_tap_col, c_b0 + p * 8, c_block, start,
                           residual_b0 ? residual_b0 + p * 8 : 0, act, lo, hi, twin, last);
    }
  }
  return 0;
}
#else
static inline __attribute__((always_inline)) int32_t kiln_conv_nchwc_vec_ep_f32(
    int64_t rows, int64_t blocks, int64_t stride, int64_t cb, int64_t lanes, int64_t kh, int64_t kw,
    const float* KILN_RESTRICT d, int64_t d_block, int64_t d_tap_row, int64_t d_tap_col, const float* KILN_RESTRICT w,
    int64_t w_in, int64_t w_out, int64_t w_tap_row, int64_t w_tap_col, float* KILN_RESTRICT c, int64_t c_block,
    const float* KILN_RESTRICT bias, const float* KILN_RESTRICT residual, int32_t act, float lo, float hi,
    int64_t twin) {
  const int64_t step = lanes * stride;
  KILN_CONV_TILE_FOR_TILE(KILN_CONV_TILE_LOAD)
  if (residual) {
    KILN_CONV_TILE_FOR_TILE(KILN_CONV_TILE_PREFETCH_RESIDUAL)
  }
  /* The taps stay loops: unrolled with one input channel per block (a stem's NCHW1c), GCC
   * reuses the broadcast of a position that a later tap reads again (stride 2, 3x3) and spills
   * the accumulators to keep it (MobileNetV2's stem: 39% -> 77% of peak as loops). */
#pragma GCC unroll 1
  for (int64_t ic = 0; ic < cb; ++ic)
#pragma GCC unroll 1
    for (int64_t ty = 0; ty < kh; ++ty)
#pragma GCC unroll 1
      for (int64_t tx = 0; tx < kw; ++tx) {
        const float* KILN_RESTRICT dc = d + ic * d_block + ty * d_tap_row + tx * d_tap_col;
        const float* KILN_RESTRICT wc = w + ic * w_in + ty * w_tap_row + tx * w_tap_col;
        for (int64_t i = 0; i < lanes; ++i) {
          /* Blocks past `blocks` reuse block 0's vector: their FMAs are dead code. */
          const kiln_dw_vec w0 = KILN_DW_LOAD(wc + i * KILN_DW_VL);
          const kiln_dw_vec w1 = blocks > 1 ? KILN_DW_LOAD(wc + w_out + i * KILN_DW_VL) : w0;
          const kiln_dw_vec w2 = blocks > 2 ? KILN_DW_LOAD(wc + 2 * w_out + i * KILN_DW_VL) : w0;
          const kiln_dw_vec w3 = blocks > 3 ? KILN_DW_LOAD(wc + 3 * w_out + i * KILN_DW_VL) : w0;
          KILN_CONV_TILE_FOR_TILE(KILN_CONV_TILE_FMA)
          KILN_CONV_PREFETCH_WEIGHTS(wc + i * KILN_DW_VL + KILN_CONV_PREFETCH_AHEAD, i)
          KILN_CONV_PREFETCH_DATA(dc + KILN_CONV_DATA_AHEAD * d_block, i)
        }
      }
  KILN_CONV_TILE_FOR_TILE(KILN_CONV_TILE_STORE)
  return 0;
}
#endif /* KILN_DW_VL == 8 */
#endif /* KILN_DW_VL */

/* Any output block width y, one y-lane accumulator at a time, left to the compiler: the tile
 * where the instruction set has no vector of y lanes. */
static inline int32_t kiln_conv_nchwc_any_ep_f32(int64_t rows, int64_t blocks, int64_t stride, int64_t cb,
                                                 int64_t lanes, int64_t y, int64_t kh, int64_t kw,
                                                 const float* KILN_RESTRICT d, int64_t d_block, int64_t d_tap_row,
                                                 int64_t d_tap_col, const float* KILN_RESTRICT w, int64_t w_in,
                                                 int64_t w_out, int64_t w_tap_row, int64_t w_tap_col,
                                                 float* KILN_RESTRICT c, int64_t c_block,
                                                 const float* KILN_RESTRICT bias, const float* KILN_RESTRICT residual,
                                                 int32_t act, float lo, float hi, int64_t twin) {
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t r = 0; r < rows; ++r) {
      float acc[16];
      float* KILN_RESTRICT out = c + b * c_block + r * y;
      const float* KILN_RESTRICT dr = d + r * lanes * stride;
      for (int64_t l = 0; l < y; ++l) acc[l] = !bias ? out[l] : bias[b * y + l];
      for (int64_t ic = 0; ic < cb; ++ic)
        for (int64_t ty = 0; ty < kh; ++ty)
          for (int64_t tx = 0; tx < kw; ++tx)
            for (int64_t i = 0; i < lanes; ++i) {
              const float v = dr[ic * d_block + ty * d_tap_row + tx * d_tap_col + i];
              const float* KILN_RESTRICT wv = w + b * w_out + ic * w_in + ty * w_tap_row + tx * w_tap_col + i * y;
              for (int64_t l = 0; l < y; ++l) acc[l] += v * wv[l];
            }
      for (int64_t l = 0; l < y; ++l) {
        if (residual) acc[l] += residual[b * c_block + r * y + l];
        out[l] = kiln_activate_f32(act, lo, hi, acc[l]);
        if (twin) out[twin + l] = out[l];
      }
    }
  return 0;
}

/* y (<= 16) is the output block width; the register tile serves y == KILN_DW_VL. */
static inline __attribute__((always_inline)) int32_t kiln_conv_nchwc_ep_f32(
    int64_t rows, int64_t blocks, int64_t stride, int64_t cb, int64_t lanes, int64_t y, int64_t kh, int64_t kw,
    const float* KILN_RESTRICT d, int64_t d_block, int64_t d_tap_row, int64_t d_tap_col, const float* KILN_RESTRICT w,
    int64_t w_in, int64_t w_out, int64_t w_tap_row, int64_t w_tap_col, float* KILN_RESTRICT c, int64_t c_block,
    const float* KILN_RESTRICT bias, const float* KILN_RESTRICT residual, int32_t act, float lo, float hi,
    int64_t twin) {
#if defined(KILN_DW_VL)
  if (y == KILN_DW_VL)
    return kiln_conv_nchwc_vec_ep_f32(rows, blocks, stride, cb, lanes, kh, kw, d, d_block, d_tap_row, d_tap_col, w,
                                      w_in, w_out, w_tap_row, w_tap_col, c, c_block, bias, residual, act, lo, hi, twin);
#endif
  return kiln_conv_nchwc_any_ep_f32(rows, blocks, stride, cb, lanes, y, kh, kw, d, d_block, d_tap_row, d_tap_col, w,
                                    w_in, w_out, w_tap_row, w_tap_col, c, c_block, bias, residual, act, lo, hi, twin);
}

/* The tile without an epilogue: accumulates into C. */
static inline __attribute__((always_inline)) int32_t kiln_conv_nchwc_f32(
    int64_t rows, int64_t blocks, int64_t stride, int64_t cb, int64_t lanes, int64_t y, int64_t kh, int64_t kw,
    const float* KILN_RESTRICT d, int64_t d_block, int64_t d_tap_row, int64_t d_tap_col, const float* KILN_RESTRICT w,
    int64_t w_in, int64_t w_out, int64_t w_tap_row, int64_t w_tap_col, float* KILN_RESTRICT c, int64_t c_block) {
  return kiln_conv_nchwc_ep_f32(rows, blocks, stride, cb, lanes, y, kh, kw, d, d_block, d_tap_row, d_tap_col, w, w_in,
                                w_out, w_tap_row, w_tap_col, c, c_block, 0, 0, KILN_ACT_NONE, 0.0f, 0.0f, 0);
}

/* ---- Depthwise convolution rows (blocked layout) ----------------------------------------------
 * kiln_dwconv_row_f32 adds one output row of one channel block of a depthwise convolution to
 * `out` (ow positions x `lanes` channels, contiguous): out[x][c] += sum over taps (r, q) of
 * plane[row0 + r*dh][col0 + x*sw + q*dw][c] * weight[r][q][c], where plane is one channel block
 * of the input (h rows of `row_stride` floats, `lanes` floats per column) and weight is
 * (kh, kw, lanes) contiguous. Taps outside the plane read zero: the kernel clamps the tap rows
 * to the plane once per row and the tap columns of the few border positions, so no padded copy
 * of the input is made. The interior positions run in register tiles of KILN_DW_TILE positions
 * by one vector of channels, each tap's weight vector loaded once per tile. Returns 0.
 * kiln_dwconv_row_ep_f32 is the same row with an epilogue in registers: each position starts at
 * init[c] (lanes floats) instead of out's values and is stored through `act` (KILN_ACT_*, with
 * lo, hi), so the row is written once (kiln_pwdw_f32's output rows). */
#define KILN_DW_TILE 12

/* The tap rows r in [*r0, *r1) whose input row row0 + r*dh lies in [0, h). */
static inline void kiln_dw_tap_rows(int64_t row0, int64_t kh, int64_t dh, int64_t h, int64_t* r0, int64_t* r1) {
  int64_t lo = row0 < 0 ? (-row0 + dh - 1) / dh : 0;
  int64_t hi = row0 >= h ? 0 : (h - 1 - row0) / dh + 1;
  *r0 = lo;
  *r1 = hi < kh ? hi : kh;
}

/* One position, any lanes: the tap rows [0, rows) start at `in_rows` (weight at their first
 * row), tap columns outside [0, w) skipped (the border positions and the portable version). */
static inline void kiln_dw_position(int64_t lanes, int64_t rows, int64_t kw, int64_t col, int64_t dw, int64_t w,
                                    const float* KILN_RESTRICT in_rows, int64_t row_step,
                                    const float* KILN_RESTRICT weight, float* KILN_RESTRICT out) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t q = 0; q < kw; ++q) {
      const int64_t c = col + q * dw;
      if (c < 0 || c >= w) continue;
      const float* in = in_rows + r * row_step + c * lanes;
      const float* wv = weight + (r * kw + q) * lanes;
      for (int64_t l = 0; l < lanes; ++l) out[l] += in[l] * wv[l];
    }
}

#if defined(KILN_DW_VL)
/* `positions` consecutive interior positions (every tap inside the plane) of one vector of
 * channels: accumulators in registers, positions unrolled by the constant callers give. */
static inline __attribute__((always_inline)) void kiln_dw_tile(
    int64_t positions, int64_t rows, int64_t kw, const float* KILN_RESTRICT in, int64_t row_step, int64_t position_step,
    int64_t tap_step, const float* KILN_RESTRICT weight, int64_t lanes, float* KILN_RESTRICT out,
    const float* KILN_RESTRICT init, int32_t act, float lo, float hi) {
  kiln_dw_vec acc[KILN_DW_TILE];
  for (int64_t i = 0; i < positions; ++i) acc[i] = KILN_DW_LOAD(init ? init : out + i * lanes);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = in + r * row_step;
    for (int64_t q = 0; q < kw; ++q) {
      const kiln_dw_vec wv = KILN_DW_LOAD(weight + (r * kw + q) * lanes);
      const float* tap = row + q * tap_step;
      for (int64_t i = 0; i < positions; ++i) acc[i] = KILN_DW_FMA(KILN_DW_LOAD(tap + i * position_step), wv, acc[i]);
    }
  }
  for (int64_t i = 0; i < positions; ++i) KILN_DW_STORE(out + i * lanes, kiln_activate_vec(act, lo, hi, acc[i]));
}

/* One border position of one vector of channels: the tap columns clamped to [0, w). */
static inline void kiln_dw_border(int64_t rows, int64_t kw, int64_t col, int64_t dw, int64_t w,
                                  const float* KILN_RESTRICT in_rows, int64_t row_step,
                                  const float* KILN_RESTRICT weight, int64_t lanes, float* KILN_RESTRICT out,
                                  const float* KILN_RESTRICT init, int32_t act, float lo, float hi) {
  const int64_t q0 = col < 0 ? (-col + dw - 1) / dw : 0;
  const int64_t q_end = col >= w ? 0 : (w - 1 - col) / dw + 1;
  const int64_t q1 = q_end < kw ? q_end : kw;
  kiln_dw_vec acc = KILN_DW_LOAD(init ? init : out);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t q = q0; q < q1; ++q)
      acc = KILN_DW_FMA(KILN_DW_LOAD(in_rows + r * row_step + (col + q * dw) * lanes),
                        KILN_DW_LOAD(weight + (r * kw + q) * lanes), acc);
  KILN_DW_STORE(out, kiln_activate_vec(act, lo, hi, acc));
}
#endif

/* The row with or without the epilogue (init NULL: accumulate into out, act KILN_ACT_NONE). */
static inline __attribute__((always_inline)) int32_t kiln_dwconv_row_any(
    int64_t lanes, int64_t ow, int64_t kh, int64_t kw, int64_t sw, int64_t dh, int64_t dw,
    const float* KILN_RESTRICT plane, int64_t h, int64_t w, int64_t row_stride, int64_t row0, int64_t col0,
    const float* KILN_RESTRICT weight, float* KILN_RESTRICT out, const float* KILN_RESTRICT init, int32_t act, float lo,
    float hi) {
  int64_t r0, r1;
  kiln_dw_tap_rows(row0, kh, dh, h, &r0, &r1);
  if (r0 >= r1) { /* every tap row outside the plane: out as it is, or the epilogue of init alone */
    if (!init) return 0;
    r0 = r1 = 0;
  }
  const int64_t rows = r1 - r0, row_step = dh * row_stride;
  const float* in_rows = rows ? plane + (row0 + r0 * dh) * row_stride : plane;
  const float* wgt = weight + r0 * kw * lanes;
  /* Interior positions [x0, x1): col0 + x*sw >= 0 and col0 + x*sw + (kw-1)*dw < w. */
  int64_t x0 = col0 < 0 ? (-col0 + sw - 1) / sw : 0;
  const int64_t last = w - 1 - (kw - 1) * dw - col0;
  int64_t x1 = last < 0 ? 0 : last / sw + 1;
  if (x1 > ow) x1 = ow;
  if (x0 > x1) x0 = x1;
#if defined(KILN_DW_VL)
  if (lanes % KILN_DW_VL == 0) {
    for (int64_t v = 0; v < lanes; v += KILN_DW_VL) {
      const float* KILN_RESTRICT init_v = init ? init + v : 0;
      for (int64_t i = 0; i < x0; ++i)
        kiln_dw_border(rows, kw, col0 + i * sw, dw, w, in_rows + v, row_step, wgt + v, lanes, out + i * lanes + v,
                       init_v, act, lo, hi);
      for (int64_t i = x1; i < ow; ++i)
        kiln_dw_border(rows, kw, col0 + i * sw, dw, w, in_rows + v, row_step, wgt + v, lanes, out + i * lanes + v,
                       init_v, act, lo, hi);
      int64_t i = x0;
#define KILN_DW_TILES(P)                                                                                          \
  for (; i + (P) <= x1; i += (P))                                                                                 \
    kiln_dw_tile((P), rows, kw, in_rows + (col0 + i * sw) * lanes + v, row_step, sw * lanes, dw * lanes, wgt + v, \
                 lanes, out + i * lanes + v, init_v, act, lo, hi);
      KILN_DW_TILES(KILN_DW_TILE)
      KILN_DW_TILES(4)
      KILN_DW_TILES(1)
#undef KILN_DW_TILES
    }
    return 0;
  }
#endif
  for (int64_t x = 0; x < ow; ++x) {
    float* KILN_RESTRICT position = out + x * lanes;
    if (init)
      for (int64_t l = 0; l < lanes; ++l) position[l] = init[l];
    kiln_dw_position(lanes, rows, kw, col0 + x * sw, dw, w, in_rows, row_step, wgt, position);
    if (act != KILN_ACT_NONE)
      for (int64_t l = 0; l < lanes; ++l) position[l] = kiln_activate_f32(act, lo, hi, position[l]);
  }
  return 0;
}

static inline int32_t kiln_dwconv_row_f32(int64_t lanes, int64_t ow, int64_t kh, int64_t kw, int64_t sw, int64_t dh,
                                          int64_t dw, const float* KILN_RESTRICT plane, int64_t h, int64_t w,
                                          int64_t row_stride, int64_t row0, int64_t col0,
                                          const float* KILN_RESTRICT weight, float* KILN_RESTRICT out) {
  return kiln_dwconv_row_any(lanes, ow, kh, kw, sw, dh, dw, plane, h, w, row_stride, row0, col0, weight, out, 0,
                             KILN_ACT_NONE, 0.0f, 0.0f);
}

static inline int32_t kiln_dwconv_row_ep_f32(int64_t lanes, int64_t ow, int64_t kh, int64_t kw, int64_t sw, int64_t dh,
                                             int64_t dw, const float* KILN_RESTRICT plane, int64_t h, int64_t w,
                                             int64_t row_stride, int64_t row0, int64_t col0,
                                             const float* KILN_RESTRICT weight, float* KILN_RESTRICT out,
                                             const float* KILN_RESTRICT init, int32_t act, float lo, float hi) {
  return kiln_dwconv_row_any(lanes, ow, kh, kw, sw, dh, dw, plane, h, w, row_stride, row0, col0, weight, out, init, act,
                             lo, hi);
}

/* ---- Pointwise then depthwise convolution (src/op/nn/conv2d_pointwise_depthwise.cc) ----------
 * kiln_pwdw_f32 computes output rows [y0, y1) of `nb` channel blocks (16 channels each) of one
 * image of
 *   e   = act_pw(conv1x1(data, pw_weight) + pw_bias)      (the expanded tensor, never stored)
 *   out = act_dw(depthwise(e, dw_weight) + dw_bias)
 * data NCHW{lanes}c (cb blocks of h x w), pw_weight OIHW{lanes}i16o from the call's first block
 * (blocks of cb * lanes * 16 floats), dw_weight (kh, kw, 16) per block, out rows of ow x 16 floats,
 * blocks `out_block` floats apart. An inverted-residual block's expanded tensor is the largest of
 * the network (MobileNetV2: 4.8 MB at 112x112) and is read once by the depthwise convolution:
 * here its rows are computed into a ring of `span` = (kh-1)*dh + 1 rows per block, each kept
 * twice (slots s and s + span) so that the rows one output row reads are always contiguous, in
 * L1/L2, and the depthwise row kernel reads them in place. The pointwise rows run the register
 * tile kiln_conv_nchwc_ep_f32 of tile_rows positions (a divisor of w) x tile_blocks blocks (a
 * divisor of nb), which the generated call passes as literals like the activations; both
 * convolutions' bias and activation are applied in registers, so each output row is written once.
 * dw_bias may be NULL (no bias). act: KILN_ACT_NONE, KILN_ACT_CLAMP (to [lo, hi], NaN kept, as
 * clip), KILN_ACT_SWISH (x * sigmoid(x)). Returns 0, or -1 when the ring cannot be allocated. */
/* Expanded row `row` of the call's blocks into ring slots row % span and row % span + span: the
 * tile starts at the bias and stores the activated sums to both slots. */
static inline __attribute__((always_inline)) int32_t kiln_pwdw_expand_row(
    int64_t tile_rows, int64_t tile_blocks, int64_t cb, int64_t h, int64_t w, int64_t lanes, int64_t nb, int64_t span,
    int64_t row, const float* KILN_RESTRICT data, const float* KILN_RESTRICT pw_weight,
    const float* KILN_RESTRICT pw_bias, int32_t pw_act, float pw_lo, float pw_hi, float* KILN_RESTRICT ring) {
  const int64_t slot_floats = w * 16, block_floats = 2 * span * slot_floats;
  float* KILN_RESTRICT first = ring + (row % span) * slot_floats;
  for (int64_t b0 = 0; b0 < nb; b0 += tile_blocks)
    for (int64_t x0 = 0; x0 < w; x0 += tile_rows)
      kiln_conv_nchwc_ep_f32(tile_rows, tile_blocks, 1, cb, lanes, 16, 1, 1, data + (row * w + x0) * lanes,
                             h * w * lanes, 0, 0, pw_weight + b0 * cb * lanes * 16, lanes * 16, cb * lanes * 16, 0, 0,
                             first + b0 * block_floats + x0 * 16, block_floats, pw_bias + b0 * 16, 0, pw_act, pw_lo,
                             pw_hi, span * slot_floats);
  return 0;
}

static inline __attribute__((always_inline)) int32_t kiln_pwdw_f32(
    int64_t tile_rows, int64_t tile_blocks, int64_t cb, int64_t h, int64_t w, int64_t lanes, int64_t kh, int64_t kw,
    int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t pad_top, int64_t pad_left, int64_t ow, int64_t nb,
    int64_t y0, int64_t y1, const float* KILN_RESTRICT data, const float* KILN_RESTRICT pw_weight,
    const float* KILN_RESTRICT pw_bias, int32_t pw_act, float pw_lo, float pw_hi, const float* KILN_RESTRICT dw_weight,
    const float* KILN_RESTRICT dw_bias, int32_t dw_act, float dw_lo, float dw_hi, float* KILN_RESTRICT out,
    int64_t out_block) {
  static const float zeros[16] = {0};
  const int64_t span = (kh - 1) * dh + 1, slot_floats = w * 16, block_floats = 2 * span * slot_floats;
  float* ring = (float*)kiln_scratch_alloc(nb * block_floats * (int64_t)sizeof(float));
  if (!ring) return -1;
  int64_t next = 0; /* the first expanded row not computed yet */
  for (int64_t y = y0; y < y1; ++y) {
    const int64_t top = y * sh - pad_top;
    const int64_t lo = top < 0 ? 0 : top, hi = top + span < h ? top + span : h;
    if (next < lo) next = lo;
    for (; next < hi; ++next)
      kiln_pwdw_expand_row(tile_rows, tile_blocks, cb, h, w, lanes, nb, span, next, data, pw_weight, pw_bias, pw_act,
                           pw_lo, pw_hi, ring);
    /* lo >= hi (no tap row inside the plane): the row kernel sees no rows and writes the epilogue
     * of the bias alone. */
    for (int64_t b = 0; b < nb; ++b)
      kiln_dwconv_row_ep_f32(16, ow, kh, kw, sw, dh, dw, ring + b * block_floats + (lo % span) * slot_floats,
                             lo < hi ? hi - lo : 0, w, slot_floats, top - lo, -pad_left, dw_weight + b * kh * kw * 16,
                             out + b * out_block + (y - y0) * ow * 16, dw_bias ? dw_bias + b * 16 : zeros, dw_act,
                             dw_lo, dw_hi);
  }
  kiln_scratch_free(ring);
  return 0;
}

#endif /* KILN_RUNTIME_MICROKERNELS_H_ */
