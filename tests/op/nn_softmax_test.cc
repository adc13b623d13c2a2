#include <cmath>
#include <limits>

#include "op/numpy_ref.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

TEST(NnSoftmaxType, SameTypeAsData) {
  EXPECT_EQ(type_str(infer_op("nn.softmax", {f32({-1, 1000})})), "Tensor[(?, 1000), float32]");
  EXPECT_EQ(type_str(infer_op("nn.log_softmax", {tensor_type({2, 3}, DType::kFloat16)}, {{"axis", 0}})),
            "Tensor[(2, 3), float16]");
}

TEST(NnSoftmaxType, Errors) {
  std::string e = infer_op_error("nn.softmax", {f32({2, 3})}, {{"axis", 2}});
  EXPECT_NE(e.find("'axis'"), std::string::npos) << e;
  EXPECT_NE(e.find("(2, 3)"), std::string::npos) << e;
  e = infer_op_error("nn.log_softmax", {tensor_type({2, 3}, DType::kInt32)});
  EXPECT_NE(e.find("argument 'data' must be floating point"), std::string::npos) << e;
  e = infer_op_error("nn.softmax", {f32({})});
  EXPECT_NE(e.find("at least 1 dimension"), std::string::npos) << e;
}

TEST(NnSoftmaxKernel, HandWorked) {
  expect_close(run_op("nn.softmax", {tensor({3}, {1, 2, 3})})[0], {0.09003057, 0.24472847, 0.66524096}, 1e-7);
  expect_close(run_op("nn.log_softmax", {tensor({3}, {1, 2, 3})})[0], {-2.40760596, -1.40760596, -0.40760596}, 1e-6);
  // Along axis 0: each column (1, 3) and (2, 4) differs by 2.
  expect_close(run_op("nn.softmax", {tensor({2, 2}, {1, 2, 3, 4})}, {{"axis", 0}})[0],
               {0.11920292, 0.11920292, 0.88079708, 0.88079708}, 1e-7);
}

TEST(NnSoftmaxKernel, NumericallyStableForLargeInputs) {
  expect_close(run_op("nn.softmax", {tensor({3}, {1000, 1001, 1002})})[0], {0.09003057, 0.24472847, 0.66524096}, 1e-7);
  expect_close(run_op("nn.log_softmax", {tensor({2}, {-1000, 0})})[0], {-1000, 0}, 1e-4);
  double inf = std::numeric_limits<double>::infinity();
  expect_close(run_op("nn.softmax", {tensor({2}, {-inf, 0})})[0], {0, 1});
}

TEST(NnSoftmaxKernel, Float64AndFloat16) {
  auto out = run_op("nn.softmax", {tensor({2}, {0, std::log(3.0)}, DType::kFloat64)});
  EXPECT_EQ(out[0].dtype(), DType::kFloat64);
  expect_close(out[0], {0.25, 0.75}, 1e-15, 0);
  out = run_op("nn.softmax", {tensor({2}, {0, std::log(3.0)}, DType::kFloat16)});
  EXPECT_EQ(out[0].dtype(), DType::kFloat16);
  expect_close(out[0], {0.25, 0.75}, 1e-3, 0);
}

TEST(NnSoftmaxKernel, MatchesNumpyMiddleAxis) {
  NDArray x = sample_tensor({3, 7, 5}, 41, -10, 10);
  std::string prelude = "x = " + np_array(x) + R"(
e = np.exp(x - x.max(axis=1, keepdims=True))
s = e / e.sum(axis=1, keepdims=True)
)";
  expect_close(run_op("nn.softmax", {x}, {{"axis", 1}})[0], run_python(prelude + print_values("s")), 1e-6, 1e-5);
  expect_close(run_op("nn.log_softmax", {x}, {{"axis", -2}})[0], run_python(prelude + print_values("np.log(s)")), 1e-5,
               1e-5);
}

}  // namespace
}  // namespace kiln::testing
