/* Math functions for generated code that the C compiler can vectorize (glibc's expf is a
 * scalar call in a loop). Plain C, static inline, usable from C and C++.
 *
 * kiln_expf: exp for float within 2 ulp of the correctly rounded value over the whole
 * normal range; results below FLT_MIN flush to 0 (the reference kernels' std::exp gives
 * subnormals there: an absolute difference below 1.2e-38). inf, -inf and NaN behave as in
 * expf. Method: exp(x) = 2^n * exp(r) with n = round(x / ln 2) and r = x - n ln 2 split in
 * two parts (Cody and Waite), exp(r) by a degree-6 polynomial on |r| <= ln(2) / 2, and 2^n
 * applied in two halves so that no exponent field overflows. */
#ifndef KILN_RUNTIME_VECTOR_MATH_H_
#define KILN_RUNTIME_VECTOR_MATH_H_

#include <stdint.h>
#include <string.h>

static inline float kiln_pow2i_f32(int32_t n) {
  const int32_t bits = (n + 127) << 23;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline float kiln_expf(float x) {
  const float kMax = 88.72283935546875f;   /* largest x with a finite exp(x) */
  const float kMin = -87.33654022216797f;  /* smallest x with a normal exp(x) */
  const float xc = x > kMax ? kMax : (x < kMin ? kMin : x);
  /* round to nearest by adding and subtracting 1.5 * 2^23 */
  const float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = (xc - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = (p * r) * r + r + 1.0f;
  const int32_t ni = (int32_t)n, half = ni >> 1;
  const float y = e * kiln_pow2i_f32(half) * kiln_pow2i_f32(ni - half);
  const float inf = 1.0f / 0.0f;
  return x != x ? x : (x > kMax ? inf : (x < kMin ? 0.0f : y));
}

static inline float kiln_sigmoidf(float x) { return 1.0f / (1.0f + kiln_expf(-x)); }

#endif /* KILN_RUNTIME_VECTOR_MATH_H_ */
