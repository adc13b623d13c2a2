// kiln_expf and kiln_tanhf (kiln/runtime/vector_math.h), the exp and tanh of generated float32
// code: within 2 ulp of the exactly rounded value, and the libm answers at the edges.
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
  EXPECT_EQ(kiln_sigmoidf(-200.0f), 0.0f);
  EXPECT_EQ(kiln_sigmoidf(200.0f), 1.0f);
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
