// Type relation and reference kernel of cumsum.
#include "op/numpy_eval.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

TEST(TensorCumsumType, KeepsShapeOrFlattens) {
  EXPECT_EQ(type_str(infer_op("cumsum", {f32({2, 3})}, {{"axis", 1}})), "Tensor[(2, 3), float32]");
  EXPECT_EQ(type_str(infer_op("cumsum", {f32({2, 3})})), "Tensor[(6), float32]");
  EXPECT_EQ(type_str(infer_op("cumsum", {f32({kAnyDim, 3})})), "Tensor[(?), float32]");
}

TEST(TensorCumsumType, AxisOutOfRangeNamesShape) {
  std::string msg = infer_op_error("cumsum", {f32({2, 3})}, {{"axis", 2}});
  EXPECT_NE(msg.find("'cumsum'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'axis'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2, 3)"), std::string::npos) << msg;
  msg = infer_op_error("cumsum", {tensor_type({2}, DType::kBool)}, {{"axis", 0}});
  EXPECT_NE(msg.find("bool"), std::string::npos) << msg;
}

TEST(TensorCumsumKernel, ExclusiveAndReverseByHand) {
  NDArray x = tensor({4}, {1, 2, 3, 4});
  expect_close(run_op("cumsum", {x}, {{"axis", 0}})[0], {1, 3, 6, 10});
  expect_close(run_op("cumsum", {x}, {{"axis", 0}, {"exclusive", true}})[0], {0, 1, 3, 6});
  expect_close(run_op("cumsum", {x}, {{"axis", 0}, {"reverse", true}})[0], {10, 9, 7, 4});
  expect_close(run_op("cumsum", {x}, {{"axis", 0}, {"exclusive", true}, {"reverse", true}})[0], {9, 7, 4, 0});
}

TEST(TensorCumsumKernel, AxesOfA3dTensorMatchNumpy) {
  std::vector<double> v;
  for (int i = 0; i < 24; ++i) v.push_back((i * 7 % 11) - 5);
  const std::string x = numpy::array({2, 3, 4}, v, "int64");
  auto expected = numpy::eval_many({"np.cumsum(" + x + ", axis=0)", "np.cumsum(" + x + ", axis=1)",
                                    "np.cumsum(" + x + ", axis=2)", "np.cumsum(" + x + ")"});
  ASSERT_EQ(expected.size(), 4u);
  NDArray data = tensor({2, 3, 4}, v, DType::kInt64);
  for (int axis = 0; axis < 3; ++axis)
    EXPECT_EQ(run_op("cumsum", {data}, {{"axis", axis - 3}})[0].to_doubles(), expected[static_cast<size_t>(axis)])
        << axis;
  EXPECT_EQ(run_op("cumsum", {data})[0].to_doubles(), expected[3]);
}

}  // namespace
}  // namespace kiln::testing
