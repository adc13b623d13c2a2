// Type relation and reference kernel of nn.group_norm, hand-worked and against numpy.
#include <cmath>

#include "op/numpy_eval.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

Attrs groups(int64_t n, double epsilon = 1e-5) { return {{"num_groups", n}, {"epsilon", epsilon}}; }

TEST(NnGroupNormType, SameTypeAsData) {
  EXPECT_EQ(type_str(infer_op("nn.group_norm", {f32({kAnyDim, 6, 4, 4}), f32({6}), f32({6})}, groups(3))),
            "Tensor[(?, 6, 4, 4), float32]");
  EXPECT_EQ(type_str(infer_op("nn.group_norm", {f32({2, 4}), f32({4}), f32({4})}, groups(2))),
            "Tensor[(2, 4), float32]");
  EXPECT_EQ(OpRegistry::global().get("nn.group_norm").pattern, OpPattern::kOpaque);
}

TEST(NnGroupNormType, ErrorsNameAttributeArgumentAndShapes) {
  std::string e = infer_op_error("nn.group_norm", {f32({2, 6, 4}), f32({6}), f32({6})}, groups(4));
  EXPECT_NE(e.find("'num_groups'"), std::string::npos) << e;
  EXPECT_NE(e.find("a divisor of 6"), std::string::npos) << e;
  EXPECT_NE(e.find("found 4"), std::string::npos) << e;
  e = infer_op_error("nn.group_norm", {f32({2, 6, 4}), f32({3}), f32({6})}, groups(3));
  EXPECT_NE(e.find("argument 'gamma'"), std::string::npos) << e;
  EXPECT_NE(e.find("expected (6), found (3)"), std::string::npos) << e;
  e = infer_op_error("nn.group_norm", {f32({6}), f32({6}), f32({6})}, groups(3));
  EXPECT_NE(e.find("batch and a channel axis"), std::string::npos) << e;
  e = infer_op_error("nn.group_norm", {f32({2, 6}), f32({6}), f32({6})}, groups(0));
  EXPECT_NE(e.find("'num_groups'"), std::string::npos) << e;
  e = infer_op_error("nn.group_norm", {f32({2, 6}), f32({6}), f32({6})}, groups(3, -1.0));
  EXPECT_NE(e.find("'epsilon'"), std::string::npos) << e;
  e = infer_op_error("nn.group_norm", {tensor_type({2, 6}, DType::kInt32), f32({6}), f32({6})}, groups(3));
  EXPECT_NE(e.find("floating point"), std::string::npos) << e;
  e = infer_op_error("nn.group_norm", {f32({2, 6}), f32({6}), f32({6})});
  EXPECT_NE(e.find("num_groups"), std::string::npos) << e;  // required
}

// Two groups of two channels: group 0 holds [1, 3 | 5, 7] (mean 4, variance 5), group 1
// [0, 0 | 2, 2] (mean 1, variance 1).
TEST(NnGroupNormKernel, HandWorked) {
  NDArray x = tensor({1, 4, 2}, {1, 3, 5, 7, 0, 0, 2, 2});
  NDArray gamma = tensor({4}, {1, 1, 2, 1}), beta = tensor({4}, {0, 0, 0, 10});
  const double s = std::sqrt(5.0);
  expect_close(run_op("nn.group_norm", {x, gamma, beta}, groups(2, 0.0))[0],
               {-3 / s, -1 / s, 1 / s, 3 / s, -2, -2, 11, 11});
  // One group: all eight values, mean 2.5, variance 5.25 + epsilon 0.75 = 6.
  std::vector<double> want;
  for (double v : {1, 3, 5, 7, 0, 0, 2, 2}) want.push_back((v - 2.5) / std::sqrt(6.0));
  for (size_t i = 4; i < 6; ++i) want[i] *= 2;
  for (size_t i = 6; i < 8; ++i) want[i] += 10;
  expect_close(run_op("nn.group_norm", {x, gamma, beta}, groups(1, 0.75))[0], want);
}

TEST(NnGroupNormKernel, MatchesNumpyWithBatchesAndSpatialAxes) {
  std::vector<double> xs, gs, bs;
  for (int i = 0; i < 2 * 6 * 3 * 5; ++i) xs.push_back(std::sin(i * 0.37) * 3 + (i % 7));
  for (int c = 0; c < 6; ++c) {
    gs.push_back(0.5 + c * 0.25);
    bs.push_back(c - 2.5);
  }
  const std::string setup = "x = " + numpy::array({2, 6, 3, 5}, xs, "float64") +
                            "\ng = " + numpy::array({6}, gs, "float64") + "\nb = " + numpy::array({6}, bs, "float64") +
                            "\nr = x.reshape(2, 3, -1)\n"
                            "y = ((r - r.mean(-1, keepdims=True)) / np.sqrt(r.var(-1, keepdims=True) + 1e-3))"
                            ".reshape(x.shape) * g.reshape(1, 6, 1, 1) + b.reshape(1, 6, 1, 1)";
  std::vector<double> want = numpy::eval("y", setup);
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    NDArray out =
        run_op("nn.group_norm", {tensor({2, 6, 3, 5}, xs, dtype), tensor({6}, gs, dtype), tensor({6}, bs, dtype)},
               groups(3, 1e-3))[0];
    expect_close(out, want, dtype == DType::kFloat64 ? 1e-12 : 1e-5);
  }
}

}  // namespace
}  // namespace kiln::testing
