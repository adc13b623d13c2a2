// random.uniform, random.normal, random.bernoulli, random.multinomial: types, determinism
// for a seed, and sample statistics within generous bounds.
#include <cmath>

#include "op_test_util.h"

namespace kiln::testing {
namespace {

double mean_of(const NDArray& a) {
  double sum = 0;
  for (int64_t i = 0; i < a.numel(); ++i) sum += a.at(i);
  return sum / static_cast<double>(a.numel());
}

double variance_of(const NDArray& a) {
  double m = mean_of(a), sum = 0;
  for (int64_t i = 0; i < a.numel(); ++i) sum += (a.at(i) - m) * (a.at(i) - m);
  return sum / static_cast<double>(a.numel());
}

TEST(RandomType, ShapesDtypesAndErrors) {
  EXPECT_EQ(type_str(infer_op("random.uniform", {}, {{"shape", std::vector<int64_t>{2, 3}}})),
            "Tensor[(2, 3), float32]");
  EXPECT_EQ(type_str(infer_op("random.normal", {}, {{"shape", std::vector<int64_t>{4}}, {"dtype", "float64"}})),
            "Tensor[(4), float64]");
  EXPECT_EQ(type_str(infer_op("random.bernoulli", {f32({5})}, {{"dtype", "bool"}})), "Tensor[(5), bool]");
  EXPECT_EQ(type_str(infer_op("random.multinomial", {f32({3, 4})}, {{"sample_size", 7}})), "Tensor[(3, 7), int32]");
  std::string e = infer_op_error("random.multinomial", {f32({4})});
  EXPECT_NE(e.find("random.multinomial"), std::string::npos) << e;
  EXPECT_NE(e.find("'logits'"), std::string::npos) << e;
  EXPECT_NE(e.find("(4)"), std::string::npos) << e;
  e = infer_op_error("random.uniform", {}, {{"shape", std::vector<int64_t>{2}}, {"dtype", "int32"}});
  EXPECT_NE(e.find("'dtype'"), std::string::npos) << e;
}

TEST(RandomKernel, UniformIsDeterministicForASeedAndInRange) {
  Attrs attrs{{"shape", std::vector<int64_t>{10000}}, {"low", -2.0}, {"high", 3.0}, {"seed", 42}};
  NDArray a = run_op("random.uniform", {}, attrs)[0], b = run_op("random.uniform", {}, attrs)[0];
  EXPECT_TRUE(a.same_as(b));
  attrs.set("seed", 43);
  EXPECT_FALSE(a.same_as(run_op("random.uniform", {}, attrs)[0]));
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_TRUE(a.at(i) >= -2.0 && a.at(i) < 3.0) << a.at(i);
  EXPECT_NEAR(mean_of(a), 0.5, 0.1);
  EXPECT_NEAR(variance_of(a), 25.0 / 12.0, 0.15);
}

TEST(RandomKernel, NormalMoments) {
  NDArray a = run_op("random.normal", {},
                     {{"shape", std::vector<int64_t>{20000}}, {"mean", 1.5}, {"scale", 2.0}, {"seed", 7}})[0];
  EXPECT_NEAR(mean_of(a), 1.5, 0.1);
  EXPECT_NEAR(variance_of(a), 4.0, 0.25);
}

TEST(RandomKernel, BernoulliFollowsProbabilities) {
  std::vector<double> p(4000);
  for (size_t i = 0; i < p.size(); ++i) p[i] = i % 4 == 0 ? 0.0 : i % 4 == 1 ? 1.0 : 0.25;
  NDArray out = run_op("random.bernoulli", {tensor({4000}, p)}, {{"seed", 3}})[0];
  int ones_at_quarter = 0;
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (i % 4 == 0) {
      ASSERT_EQ(out.at(i), 0.0);
    } else if (i % 4 == 1) {
      ASSERT_EQ(out.at(i), 1.0);
    } else {
      ones_at_quarter += out.at(i) == 1.0;
    }
  }
  EXPECT_NEAR(ones_at_quarter / 2000.0, 0.25, 0.04);
}

TEST(RandomKernel, MultinomialFollowsSoftmax) {
  // Row 0: probabilities 1/7, 2/7, 4/7; row 1: only class 2 is possible.
  NDArray logits = tensor({2, 3}, {0, std::log(2.0), std::log(4.0), -1e9, -1e9, 0});
  NDArray out = run_op("random.multinomial", {logits}, {{"sample_size", 7000}, {"seed", 5}, {"dtype", "int64"}})[0];
  ASSERT_EQ(out.shape(), (Shape{2, 7000}));
  EXPECT_EQ(out.dtype(), DType::kInt64);
  std::vector<int> counts(3);
  for (int64_t s = 0; s < 7000; ++s) {
    ++counts[static_cast<size_t>(out.int_at(s))];
    ASSERT_EQ(out.int_at(7000 + s), 2);
  }
  EXPECT_NEAR(counts[0], 1000, 150);
  EXPECT_NEAR(counts[1], 2000, 200);
  EXPECT_NEAR(counts[2], 4000, 250);
}

}  // namespace
}  // namespace kiln::testing
