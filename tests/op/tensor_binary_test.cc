// Type relations and reference kernels of add, subtract, multiply, divide, power, maximum,
// minimum and the comparisons.
#include <cmath>
#include <limits>

#include "op/numpy_eval.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> iota_values(int64_t n, double start = 1, double step = 1) {
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + step * static_cast<double>(i);
  return v;
}

TEST(TensorBinaryType, BroadcastsNumpyStyle) {
  EXPECT_EQ(type_str(infer_op("add", {f32({2, 3}), f32({3})})), "Tensor[(2, 3), float32]");
  EXPECT_EQ(type_str(infer_op("subtract", {f32({2, 1, 4}), f32({3, 1})})), "Tensor[(2, 3, 4), float32]");
  EXPECT_EQ(type_str(infer_op("multiply", {f32({}), f32({5})})), "Tensor[(5), float32]");
  EXPECT_EQ(type_str(infer_op("divide", {f32({}), f32({})})), "float32");
}

TEST(TensorBinaryType, UnknownDimsBroadcast) {
  EXPECT_EQ(type_str(infer_op("add", {f32({kAnyDim, 3}), f32({2, 1})})), "Tensor[(2, 3), float32]");
  EXPECT_EQ(type_str(infer_op("add", {f32({kAnyDim, 3}), f32({1, 3})})), "Tensor[(?, 3), float32]");
  EXPECT_EQ(type_str(infer_op("maximum", {f32({kAnyDim}), f32({kAnyDim})})), "Tensor[(?), float32]");
}

TEST(TensorBinaryType, IncompatibleShapesNameOpArgumentsAndShapes) {
  std::string msg = infer_op_error("add", {f32({2, 3}), f32({4, 3})});
  EXPECT_NE(msg.find("'add'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'lhs'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'rhs'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2, 3)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(4, 3)"), std::string::npos) << msg;
}

TEST(TensorBinaryType, MismatchedDTypesNameBoth) {
  std::string msg = infer_op_error("multiply", {f32({2}), tensor_type({2}, DType::kInt32)});
  EXPECT_NE(msg.find("'multiply'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'lhs'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'rhs'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("float32"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int32"), std::string::npos) << msg;
}

TEST(TensorBinaryType, ArithmeticRejectsBoolComparisonsAccept) {
  Type b = tensor_type({2}, DType::kBool);
  std::string msg = infer_op_error("add", {b, b});
  EXPECT_NE(msg.find("bool"), std::string::npos) << msg;
  EXPECT_EQ(type_str(infer_op("equal", {b, b})), "Tensor[(2), bool]");
}

TEST(TensorBinaryType, ComparisonsGiveBool) {
  for (const char* op : {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}) {
    EXPECT_EQ(type_str(infer_op(op, {tensor_type({kAnyDim, 1}, DType::kInt64), tensor_type({4}, DType::kInt64)})),
              "Tensor[(?, 4), bool]")
        << op;
    EXPECT_EQ(OpRegistry::global().get(op).pattern, OpPattern::kBroadcast) << op;
  }
}

TEST(TensorBinaryType, PatternIsBroadcast) {
  for (const char* op : {"add", "subtract", "multiply", "divide", "power", "maximum", "minimum"})
    EXPECT_EQ(OpRegistry::global().get(op).pattern, OpPattern::kBroadcast) << op;
}

TEST(TensorBinaryType, WrongArity) {
  std::string msg = infer_op_error("add", {f32({2})});
  EXPECT_NE(msg.find("'add'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("number of arguments"), std::string::npos) << msg;
}

TEST(TensorBinaryKernel, SameShapeArithmetic) {
  NDArray a = tensor({2, 2}, {1, 2, 3, 4});
  NDArray b = tensor({2, 2}, {10, 20, 30, 40});
  expect_close(run_op("add", {a, b})[0], {11, 22, 33, 44});
  expect_close(run_op("subtract", {a, b})[0], {-9, -18, -27, -36});
  expect_close(run_op("multiply", {a, b})[0], {10, 40, 90, 160});
  expect_close(run_op("divide", {a, b})[0], {0.1, 0.1, 0.1, 0.1});
  expect_close(run_op("maximum", {a, tensor({2, 2}, {0, 5, 3, -1})})[0], {1, 5, 3, 4});
  expect_close(run_op("minimum", {a, tensor({2, 2}, {0, 5, 3, -1})})[0], {0, 2, 3, -1});
}

TEST(TensorBinaryKernel, BroadcastRowColumnAndScalar) {
  NDArray m = tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_close(run_op("add", {m, tensor({3}, {10, 20, 30})})[0], {11, 22, 33, 14, 25, 36});
  expect_close(run_op("multiply", {m, tensor({2, 1}, {2, 3})})[0], {2, 4, 6, 12, 15, 18});
  expect_close(run_op("subtract", {tensor({}, {10}), m})[0], {9, 8, 7, 6, 5, 4});
  expect_close(run_op("subtract", {m, tensor({}, {10})})[0], {-9, -8, -7, -6, -5, -4});
  // Outer product shape: (2, 1) with (1, 3).
  expect_close(run_op("multiply", {tensor({2, 1}, {1, 2}), tensor({1, 3}, {1, 10, 100})})[0], {1, 10, 100, 2, 20, 200});
}

TEST(TensorBinaryKernel, BroadcastPatternsMatchNumpy) {
  struct Case {
    Shape a, b;
  };
  const Case cases[] = {
      {{2, 3, 4}, {3, 1}}, {{1, 4, 1, 3}, {2, 1, 5, 1}}, {{2, 3, 4, 5}, {3, 1, 1}}, {{3, 1, 2}, {1, 1}},
      {{5}, {4, 1}},       {{2, 1, 3}, {2, 4, 3}}};
  std::vector<std::string> exprs;
  for (const auto& c : cases)
    exprs.push_back(numpy::array(c.a, iota_values(num_elements(c.a), 1, 1)) + " - " +
                    numpy::array(c.b, iota_values(num_elements(c.b), 0.5, 0.25)));
  auto want = numpy::eval_many(exprs);
  ASSERT_EQ(want.size(), exprs.size());
  for (size_t i = 0; i < exprs.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(exprs[i]);
    NDArray a = tensor(c.a, iota_values(num_elements(c.a), 1, 1));
    NDArray b = tensor(c.b, iota_values(num_elements(c.b), 0.5, 0.25));
    expect_close(run_op("subtract", {a, b})[0], want[i]);
  }
}

TEST(TensorBinaryKernel, IntegerDivisionTruncatesTowardZero) {
  // numpy's // would give -4 for -7 // 2; ONNX Div and C give -3.
  NDArray a = tensor({4}, {7, -7, 7, -7}, DType::kInt32);
  NDArray b = tensor({4}, {2, 2, -2, -2}, DType::kInt32);
  EXPECT_EQ(run_op("divide", {a, b})[0].to_ints(), (std::vector<int64_t>{3, -3, -3, 3}));
}

TEST(TensorBinaryKernel, IntegerDivisionEdgeCases) {
  NDArray min = tensor({1}, {-2147483648.0}, DType::kInt32);
  NDArray minus_one = tensor({1}, {-1}, DType::kInt32);
  EXPECT_EQ(run_op("divide", {min, minus_one})[0].to_ints(), (std::vector<int64_t>{-2147483648LL}));
  try {
    run_op("divide", {tensor({2}, {1, 2}, DType::kInt64), tensor({2}, {1, 0}, DType::kInt64)});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("division by zero"), std::string::npos) << e.what();
  }
}

TEST(TensorBinaryKernel, IntegerArithmeticWraps) {
  EXPECT_EQ(run_op("add", {tensor({1}, {2147483647}, DType::kInt32), tensor({1}, {1}, DType::kInt32)})[0].to_ints(),
            (std::vector<int64_t>{-2147483648LL}));
  EXPECT_EQ(run_op("add", {tensor({1}, {200}, DType::kUInt8), tensor({1}, {100}, DType::kUInt8)})[0].to_ints(),
            (std::vector<int64_t>{44}));
  // 65535^2 = 2^32 - 2^17 + 1, which is 1 modulo 2^16.
  EXPECT_EQ(
      run_op("multiply", {tensor({1}, {65535}, DType::kUInt16), tensor({1}, {65535}, DType::kUInt16)})[0].to_ints(),
      (std::vector<int64_t>{1}));
  EXPECT_EQ(
      run_op("subtract", {tensor({1}, {-9.2233720368547758e18}, DType::kInt64), tensor({1}, {1}, DType::kInt64)})[0]
          .to_ints(),
      (std::vector<int64_t>{std::numeric_limits<int64_t>::max()}));
}

TEST(TensorBinaryKernel, PowerFloatHandAndNumpy) {
  expect_close(run_op("power", {tensor({4}, {0.5, 2, 3, 1.5}), tensor({4}, {2, -1, 0.5, 3})})[0],
               {0.25, 0.5, 1.7320508075688772, 3.375});
  std::vector<double> base = {0.1, 0.7, 1.3, 2.9, 4.4, 9.0};
  std::vector<double> exps = {-1.5, 0.25, 2.5};
  std::vector<double> want =
      numpy::eval(numpy::array({6, 1}, base, "float64") + " ** " + numpy::array({3}, exps, "float64"));
  expect_close(run_op("power", {tensor({6, 1}, base, DType::kFloat64), tensor({3}, exps, DType::kFloat64)})[0], want,
               1e-12, 1e-12);
}

TEST(TensorBinaryKernel, PowerIntegers) {
  NDArray base = tensor({6}, {2, 3, -2, 2, -1, 5}, DType::kInt64);
  NDArray exps = tensor({6}, {10, 3, 3, -1, -3, 0}, DType::kInt64);
  EXPECT_EQ(run_op("power", {base, exps})[0].to_ints(), (std::vector<int64_t>{1024, 27, -8, 0, -1, 1}));
}

TEST(TensorBinaryKernel, MaximumMinimumPropagateNaN) {
  NDArray a = tensor({3}, {1, kNaN, 3});
  NDArray b = tensor({3}, {2, 2, kNaN});
  NDArray mx = run_op("maximum", {a, b})[0];
  NDArray mn = run_op("minimum", {a, b})[0];
  EXPECT_EQ(mx.at(0), 2);
  EXPECT_EQ(mn.at(0), 1);
  for (int i = 1; i < 3; ++i) {
    EXPECT_TRUE(std::isnan(mx.at(i))) << i;
    EXPECT_TRUE(std::isnan(mn.at(i))) << i;
  }
}

TEST(TensorBinaryKernel, IntegerMaximumMinimum) {
  NDArray a = tensor({3}, {-5, 7, 0}, DType::kInt16);
  NDArray b = tensor({1}, {1}, DType::kInt16);
  EXPECT_EQ(run_op("maximum", {a, b})[0].to_ints(), (std::vector<int64_t>{1, 7, 1}));
  EXPECT_EQ(run_op("minimum", {a, b})[0].to_ints(), (std::vector<int64_t>{-5, 1, 0}));
}

TEST(TensorBinaryKernel, HalfAndBFloat16) {
  NDArray h = run_op("add", {tensor({2}, {1.5, 2.25}, DType::kFloat16), tensor({2}, {0.25, 1}, DType::kFloat16)})[0];
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  expect_close(h, {1.75, 3.25}, 0, 0);
  NDArray bf = run_op("multiply", {tensor({2}, {3, -0.5}, DType::kBFloat16), tensor({}, {4}, DType::kBFloat16)})[0];
  expect_close(bf, {12, -2}, 0, 0);
}

TEST(TensorBinaryKernel, Comparisons) {
  NDArray a = tensor({3}, {1, 2, 3});
  NDArray b = tensor({3}, {2, 2, 2});
  auto ints = [&](const char* op) {
    NDArray out = run_op(op, {a, b})[0];
    EXPECT_EQ(out.dtype(), DType::kBool);
    return out.to_ints();
  };
  EXPECT_EQ(ints("equal"), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(ints("not_equal"), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(ints("less"), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(ints("less_equal"), (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(ints("greater"), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(ints("greater_equal"), (std::vector<int64_t>{0, 1, 1}));
}

TEST(TensorBinaryKernel, ComparisonsBroadcastAndNaN) {
  NDArray col = tensor({2, 1}, {1, 5}, DType::kInt64);
  NDArray row = tensor({3}, {0, 1, 6}, DType::kInt64);
  EXPECT_EQ(run_op("greater", {col, row})[0].to_ints(), (std::vector<int64_t>{1, 0, 0, 1, 1, 0}));
  // NaN is unequal to everything, itself included.
  NDArray n = tensor({2}, {kNaN, 1});
  EXPECT_EQ(run_op("equal", {n, n})[0].to_ints(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(run_op("not_equal", {n, n})[0].to_ints(), (std::vector<int64_t>{1, 0}));
  NDArray bools = tensor({2}, {0, 1}, DType::kBool);
  EXPECT_EQ(run_op("less", {bools, tensor({}, {1}, DType::kBool)})[0].to_ints(), (std::vector<int64_t>{1, 0}));
}

TEST(TensorBinaryKernel, LargePerChannelBroadcast) {
  // A ResNet-sized activation plus a per-channel (C, 1, 1) tensor.
  const Shape shape = {1, 64, 112, 112};
  NDArray x = NDArray::empty(shape, DType::kFloat32);
  std::vector<double> bias = iota_values(64, 0, 1);
  NDArray out = run_op("add", {x, tensor({64, 1, 1}, bias)})[0];
  EXPECT_EQ(out.at(0), 0);
  EXPECT_EQ(out.at(112 * 112 * 63 + 5), 63);
}

}  // namespace
}  // namespace kiln::testing
