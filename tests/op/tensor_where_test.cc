// Type relation and reference kernel of where(condition, x, y).
#include "op/numpy_eval.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

Type boolean(Shape shape) { return tensor_type(std::move(shape), DType::kBool); }

TEST(TensorWhereType, ThreeWayBroadcast) {
  EXPECT_EQ(type_str(infer_op("where", {boolean({2, 1}), f32({1, 3}), f32({})})), "Tensor[(2, 3), float32]");
  EXPECT_EQ(type_str(infer_op("where", {boolean({4, 1, 1}), f32({kAnyDim, 1}), f32({5})})),
            "Tensor[(4, ?, 5), float32]");
  EXPECT_EQ(OpRegistry::global().get("where").pattern, OpPattern::kBroadcast);
}

TEST(TensorWhereType, ConditionMustBeBool) {
  std::string msg = infer_op_error("where", {f32({2}), f32({2}), f32({2})});
  EXPECT_NE(msg.find("'where'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'condition'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bool"), std::string::npos) << msg;
  EXPECT_NE(msg.find("float32"), std::string::npos) << msg;
}

TEST(TensorWhereType, BranchesMustShareDType) {
  std::string msg = infer_op_error("where", {boolean({2}), f32({2}), tensor_type({2}, DType::kFloat64)});
  EXPECT_NE(msg.find("'x'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'y'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("float64"), std::string::npos) << msg;
}

TEST(TensorWhereType, IncompatibleShapesNameArguments) {
  std::string msg = infer_op_error("where", {boolean({2}), f32({3}), f32({3})});
  EXPECT_NE(msg.find("'where'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'condition'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(3)"), std::string::npos) << msg;
  msg = infer_op_error("where", {boolean({3}), f32({2, 3}), f32({4, 3})});
  EXPECT_NE(msg.find("'x'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2, 3)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(4, 3)"), std::string::npos) << msg;
}

TEST(TensorWhereKernel, SameShape) {
  NDArray c = tensor({4}, {1, 0, 0, 1}, DType::kBool);
  expect_close(run_op("where", {c, tensor({4}, {1, 2, 3, 4}), tensor({4}, {-1, -2, -3, -4})})[0], {1, -2, -3, 4}, 0, 0);
}

TEST(TensorWhereKernel, BroadcastConditionColumnAndScalarElse) {
  NDArray c = tensor({2, 1}, {1, 0}, DType::kBool);
  NDArray x = tensor({3}, {1, 2, 3}, DType::kInt32);
  NDArray y = tensor({}, {-7}, DType::kInt32);
  NDArray out = run_op("where", {c, x, y})[0];
  EXPECT_EQ(out.dtype(), DType::kInt32);
  EXPECT_EQ(out.to_ints(), (std::vector<int64_t>{1, 2, 3, -7, -7, -7}));
}

TEST(TensorWhereKernel, BroadcastMatchesNumpy) {
  const Shape cs = {2, 1, 4}, xs = {3, 1}, ys = {1, 3, 4};
  std::vector<double> cv = {1, 0, 0, 1, 0, 1, 1, 0};
  std::vector<double> xv = {10, 20, 30};
  std::vector<double> yv(12);
  for (size_t i = 0; i < yv.size(); ++i) yv[i] = -static_cast<double>(i);
  std::vector<double> want = numpy::eval("np.where(" + numpy::array(cs, cv, "bool_") + ", " + numpy::array(xs, xv) +
                                         ", " + numpy::array(ys, yv) + ")");
  NDArray out = run_op("where", {tensor(cs, cv, DType::kBool), tensor(xs, xv), tensor(ys, yv)})[0];
  EXPECT_EQ(out.shape(), (Shape{2, 3, 4}));
  expect_close(out, want, 0, 0);
}

TEST(TensorWhereKernel, Float16Branches) {
  NDArray c = tensor({2}, {0, 1}, DType::kBool);
  NDArray out =
      run_op("where", {c, tensor({2}, {0.5, 1.5}, DType::kFloat16), tensor({2}, {2.5, 3.5}, DType::kFloat16)})[0];
  expect_close(out, {2.5, 1.5}, 0, 0);
}

}  // namespace
}  // namespace kiln::testing
