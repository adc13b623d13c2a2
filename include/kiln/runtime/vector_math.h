/* Math functions for generated code that the C compiler can vectorize (glibc's expf is a
 * scalar call in a loop). Plain C, static inline, usable from C and C++. All are branch free and
 * write their polynomials with KILN_FMAF, since the kernels' -std=c11 contracts nothing. The
 * error bounds below were measured over every float against libm in double, with FMA
 * (-march=native) and without (-mno-fma). */
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

/* The argument reduction shared by the exps below: n = round(t / ln 2) by adding the constant
 * bias (1.5 * 2^23, plus an offset that the caller wants in the exponent field), and
 * r = t - n ln 2, |r| <= ln(2) / 2, in two parts (Cody and Waite: n * 0.693359375 is exact for
 * |n| < 2^15). Returns t / ln 2 + bias, whose low mantissa bits hold n + bias - 1.5 * 2^23. */
static inline float kiln_exp_reduce_f32(float t, float bias, float* r) {
  const float shifted = KILN_FMAF(t, 1.44269504088896341f, bias);
  const float n = shifted - bias;
  *r = KILN_FMAF(n, 2.12194440e-4f, KILN_FMAF(n, -0.693359375f, t));
  return shifted;
}

/* q(r) with exp(r) = 1 + r q(r) for |r| <= ln(2) / 2: a minimax fit for the relative error of
 * degree 6 in exp (3e-10 before rounding; one degree less costs 0.17 ulp in kiln_expf). */
static inline float kiln_exp_poly_f32(float r) {
  float p = 1.73789304e-4f;
  p = KILN_FMAF(p, r, 1.39410910e-3f);
  p = KILN_FMAF(p, r, 8.33858363e-3f);
  p = KILN_FMAF(p, r, 4.16663550e-2f);
  p = KILN_FMAF(p, r, 1.66666344e-1f);
  p = KILN_FMAF(p, r, 0.5f);
  return KILN_FMAF(p, r, 1.0f);
}

static inline uint32_t kiln_bits_f32(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return bits;
}

/* 2^(k - 127) for the k in the low 9 bits of bits (k in [1, 254]): they become the exponent field. */
static inline float kiln_exponent_f32(uint32_t bits) {
  bits <<= 23;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* x with its magnitude clamped to limit, the sign put back: the one clamp of the functions
 * below (two clamps on x compile to a chain of mask instructions). A NaN passes (its comparison
 * is false). */
static inline float kiln_clamp_magnitude_f32(float x, float limit) {
  const float magnitude = fabsf(x);
  return copysignf(magnitude > limit ? limit : magnitude, x);
}

/* exp for float: within 0.89 ulp of exp with FMA, 1.17 without, over the whole normal range,
 * and within one unit of 2^-149 below it (subnormals, as expf); inf -> inf, -inf -> 0,
 * NaN -> NaN. 2^n exp(r), r reduced as above and exp(r) = 1 + r q(r). The one clamp is on
 * |x| <= 104 with the sign put back (kiln_clamp_magnitude_f32):
 * exp rounds to 0 below -104 and overflows above 88.73. n in [-150, 150] does not fit one
 * exponent field, so 2^n is 2^floor(n / 2) 2^ceil(n / 2), two normal scales cut from the
 * same bits, 254 = 2 * 127 folded into the rounding constant: the first product is exact and
 * the second rounds once, also to a subnormal. A NaN passes the clamp (its comparison is false). */
static inline float kiln_expf(float x) {
  const float xc = kiln_clamp_magnitude_f32(x, 104.0f);
  float r;
  const uint32_t m = kiln_bits_f32(kiln_exp_reduce_f32(xc, 12583166.0f, &r)); /* n + 254 */
  const float e = KILN_FMAF(kiln_exp_poly_f32(r), r, 1.0f);
  return e * kiln_exponent_f32(m >> 1) * kiln_exponent_f32(m - (m >> 1));
}

/* 1 + exp(-x) for float, the denominator of sigmoid and swish below, in 17 vector instructions:
 * it is the tail of every swish conv, where its instruction count is the kernel's time.
 * exp(-x) = 2^n exp(r) as in kiln_expf, with its own degree-6 polynomial in pure Horner form (one
 * FMA a degree). The one clamp is on |x| <= 87.33, with the sign put back: with it n is in
 * [-126, 126], so that 2^n is one scale from exponent bits, (n + 127) << 23, and adding 127 goes
 * into the rounding constant. Past the clamp it is that of +-87.33: 1 above, 8.5e37 below (so
 * that 1 / it is the smallest normal float, never a subnormal that would slow later arithmetic).
 * +-inf clamp; a NaN passes the clamp (its comparison is false). */
static inline float kiln_sigmoid_denominator_f32(float x) {
  float r;
  const float shifted = kiln_exp_reduce_f32(-kiln_clamp_magnitude_f32(x, 87.33f), 12583039.0f, &r); /* exp(-x) */
  float p = 1.38435594e-3f;
  p = KILN_FMAF(p, r, 8.37423652e-3f);
  p = KILN_FMAF(p, r, 4.1668009e-2f);
  p = KILN_FMAF(p, r, 1.66664302e-1f);
  p = KILN_FMAF(p, r, 4.9999994e-1f);
  p = KILN_FMAF(p, r, 1.0f);
  const float e = KILN_FMAF(p, r, 1.0f);
  return KILN_FMAF(e, kiln_exponent_f32(kiln_bits_f32(shifted)), 1.0f);
}

/* sigmoid for float, 1 / (1 + exp(-x)), within 3 ulp where the result is normal. Below
 * x = -87.33 the result is sigmoid(-87.33), 1.18e-38, where the exact value is smaller. */
static inline float kiln_sigmoidf(float x) { return 1.0f / kiln_sigmoid_denominator_f32(x); }

/* swish (SiLU) for float, x sigmoid(x) = x / (1 + exp(-x)): one division where x * kiln_sigmoidf(x)
 * takes a division and a product (EfficientNet-B0 3.5% faster in whole at one thread, 2-core
 * Xeon). Within 3 ulp where the result is normal and x >= -87.33; below, x / 8.5e37 (of the sign of
 * x and at most |x| times the smallest normal float). +-inf -> +-inf, NaN -> NaN. */
static inline float kiln_swishf(float x) { return x / kiln_sigmoid_denominator_f32(x); }

/* tanh for float (recurrent cells call it per element every step): within 1.37 ulp with FMA,
 * 1.34 without. Below |x| = 0.625, where 1 - 2 / (exp(2|x|) + 1) would cancel, Cephes'
 * odd polynomial; above, that formula with an exp built as in kiln_sigmoid_denominator_f32: |x|
 * clamped to 9.5 (tanh rounds to 1 past 9.01), so n is in [0, 28] and 2^n is one scale,
 * exp(2|x|) + 1 one FMA;
 * the sign by copysign, for both branches (the polynomial's x + x p(x^2) x^2 would turn -0 into
 * +0). +-inf -> +-1; a NaN fails the comparisons and stays NaN. */
static inline float kiln_tanhf(float x) {
  const float a = fabsf(x);
  const float s = x * x;
  float p = -5.70498872745e-3f;
  p = KILN_FMAF(p, s, 2.06390887954e-2f);
  p = KILN_FMAF(p, s, -5.37397155531e-2f);
  p = KILN_FMAF(p, s, 1.33314422036e-1f);
  p = KILN_FMAF(p, s, -3.33332819422e-1f);
  const float small = KILN_FMAF(p * s, x, x);
  const float clamped = a > 9.5f ? 9.5f : a;
  float r;
  const float shifted = kiln_exp_reduce_f32(clamped + clamped, 12583039.0f, &r);
  const float e = KILN_FMAF(kiln_exp_poly_f32(r), r, 1.0f);
  const float large = 1.0f - 2.0f / KILN_FMAF(e, kiln_exponent_f32(kiln_bits_f32(shifted)), 1.0f);
  return copysignf(a < 0.625f ? small : large, x);
}

/* erf for float (erf-GELU runs it on every output of the MLP's first GEMM): the rational
 * approximation of Eigen / XLA, x P(x^2) / Q(x^2) on |x| clamped to 4 (erf is +-1 in float
 * beyond) with the sign put back, one clamp as in kiln_sigmoid_denominator_f32; x (P / Q) so
 * that no product goes subnormal before the division. Within 4.46e-7 of erf relative with FMA, 4.74e-7
 * without, where erf is normal. NaN stays NaN. */
static inline float kiln_erff(float x) {
  const float xc = kiln_clamp_magnitude_f32(x, 4.0f);
  const float s = xc * xc;
  float p = -2.72614225801306e-10f;
  p = KILN_FMAF(p, s, 2.77068142495902e-08f);
  p = KILN_FMAF(p, s, -2.10102402082508e-06f);
  p = KILN_FMAF(p, s, -5.69250639462346e-05f);
  p = KILN_FMAF(p, s, -7.34990630326855e-04f);
  p = KILN_FMAF(p, s, -2.95459980854025e-03f);
  p = KILN_FMAF(p, s, -1.60960333262415e-02f);
  float q = -1.45660718464996e-05f;
  q = KILN_FMAF(q, s, -2.13374055278905e-04f);
  q = KILN_FMAF(q, s, -1.68282697438203e-03f);
  q = KILN_FMAF(q, s, -7.37332916720468e-03f);
  q = KILN_FMAF(q, s, -1.42647390514189e-02f);
  return xc * (p / q);
}

#endif /* KILN_RUNTIME_VECTOR_MATH_H_ */
