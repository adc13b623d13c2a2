// Type relation and reference kernel of det.
#include "op/numpy_eval.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

TEST(TensorDetType, DropsTheMatrixAxes) {
  EXPECT_EQ(type_str(infer_op("det", {f32({2, 3, 3})})), "Tensor[(2), float32]");
  EXPECT_EQ(type_str(infer_op("det", {f32({kAnyDim, kAnyDim})})), "float32");
}

TEST(TensorDetType, NonSquareNamesShape) {
  std::string msg = infer_op_error("det", {f32({2, 3, 4})});
  EXPECT_NE(msg.find("'det'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2, 3, 4)"), std::string::npos) << msg;
  EXPECT_NE(infer_op_error("det", {tensor_type({2, 2}, DType::kInt32)}).find("int32"), std::string::npos);
}

TEST(TensorDetKernel, HandValuesNeedingPivotsAndSingular) {
  // [[0, 1], [2, 3]]: det -2 (needs a row swap); [[1, 2], [2, 4]]: singular.
  expect_close(run_op("det", {tensor({2, 2, 2}, {0, 1, 2, 3, 1, 2, 2, 4})})[0], {-2, 0});
}

TEST(TensorDetKernel, BatchMatchesNumpy) {
  std::vector<double> v;
  for (int i = 0; i < 3 * 4 * 4; ++i) v.push_back(((i * 37) % 17) / 4.0 - 2);
  auto expected = numpy::eval("np.linalg.det(" + numpy::array({3, 4, 4}, v, "float64") + ")");
  expect_close(run_op("det", {tensor({3, 4, 4}, v, DType::kFloat64)})[0], expected, 1e-12, 1e-12);
  expect_close(run_op("det", {tensor({3, 4, 4}, v)})[0], expected, 1e-4, 1e-5);
}

}  // namespace
}  // namespace kiln::testing
