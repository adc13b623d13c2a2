// Type relations and reference kernels of nn.mish and nn.gelu, against numpy.
#include <cmath>

#include "op/numpy_eval.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

const std::vector<double> kValues = {-30, -4, -1.5, -0.25, 0, 0.25, 1, 3.5, 30};

TEST(NnMishGeluType, FloatDataKeepsItsType) {
  EXPECT_EQ(type_str(infer_op("nn.mish", {f32({kAnyDim, 8})})), "Tensor[(?, 8), float32]");
  EXPECT_EQ(type_str(infer_op("nn.gelu", {f32({2, 3})}, {{"approximate", std::string("tanh")}})),
            "Tensor[(2, 3), float32]");
  EXPECT_EQ(OpRegistry::global().get("nn.mish").pattern, OpPattern::kElemwise);
  EXPECT_EQ(OpRegistry::global().get("nn.gelu").pattern, OpPattern::kElemwise);
}

TEST(NnMishGeluType, ErrorsNameOpDtypeAndAttribute) {
  std::string msg = infer_op_error("nn.mish", {tensor_type({2}, DType::kInt32)});
  EXPECT_NE(msg.find("'nn.mish'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int32"), std::string::npos) << msg;
  msg = infer_op_error("nn.gelu", {tensor_type({2}, DType::kInt64)});
  EXPECT_NE(msg.find("int64"), std::string::npos) << msg;
  msg = infer_op_error("nn.gelu", {f32({2})}, {{"approximate", std::string("fast")}});
  EXPECT_NE(msg.find("'approximate'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\"fast\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("\"tanh\""), std::string::npos) << msg;
}

TEST(NnMishGeluKernel, MishMatchesNumpy) {
  const std::string x = numpy::array({9}, kValues, "float64");
  std::vector<double> want = numpy::eval("(lambda x: x * np.tanh(np.log1p(np.exp(x))))(" + x + ")");
  expect_close(run_op("nn.mish", {tensor({9}, kValues, DType::kFloat64)})[0], want, 1e-12, 1e-12);
  expect_close(run_op("nn.mish", {tensor({9}, kValues)})[0], want, 1e-6, 1e-6);
  // Half-way values: mish(0) = 0, mish(x) -> x for large x, -> 0 for very negative x.
  NDArray out = run_op("nn.mish", {tensor({3}, {0, 100, -100})})[0];
  EXPECT_EQ(out.at(0), 0);
  EXPECT_EQ(out.at(1), 100);
  EXPECT_NEAR(out.at(2), 0, 1e-30);
}

TEST(NnMishGeluKernel, GeluBothFormsMatchNumpy) {
  const std::string x = numpy::array({9}, kValues, "float64");
  std::vector<std::vector<double>> want =
      numpy::eval_many({"0.5 * x * (1 + np.vectorize(math.erf)(x / np.sqrt(2)))",
                        "0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))"},
                       "x = " + x);
  ASSERT_EQ(want.size(), 2u);
  expect_close(run_op("nn.gelu", {tensor({9}, kValues, DType::kFloat64)})[0], want[0], 1e-12, 1e-12);
  expect_close(run_op("nn.gelu", {tensor({9}, kValues)}, {{"approximate", std::string("none")}})[0], want[0]);
  expect_close(run_op("nn.gelu", {tensor({9}, kValues)}, {{"approximate", std::string("tanh")}})[0], want[1]);
  // The two forms differ (by about 2e-4 near |x| = 2), so the attribute is honoured.
  NDArray exact = run_op("nn.gelu", {tensor({1}, {-2}, DType::kFloat64)})[0];
  NDArray approx = run_op("nn.gelu", {tensor({1}, {-2}, DType::kFloat64)}, {{"approximate", std::string("tanh")}})[0];
  EXPECT_GT(std::fabs(exact.at(0) - approx.at(0)), 1e-5);
}

TEST(NnMishGeluKernel, Float16ComputesInFloat) {
  NDArray out = run_op("nn.gelu", {tensor({2}, {1, -1}, DType::kFloat16)})[0];
  EXPECT_EQ(out.dtype(), DType::kFloat16);
  EXPECT_NEAR(out.at(0), 0.8413447, 1e-3);
  EXPECT_NEAR(out.at(1), -0.1586553, 1e-3);
}

}  // namespace
}  // namespace kiln::testing
