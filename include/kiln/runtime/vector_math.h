/* Math functions for generated code that the C compiler can vectorize (glibc's expf is a
 * scalar call in a loop). Plain C, static inline, usable from C and C++.
 *
 * kiln_expf: exp for float within 2 ulp of the correctly rounded value over the whole
 * normal range, and within one unit of 2^-149 of it below (subnormals, as expf); inf, -inf
 * and NaN behave as in expf. Method: exp(x) = 2^n * exp(r) with n = round(x / ln 2) and
 * r = x - n ln 2 split in two parts (Cody and Waite), exp(r) by a degree-6 polynomial on
 * |r| <= ln(2) / 2, and 2^n applied in two halves so that no exponent field overflows. Branch
 * and select free, with explicit FMAs (softmax runs it on every score of an attention): x is
 * clamped to [-104, 89], where exp rounds to 0 below and overflows to inf above, and a NaN
 * passes the clamp (its comparisons are false) and the arithmetic. */
#ifndef KILN_RUNTIME_VECTOR_MATH_H_
#define KILN_RUNTIME_VECTOR_MATH_H_

#include <math.h>
#include <stdint.h>
#include <string.h>

/* a * b + c, fused where the target has an FMA instruction (one rounding), else two roundings:
 * the callers' split constants keep their results within a few ulp either way. */
#ifdef FP_FAST_FMAF
#define KILN_FMAF(a, b, c) fmaf((a), (b), (c))
#else
#define KILN_FMAF(a, b, c) ((a) * (b) + (c))
#endif

/* 2^n for n in [-126, 127]; other n give other bit patterns (modulo 2^32), no undefined shift. */
static inline float kiln_pow2i_f32(int32_t n) {
  const uint32_t bits = ((uint32_t)n + 127u) << 23;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* exp(x - n ln 2) for n = round(x / ln 2), |x - n ln 2| <= ln(2) / 2: the remainder r in two
 * parts (Cody and Waite; n * 0.693359375 is exact) and a degree-6 polynomial, 1 + r + r^2 p(r). */
static inline float kiln_exp_remainder_f32(float x, float n) {
  const float r = KILN_FMAF(n, 2.12194440e-4f, KILN_FMAF(n, -0.693359375f, x));
  float p = 1.9875691500e-4f;
  p = KILN_FMAF(p, r, 1.3981999507e-3f);
  p = KILN_FMAF(p, r, 8.3334519073e-3f);
  p = KILN_FMAF(p, r, 4.1665795894e-2f);
  p = KILN_FMAF(p, r, 1.6666665459e-1f);
  p = KILN_FMAF(p, r, 5.0000001201e-1f);
  return KILN_FMAF(p, r * r, r) + 1.0f;
}

static inline float kiln_expf(float x) {
  const float above_min = x < -104.0f ? -104.0f : x;
  const float xc = above_min > 89.0f ? 89.0f : above_min;
  /* n = round(xc / ln 2): adding 1.5 * 2^23 rounds, and leaves n in the low mantissa bits */
  const float shifted = KILN_FMAF(xc, 1.44269504088896341f, 12582912.0f);
  const float n = shifted - 12582912.0f;
  const float e = kiln_exp_remainder_f32(xc, n);
  uint32_t shifted_bits;
  memcpy(&shifted_bits, &shifted, sizeof shifted_bits);
  /* n itself (|n| <= 150): the mantissa bits of shifted less those of 1.5 * 2^23 */
  const int32_t ni = (int32_t)(shifted_bits - 0x4B400000u), half = ni >> 1;
  return e * kiln_pow2i_f32(half) * kiln_pow2i_f32(ni - half);
}

/* sigmoid for float, 1 / (1 + exp(-x)) within 3 ulp where the result is normal, in 18 vector
 * instructions and one division: it is the tail of every swish conv (x * sigmoid(x)), where its
 * instruction count is the kernel's time. exp(-x) = 2^n exp(r) with n = round(-x / ln 2), r in
 * two parts as in kiln_expf and exp(r) by a degree-6 polynomial in Horner form, fitted for the
 * relative error (one FMA a degree: no separate square and add). The one clamp is on |x| <= 87.33, with the sign put back,
 * because two clamps on x compile to a chain of mask operations: with it n is in [-126, 126],
 * so that 2^n is one scale from exponent bits, (n + 127) << 23, and adding 127 goes into the
 * rounding constant. Past the clamp the result is sigmoid(+-87.33): 1 above, 1.18e-38 (the
 * smallest normal float, never a subnormal that would slow later arithmetic) below, where the
 * exact value is smaller. +-inf clamp; a NaN passes the clamp (its comparison is false). */
static inline float kiln_sigmoidf(float x) {
  const float magnitude = fabsf(x);
  const float clamped = magnitude > 87.33f ? 87.33f : magnitude;
  const float t = -copysignf(clamped, x); /* exp(t) = exp(-x) */
  /* adding 1.5 * 2^23 rounds t / ln 2 to n and leaves n + 127 in the low mantissa bits */
  const float shifted = KILN_FMAF(t, 1.44269504088896341f, 12583039.0f);
  const float n = shifted - 12583039.0f;
  const float r = KILN_FMAF(n, 2.12194440e-4f, KILN_FMAF(n, -0.693359375f, t));
  float p = 1.38435594e-3f;
  p = KILN_FMAF(p, r, 8.37423652e-3f);
  p = KILN_FMAF(p, r, 4.1668009e-2f);
  p = KILN_FMAF(p, r, 1.66664302e-1f);
  p = KILN_FMAF(p, r, 4.9999994e-1f);
  p = KILN_FMAF(p, r, 1.0f);
  const float e = KILN_FMAF(p, r, 1.0f);
  uint32_t bits;
  memcpy(&bits, &shifted, sizeof bits);
  bits <<= 23; /* the exponent field of 2^n */
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  return 1.0f / KILN_FMAF(e, scale, 1.0f);
}

/* tanh for float, branch-free so that loops vectorize (recurrent cells call it per element
 * every step). Method of Cephes' tanhf: an odd polynomial below |x| = 0.625, where
 * 1 - 2 / (exp(2|x|) + 1) would cancel, and that formula above, with the sign restored; a
 * few ulp. NaN stays NaN; large |x| gives +-1 as exp overflows to inf. */
static inline float kiln_tanhf(float x) {
  const float a = x < 0.0f ? -x : x;
  const float s = x * x;
  const float small =
      ((((-5.70498872745e-3f * s + 2.06390887954e-2f) * s - 5.37397155531e-2f) * s + 1.33314422036e-1f) * s -
       3.33332819422e-1f) *
          s * x +
      x;
  const float large = 1.0f - 2.0f / (kiln_expf(2.0f * a) + 1.0f);
  const float signed_large = x < 0.0f ? -large : large;
  return x != x ? x : (a < 0.625f ? small : signed_large);
}

/* erf for float, branch-free so that loops vectorize (erf-GELU runs it on every output of the MLP's
 * first GEMM). The rational approximation of Eigen / XLA: x P(x^2) / Q(x^2) on x clamped to
 * [-4, 4], beyond which erf is +-1 in float; within 4e-7 relative of erf. NaN stays NaN. */
static inline float kiln_erff(float x) {
  const float xc = x > 4.0f ? 4.0f : (x < -4.0f ? -4.0f : x);
  const float s = xc * xc;
  float p = -2.72614225801306e-10f;
  p = p * s + 2.77068142495902e-08f;
  p = p * s - 2.10102402082508e-06f;
  p = p * s - 5.69250639462346e-05f;
  p = p * s - 7.34990630326855e-04f;
  p = p * s - 2.95459980854025e-03f;
  p = p * s - 1.60960333262415e-02f;
  float q = -1.45660718464996e-05f;
  q = q * s - 2.13374055278905e-04f;
  q = q * s - 1.68282697438203e-03f;
  q = q * s - 7.37332916720468e-03f;
  q = q * s - 1.42647390514189e-02f;
  return xc * p / q;
}

#endif /* KILN_RUNTIME_VECTOR_MATH_H_ */
