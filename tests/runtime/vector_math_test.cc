// kiln_expf (kiln/runtime/vector_math.h), the exp of generated float32 code: within 2 ulp of
// the exactly rounded value over the normal range, and expf's answers at the edges.
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

}  // namespace
}  // namespace kiln
