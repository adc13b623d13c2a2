#include <cmath>

#include "op/numpy_eval.h"
#include "op/numpy_ref.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

TEST(NnInstanceNormType, SameTypeAsData) {
  EXPECT_EQ(type_str(infer_op("nn.instance_norm", {f32({-1, 3, 8, 8}), f32({3}), f32({3})})),
            "Tensor[(?, 3, 8, 8), float32]");
  EXPECT_EQ(type_str(infer_op("nn.instance_norm", {f32({2, 8, 8, 4}), f32({4}), f32({4})}, {{"axis", -1}})),
            "Tensor[(2, 8, 8, 4), float32]");
}

TEST(NnInstanceNormType, ErrorsNameArgumentAndShapes) {
  std::string e = infer_op_error("nn.instance_norm", {f32({2, 3, 4}), f32({4}), f32({3})});
  EXPECT_NE(e.find("argument 'gamma'"), std::string::npos) << e;
  EXPECT_NE(e.find("'data' (2, 3, 4)"), std::string::npos) << e;
  EXPECT_NE(e.find("expected (3), found (4)"), std::string::npos) << e;
  e = infer_op_error("nn.instance_norm", {f32({2, 3, 4}), f32({2}), f32({2})}, {{"axis", 0}});
  EXPECT_NE(e.find("batch axis"), std::string::npos) << e;
  e = infer_op_error("nn.instance_norm", {tensor_type({2, 3}, DType::kInt32), f32({3}), f32({3})});
  EXPECT_NE(e.find("floating point"), std::string::npos) << e;
  e = infer_op_error("nn.instance_norm", {f32({2, 3, 4}), f32({3}), tensor_type({3}, DType::kFloat64)});
  EXPECT_NE(e.find("argument 'beta' must have the dtype"), std::string::npos) << e;
}

// Channel 0 holds [1, 3] (mean 2, variance 1), channel 1 [0, 4] (mean 2, variance 4).
TEST(NnInstanceNormKernel, HandWorked) {
  NDArray x = tensor({1, 2, 2}, {1, 3, 0, 4});
  NDArray gamma = tensor({2}, {1, 2}), beta = tensor({2}, {0, 1});
  expect_close(run_op("nn.instance_norm", {x, gamma, beta}, {{"epsilon", 0.0}})[0], {-1, 1, -1, 3});
  expect_close(run_op("nn.instance_norm", {x, gamma, beta}, {{"epsilon", 0.0}, {"center", false}, {"scale", false}})[0],
               {-1, 1, -1, 1});
  expect_close(run_op("nn.instance_norm", {x, gamma, beta}, {{"epsilon", 3.0}})[0],
               {-0.5, 0.5, 1 - 4 / std::sqrt(7.0), 1 + 4 / std::sqrt(7.0)});
}

TEST(NnInstanceNormKernel, MatchesNumpyChannelsFirstAndLast) {
  NDArray x = sample_tensor({2, 3, 4, 5}, 3, -2, 2), gamma = sample_tensor({3}, 4), beta = sample_tensor({3}, 5);
  NDArray gamma5 = sample_tensor({5}, 6), beta5 = sample_tensor({5}, 8);
  std::string setup = "x = " + np_array(x) + "\ng = " + np_array(gamma) + "\nb = " + np_array(beta) +
                      "\ng5 = " + np_array(gamma5) + "\nb5 = " + np_array(beta5) +
                      "\ndef inorm(x, axes, g, b):\n"
                      "    m = x.mean(axis=axes, keepdims=True)\n"
                      "    v = ((x - m) ** 2).mean(axis=axes, keepdims=True)\n"
                      "    return (x - m) / np.sqrt(v + 1e-5) * g + b\n";
  auto want =
      numpy::eval_many({"inorm(x, (2, 3), g.reshape(3, 1, 1), b.reshape(3, 1, 1))", "inorm(x, (1, 2), g5, b5)"}, setup);
  ASSERT_EQ(want.size(), 2u);
  expect_close(run_op("nn.instance_norm", {x, gamma, beta})[0], want[0], 1e-5, 1e-4);
  expect_close(run_op("nn.instance_norm", {x, gamma5, beta5}, {{"axis", 3}})[0], want[1], 1e-5, 1e-4);
  NDArray x64 = x.cast(DType::kFloat64);
  expect_close(run_op("nn.instance_norm", {x64, gamma.cast(DType::kFloat64), beta.cast(DType::kFloat64)})[0], want[0],
               1e-10, 1e-10);
}

}  // namespace
}  // namespace kiln::testing
