// Type relations and reference kernels of the math ops added for ONNX coverage: the
// trigonometric and hyperbolic functions, floor/ceil/round/trunc, sign, isnan/isinf/
// isfinite, logical_not, mod/floor_mod and left_shift/right_shift.
#include <cmath>
#include <limits>

#include "op/numpy_eval.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(TensorMathType, FloatFunctionsKeepTypeAndRejectIntegers) {
  for (const char* op : {"sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
                         "floor", "ceil", "round", "trunc"}) {
    EXPECT_EQ(type_str(infer_op(op, {tensor_type({kAnyDim, 3}, DType::kFloat16)})), "Tensor[(?, 3), float16]") << op;
    EXPECT_EQ(OpRegistry::global().get(op).pattern, OpPattern::kElemwise) << op;
    std::string msg = infer_op_error(op, {tensor_type({2}, DType::kInt32)});
    EXPECT_NE(msg.find(std::string("'") + op + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("int32"), std::string::npos) << msg;
  }
}

TEST(TensorMathType, PredicatesGiveBoolAndLogicalNotNeedsBool) {
  for (const char* op : {"isnan", "isinf", "isfinite"})
    EXPECT_EQ(type_str(infer_op(op, {f32({2, kAnyDim})})), "Tensor[(2, ?), bool]") << op;
  EXPECT_EQ(type_str(infer_op("logical_not", {tensor_type({3}, DType::kBool)})), "Tensor[(3), bool]");
  std::string msg = infer_op_error("logical_not", {f32({3})});
  EXPECT_NE(msg.find("'logical_not'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("float32"), std::string::npos) << msg;
}

TEST(TensorMathType, ModBroadcastsAndShiftsNeedIntegers) {
  EXPECT_EQ(type_str(infer_op("mod", {f32({2, 1}), f32({3})})), "Tensor[(2, 3), float32]");
  EXPECT_EQ(type_str(infer_op("floor_mod", {tensor_type({4}, DType::kInt8), tensor_type({}, DType::kInt8)})),
            "Tensor[(4), int8]");
  EXPECT_EQ(type_str(infer_op("left_shift", {tensor_type({4}, DType::kUInt16), tensor_type({1}, DType::kUInt16)})),
            "Tensor[(4), uint16]");
  std::string msg = infer_op_error("right_shift", {f32({2}), f32({2})});
  EXPECT_NE(msg.find("'right_shift'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("integer"), std::string::npos) << msg;
  msg = infer_op_error("mod", {f32({2, 3}), f32({4})});
  EXPECT_NE(msg.find("(2, 3)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(4)"), std::string::npos) << msg;
}

TEST(TensorMathKernel, TrigonometricAndHyperbolicMatchNumpy) {
  const std::vector<double> x = {-0.9, -0.3, 0, 0.25, 0.8};
  const std::vector<double> big = {1, 1.5, 2, 4, 10};
  std::vector<std::string> exprs;
  const std::vector<std::string> ops = {"sin",  "cos",  "tan",   "asin",  "acos", "atan",
                                        "sinh", "cosh", "asinh", "atanh", "acosh"};
  for (const std::string& op : ops) {
    std::string np_op = op[0] == 'a' ? "arc" + op.substr(1) : op;
    exprs.push_back("np." + np_op + "(" + numpy::array({5}, op == "acosh" ? big : x, "float64") + ")");
  }
  auto expected = numpy::eval_many(exprs);
  ASSERT_EQ(expected.size(), ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    SCOPED_TRACE(ops[i]);
    expect_close(run_op(ops[i], {tensor({5}, ops[i] == "acosh" ? big : x, DType::kFloat64)})[0], expected[i], 1e-14,
                 1e-14);
    expect_close(run_op(ops[i], {tensor({5}, ops[i] == "acosh" ? big : x)})[0], expected[i], 1e-6, 1e-6);
  }
}

TEST(TensorMathKernel, OutOfDomainGivesNaNAndInf) {
  NDArray asin = run_op("asin", {tensor({1}, {2})})[0];
  EXPECT_TRUE(std::isnan(asin.at(0)));
  NDArray atanh = run_op("atanh", {tensor({2}, {1, -1})})[0];
  EXPECT_EQ(atanh.at(0), kInf);
  EXPECT_EQ(atanh.at(1), -kInf);
}

TEST(TensorMathKernel, RoundingFunctions) {
  const std::vector<double> x = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6, -2.4};
  expect_close(run_op("round", {tensor({8}, x)})[0], {-2, -2, -0, 0, 2, 2, 3, -2});
  expect_close(run_op("floor", {tensor({8}, x)})[0], {-3, -2, -1, 0, 1, 2, 2, -3});
  expect_close(run_op("ceil", {tensor({8}, x)})[0], {-2, -1, -0, 1, 2, 3, 3, -2});
  expect_close(run_op("trunc", {tensor({8}, x)})[0], {-2, -1, 0, 0, 1, 2, 2, -2});
  expect_close(run_op("round", {tensor({2}, {0.5, 1.5}, DType::kFloat16)})[0], {0, 2});
}

TEST(TensorMathKernel, SignOfFloatsIntegersAndNaN) {
  NDArray f = run_op("sign", {tensor({4}, {-3.5, 0, 2, kNaN})})[0];
  EXPECT_EQ(f.at(0), -1);
  EXPECT_EQ(f.at(1), 0);
  EXPECT_EQ(f.at(2), 1);
  EXPECT_TRUE(std::isnan(f.at(3)));
  EXPECT_EQ(run_op("sign", {tensor({3}, {-7, 0, 9}, DType::kInt8)})[0].to_ints(), (std::vector<int64_t>{-1, 0, 1}));
  EXPECT_EQ(run_op("sign", {tensor({2}, {0, 200}, DType::kUInt8)})[0].to_ints(), (std::vector<int64_t>{0, 1}));
}

TEST(TensorMathKernel, PredicatesAndLogicalNot) {
  NDArray x = tensor({4}, {1, kNaN, kInf, -kInf});
  EXPECT_EQ(run_op("isnan", {x})[0].to_ints(), (std::vector<int64_t>{0, 1, 0, 0}));
  EXPECT_EQ(run_op("isinf", {x})[0].to_ints(), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(run_op("isfinite", {x})[0].to_ints(), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(run_op("logical_not", {tensor({2}, {1, 0}, DType::kBool)})[0].to_ints(), (std::vector<int64_t>{0, 1}));
}

TEST(TensorMathKernel, ModAndFloorModMatchNumpyFmodAndMod) {
  const std::vector<double> a = {-4, 7, 5, 4, -7, 8}, b = {2, -3, 8, -2, 3, 5};
  auto expected =
      numpy::eval_many({"np.fmod(" + numpy::array({6}, a, "int32") + ", " + numpy::array({6}, b, "int32") + ")",
                        "np.mod(" + numpy::array({6}, a, "int32") + ", " + numpy::array({6}, b, "int32") + ")",
                        "np.fmod(" + numpy::array({6}, a) + " + 0.5, " + numpy::array({6}, b) + ")",
                        "np.mod(" + numpy::array({6}, a) + " + 0.5, " + numpy::array({6}, b) + ")"});
  ASSERT_EQ(expected.size(), 4u);
  std::vector<double> a_half = a;
  for (double& v : a_half) v += 0.5;
  expect_close(run_op("mod", {tensor({6}, a, DType::kInt32), tensor({6}, b, DType::kInt32)})[0], expected[0], 0, 0);
  expect_close(run_op("floor_mod", {tensor({6}, a, DType::kInt32), tensor({6}, b, DType::kInt32)})[0], expected[1], 0,
               0);
  expect_close(run_op("mod", {tensor({6}, a_half), tensor({6}, b)})[0], expected[2]);
  expect_close(run_op("floor_mod", {tensor({6}, a_half), tensor({6}, b)})[0], expected[3]);
}

TEST(TensorMathKernel, IntegerModEdgeCases) {
  // INT8_MIN % -1 is 0 (C leaves it undefined); unsigned values take the plain remainder.
  EXPECT_EQ(run_op("floor_mod", {tensor({1}, {-128}, DType::kInt8), tensor({1}, {-1}, DType::kInt8)})[0].int_at(0), 0);
  EXPECT_EQ(run_op("mod", {tensor({2}, {250, 7}, DType::kUInt8), tensor({1}, {7}, DType::kUInt8)})[0].to_ints(),
            (std::vector<int64_t>{5, 0}));
  try {
    run_op("mod", {tensor({1}, {3}, DType::kInt64), tensor({1}, {0}, DType::kInt64)});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("modulo by zero"), std::string::npos) << e.what();
  }
}

TEST(TensorMathKernel, ShiftsLoseBitsPastTheWidth) {
  NDArray x = tensor({4}, {16, 4, 1, 255}, DType::kUInt8);
  NDArray s = tensor({4}, {1, 2, 8, 3}, DType::kUInt8);
  EXPECT_EQ(run_op("left_shift", {x, s})[0].to_ints(), (std::vector<int64_t>{32, 16, 0, 248}));
  EXPECT_EQ(run_op("right_shift", {x, s})[0].to_ints(), (std::vector<int64_t>{8, 1, 0, 31}));
  EXPECT_EQ(
      run_op("right_shift", {tensor({2}, {-8, -8}, DType::kInt32), tensor({2}, {1, 40}, DType::kInt32)})[0].to_ints(),
      (std::vector<int64_t>{-4, -1}));
  EXPECT_EQ(run_op("left_shift", {tensor({1}, {1}, DType::kUInt64), tensor({1}, {63}, DType::kUInt64)})[0].to_ints(),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min()}));
}

}  // namespace
}  // namespace kiln::testing
