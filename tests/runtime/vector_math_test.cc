// kiln_expf, kiln_sigmoidf and kiln_tanhf (kiln/runtime/vector_math.h), the exp, sigmoid and tanh
// of generated float32 code: within 2 (sigmoid: 3) ulp of the exactly rounded value, and the libm
// answers at the edges.
#include "kiln/runtime/vector_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kiln {
namespace {

TEST(VectorMath, ExpWithinTwoUlpOverTheNormalRange) {
  for (int i = 0; i <= 2000000; ++i) {
    const float x = -87.0f + 175.5f * static_cast<float>(i) / 2000000.0f;
    const double exact = std::exp(static_cast<double>(x));
    const float got = kiln_expf(x);
    const double ulp = std::ldexp(1.0, std::ilogb(exact) - 23);
    ASSERT_LE(std::fabs(got - exact), 2 * ulp) << "x = " << x;
  }
}

TEST(VectorMath, ExpGivesSubnormalsBelowTheNormalRange) {
  const double unit = std::ldexp(1.0, -149);  // the smallest subnormal
  for (int i = 0; i <= 200000; ++i) {
    const float x = -104.0f + 17.0f * static_cast<float>(i) / 200000.0f;
    const double exact = std::exp(static_cast<double>(x));
    if (exact >= std::ldexp(1.0, -126)) break;
    ASSERT_LE(std::fabs(kiln_expf(x) - exact), unit) << "x = " << x;
  }
  EXPECT_GT(kiln_expf(-100.0f), 0.0f);  // 3.7e-44, not flushed
}

TEST(VectorMath, ExpEdges) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(kiln_expf(0.0f), 1.0f);
  EXPECT_EQ(kiln_expf(inf), inf);
  EXPECT_EQ(kiln_expf(-inf), 0.0f);
  EXPECT_EQ(kiln_expf(88.8f), inf);  // overflows, as expf
  EXPECT_GT(kiln_expf(88.7f), 1e38f);
  EXPECT_EQ(kiln_expf(-110.0f), 0.0f);
  EXPECT_TRUE(std::isnan(kiln_expf(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_NEAR(kiln_sigmoidf(0.0f), 0.5f, 1e-7f);
  EXPECT_EQ(kiln_sigmoidf(200.0f), 1.0f);
}

TEST(VectorMath, SigmoidWithinThreeUlpWhereNormal) {
  // Both signs out past the clamp at |x| = 87.33, dense near zero; below it (where the exact
  // value is under 1.18e-38) the result is sigmoid(-87.33), the smallest normal float.
  for (int i = -2000000; i <= 2000000; ++i) {
    const double t = static_cast<double>(i) / 2000000.0;
    const float x = static_cast<float>(t * t * t * 100.0);
    const double exact = 1.0 / (1.0 + std::exp(-static_cast<double>(x)));
    const float got = kiln_sigmoidf(x);
    const double ulp = std::ldexp(1.0, std::ilogb(exact) - 23);
    if (x < -87.33f)
      ASSERT_EQ(got, kiln_sigmoidf(-87.33f)) << "x = " << x;
    else
      ASSERT_LE(std::fabs(got - exact), 3 * ulp) << "x = " << x;
  }
}

TEST(VectorMath, SigmoidEdges) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(kiln_sigmoidf(0.0f), 0.5f);
  EXPECT_EQ(kiln_sigmoidf(inf), 1.0f);
  const float smallest_normal = std::numeric_limits<float>::min();
  // The clamp at |x| = 87.33: 1 above, the smallest normal float below, never a subnormal.
  EXPECT_EQ(kiln_sigmoidf(87.33f), 1.0f);
  EXPECT_GE(kiln_sigmoidf(-87.33f), smallest_normal);
  EXPECT_LT(kiln_sigmoidf(-87.33f), 1.01f * smallest_normal);
  EXPECT_EQ(kiln_sigmoidf(-inf), kiln_sigmoidf(-87.33f));
  EXPECT_EQ(kiln_sigmoidf(-200.0f), kiln_sigmoidf(-87.33f));
  EXPECT_EQ(kiln_sigmoidf(1e30f), 1.0f);
  EXPECT_EQ(kiln_sigmoidf(-1e30f), kiln_sigmoidf(-87.33f));
  EXPECT_TRUE(std::isnan(kiln_sigmoidf(std::numeric_limits<float>::quiet_NaN())));
}

TEST(VectorMath, TanhWithinTwoUlpIncludingNearZero) {
  for (int i = -2000000; i <= 2000000; ++i) {
    // Dense near zero, where 1 - 2 / (exp(2x) + 1) would cancel, and out to where tanh is 1.
    const double t = static_cast<double>(i) / 2000000.0;
    const float x = static_cast<float>(t * t * t * 12.0);
    const double exact = std::tanh(static_cast<double>(x));
    const float got = kiln_tanhf(x);
    const double ulp = exact == 0 ? std::numeric_limits<float>::denorm_min() : std::ldexp(1.0, std::ilogb(exact) - 23);
    ASSERT_LE(std::fabs(got - exact), 2 * ulp) << "x = " << x;
  }
}

TEST(VectorMath, TanhEdges) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(kiln_tanhf(0.0f), 0.0f);
  EXPECT_EQ(kiln_tanhf(inf), 1.0f);
  EXPECT_EQ(kiln_tanhf(-inf), -1.0f);
  EXPECT_EQ(kiln_tanhf(100.0f), 1.0f);
  EXPECT_EQ(kiln_tanhf(-100.0f), -1.0f);
  EXPECT_EQ(kiln_tanhf(1e-30f), 1e-30f);
  EXPECT_TRUE(std::isnan(kiln_tanhf(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
}  // namespace kiln
