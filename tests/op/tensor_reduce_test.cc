// Type relations and reference kernels of sum, mean, max, min, prod, argmax, argmin.
#include <cmath>
#include <limits>

#include "op/numpy_eval.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
using Ints = std::vector<int64_t>;

TEST(TensorReduceType, AxisKeepdimsExclude) {
  Type t = f32({2, 3, 4});
  EXPECT_EQ(type_str(infer_op("sum", {t}, {{"axis", Ints{1}}})), "Tensor[(2, 4), float32]");
  EXPECT_EQ(type_str(infer_op("sum", {t}, {{"axis", Ints{1}}, {"keepdims", true}})), "Tensor[(2, 1, 4), float32]");
  EXPECT_EQ(type_str(infer_op("sum", {t}, {{"axis", Ints{1}}, {"exclude", true}})), "Tensor[(3), float32]");
  EXPECT_EQ(type_str(infer_op("mean", {t}, {{"axis", Ints{-1, 0}}})), "Tensor[(3), float32]");
  EXPECT_EQ(type_str(infer_op("max", {t}, {{"axis", 2}})), "Tensor[(2, 3), float32]");
}

TEST(TensorReduceType, NoneOrEmptyAxisReducesEverything) {
  Type t = f32({2, 3});
  EXPECT_EQ(type_str(infer_op("prod", {t})), "float32");
  EXPECT_EQ(type_str(infer_op("prod", {t}, {{"axis", Ints{}}})), "float32");
  EXPECT_EQ(type_str(infer_op("min", {t}, {{"keepdims", true}})), "Tensor[(1, 1), float32]");
}

TEST(TensorReduceType, UnknownDims) {
  EXPECT_EQ(type_str(infer_op("sum", {f32({kAnyDim, 3})}, {{"axis", Ints{1}}})), "Tensor[(?), float32]");
  EXPECT_EQ(type_str(infer_op("sum", {f32({kAnyDim, 3})}, {{"axis", Ints{0}}, {"keepdims", true}})),
            "Tensor[(1, 3), float32]");
}

TEST(TensorReduceType, ArgReduceGivesInt64) {
  EXPECT_EQ(type_str(infer_op("argmax", {f32({2, 3})}, {{"axis", Ints{1}}})), "Tensor[(2), int64]");
  EXPECT_EQ(type_str(infer_op("argmin", {tensor_type({2, 3}, DType::kInt8)}, {{"axis", Ints{0}}, {"keepdims", true}})),
            "Tensor[(1, 3), int64]");
  for (const char* op : {"sum", "mean", "max", "min", "prod", "argmax", "argmin"})
    EXPECT_EQ(OpRegistry::global().get(op).pattern, OpPattern::kCommReduce) << op;
}

TEST(TensorReduceType, AxisOutOfRangeNamesOpAxisAndShape) {
  std::string msg = infer_op_error("sum", {f32({2, 3, 4})}, {{"axis", Ints{3}}});
  EXPECT_NE(msg.find("'sum'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'axis'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2, 3, 4)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[-3, 3)"), std::string::npos) << msg;
}

TEST(TensorReduceType, RepeatedAxisIsAnError) {
  std::string msg = infer_op_error("mean", {f32({2, 3})}, {{"axis", Ints{1, -1}}});
  EXPECT_NE(msg.find("'mean'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("more than once"), std::string::npos) << msg;
}

TEST(TensorReduceType, ArgReduceOfEmptyAxisIsAnError) {
  std::string msg = infer_op_error("argmax", {f32({2, 0})}, {{"axis", Ints{1}}});
  EXPECT_NE(msg.find("'argmax'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2, 0)"), std::string::npos) << msg;
  EXPECT_EQ(infer_op_error("max", {f32({2, 0})}, {{"axis", Ints{1}}}), "");
}

TEST(TensorReduceType, SumRejectsBoolMaxAccepts) {
  std::string msg = infer_op_error("sum", {tensor_type({2}, DType::kBool)});
  EXPECT_NE(msg.find("bool"), std::string::npos) << msg;
  EXPECT_EQ(type_str(infer_op("max", {tensor_type({2}, DType::kBool)})), "bool");
}

TEST(TensorReduceKernel, HandWorkedMatrix) {
  NDArray m = tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_close(run_op("sum", {m}, {{"axis", Ints{0}}})[0], {5, 7, 9});
  expect_close(run_op("sum", {m}, {{"axis", Ints{1}}})[0], {6, 15});
  expect_close(run_op("sum", {m})[0], {21});
  expect_close(run_op("mean", {m}, {{"axis", Ints{1}}})[0], {2, 5});
  expect_close(run_op("prod", {m}, {{"axis", Ints{1}}})[0], {6, 120});
  expect_close(run_op("max", {m}, {{"axis", Ints{0}}})[0], {4, 5, 6});
  expect_close(run_op("min", {m}, {{"axis", Ints{1}}, {"keepdims", true}})[0], {1, 4});
  EXPECT_EQ(run_op("argmax", {m}, {{"axis", Ints{1}}})[0].to_ints(), (Ints{2, 2}));
  EXPECT_EQ(run_op("argmin", {m})[0].to_ints(), (Ints{0}));
}

// Values with no ties: a fixed permutation of 0..n-1, scaled.
std::vector<double> scrambled(int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>((i * 37 + 11) % n) * 0.5 - 3;
  return v;
}

std::string py_axes(const Ints& axes) {
  std::string s = "(";
  for (int64_t a : axes) s += std::to_string(a) + ",";
  return s + ")";
}

TEST(TensorReduceKernel, ReductionsMatchNumpy) {
  const Shape shape = {2, 3, 4, 5};
  std::vector<double> values = scrambled(num_elements(shape));
  const Ints axis_sets[] = {{0}, {1}, {3}, {1, 2}, {0, 3}, {0, 2, 3}, {-1, -3}, {0, 1, 2, 3}};
  const char* ops[] = {"sum", "mean", "max", "min", "prod"};
  std::vector<std::string> exprs;
  for (const Ints& axes : axis_sets)
    for (const char* op : ops) exprs.push_back("np." + std::string(op) + "(x, axis=" + py_axes(axes) + ")");
  auto want = numpy::eval_many(exprs, "x = " + numpy::array(shape, values, "float64"));
  ASSERT_EQ(want.size(), exprs.size());
  size_t next = 0;
  for (const Ints& axes : axis_sets) {
    for (const char* op : ops) {
      SCOPED_TRACE(exprs[next]);
      expect_close(run_op(op, {tensor(shape, values, DType::kFloat64)}, {{"axis", axes}})[0], want[next++], 1e-9, 1e-9);
    }
  }
}

TEST(TensorReduceKernel, ExcludeAndKeepdimsMatchNumpy) {
  const Shape shape = {3, 4, 2};
  std::vector<double> values = scrambled(num_elements(shape));
  // exclude=True with axis [1] reduces axes 0 and 2.
  std::vector<double> want = numpy::eval("np.sum(" + numpy::array(shape, values) + ", axis=(0, 2), keepdims=True)");
  NDArray out = run_op("sum", {tensor(shape, values)}, {{"axis", Ints{1}}, {"exclude", true}, {"keepdims", true}})[0];
  EXPECT_EQ(out.shape(), (Shape{1, 4, 1}));
  expect_close(out, want);
}

TEST(TensorReduceKernel, ArgReduceMatchesNumpyOnEachAxis) {
  const Shape shape = {3, 4, 5};
  std::vector<double> values = scrambled(num_elements(shape));
  auto want = numpy::eval_many({"np.argmax(x, axis=0)", "np.argmin(x, axis=0)", "np.argmax(x, axis=1)",
                                "np.argmin(x, axis=1)", "np.argmax(x, axis=2)", "np.argmin(x, axis=2)"},
                               "x = " + numpy::array(shape, values));
  ASSERT_EQ(want.size(), 6u);
  for (int64_t axis = 0; axis < 3; ++axis) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    expect_close(run_op("argmax", {tensor(shape, values)}, {{"axis", axis}})[0], want[2 * axis], 0, 0);
    expect_close(run_op("argmin", {tensor(shape, values)}, {{"axis", axis}})[0], want[2 * axis + 1], 0, 0);
  }
}

TEST(TensorReduceKernel, ArgReduceOverSeveralAxesIsRowMajorOverThem) {
  const Shape shape = {2, 3, 4};
  std::vector<double> values = scrambled(num_elements(shape));
  // Index over the flattened (axis 0, axis 2) plane for each j of axis 1.
  auto want = numpy::eval_many({"np.argmax(x.transpose(1, 0, 2).reshape(3, 8), axis=1)", "np.argmin(x)"},
                               "x = " + numpy::array(shape, values));
  ASSERT_EQ(want.size(), 2u);
  expect_close(run_op("argmax", {tensor(shape, values)}, {{"axis", Ints{0, 2}}})[0], want[0], 0, 0);
  expect_close(run_op("argmin", {tensor(shape, values)})[0], want[1], 0, 0);
}

TEST(TensorReduceKernel, ArgReduceTiesAndNaN) {
  NDArray ties = tensor({5}, {1, 3, 3, 0, 0});
  EXPECT_EQ(run_op("argmax", {ties})[0].to_ints(), (Ints{1}));
  EXPECT_EQ(run_op("argmax", {ties}, {{"select_last_index", true}})[0].to_ints(), (Ints{2}));
  EXPECT_EQ(run_op("argmin", {ties})[0].to_ints(), (Ints{3}));
  EXPECT_EQ(run_op("argmin", {ties}, {{"select_last_index", true}})[0].to_ints(), (Ints{4}));
  // NaN wins both, as in numpy.
  NDArray with_nan = tensor({4}, {1, kNaN, 5, -2});
  EXPECT_EQ(run_op("argmax", {with_nan})[0].to_ints(), (Ints{1}));
  EXPECT_EQ(run_op("argmin", {with_nan})[0].to_ints(), (Ints{1}));
  // Along a kept inner axis too: columns of a (3, 2) matrix.
  NDArray cols = tensor({3, 2}, {1, 9, 4, 9, 4, 2});
  EXPECT_EQ(run_op("argmax", {cols}, {{"axis", Ints{0}}})[0].to_ints(), (Ints{1, 0}));
  EXPECT_EQ(run_op("argmax", {cols}, {{"axis", Ints{0}}, {"select_last_index", true}})[0].to_ints(), (Ints{2, 1}));
}

TEST(TensorReduceKernel, MaxMinPropagateNaN) {
  NDArray v = tensor({2, 3}, {1, kNaN, 3, 4, 5, 6});
  NDArray mx = run_op("max", {v}, {{"axis", Ints{1}}})[0];
  EXPECT_TRUE(std::isnan(mx.at(0)));
  EXPECT_EQ(mx.at(1), 6);
  NDArray mn = run_op("min", {v}, {{"axis", Ints{0}}})[0];
  EXPECT_EQ(mn.at(0), 1);
  EXPECT_TRUE(std::isnan(mn.at(1)));
  // -inf is a legitimate maximum.
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(run_op("max", {tensor({2}, {-inf, -inf})})[0].at(0), -inf);
}

TEST(TensorReduceKernel, Integers) {
  NDArray i32 = tensor({2, 2}, {2147483647, 1, -7, 0}, DType::kInt32);
  EXPECT_EQ(run_op("sum", {i32}, {{"axis", Ints{1}}})[0].to_ints(), (Ints{-2147483648LL, -7}));  // wraps
  EXPECT_EQ(run_op("mean", {i32}, {{"axis", Ints{1}}})[0].to_ints(), (Ints{1073741824, -3}));    // truncates
  EXPECT_EQ(run_op("max", {i32}, {{"axis", Ints{0}}})[0].to_ints(), (Ints{2147483647, 1}));
  NDArray u8 = tensor({3}, {200, 100, 2}, DType::kUInt8);
  EXPECT_EQ(run_op("prod", {u8})[0].to_ints(), (Ints{(200 * 100 * 2) % 256}));
  EXPECT_EQ(run_op("min", {u8})[0].to_ints(), (Ints{2}));
  NDArray b = tensor({2, 2}, {0, 1, 0, 0}, DType::kBool);
  EXPECT_EQ(run_op("max", {b}, {{"axis", Ints{1}}})[0].to_ints(), (Ints{1, 0}));
  EXPECT_EQ(run_op("argmax", {b}, {{"axis", Ints{1}}})[0].to_ints(), (Ints{1, 0}));
}

TEST(TensorReduceKernel, HalfAccumulatesInWideType) {
  // 4096 ones sum to 4096 exactly; a float16 accumulator would stick at 2048.
  std::vector<double> ones(4096, 1.0);
  NDArray out = run_op("sum", {tensor({4096}, ones, DType::kFloat16)})[0];
  EXPECT_EQ(out.dtype(), DType::kFloat16);
  expect_close(out, {4096}, 0, 0);
  expect_close(run_op("mean", {tensor({2, 2}, {1, 2, 3, 5}, DType::kBFloat16)}, {{"axis", Ints{1}}})[0], {1.5, 4}, 0,
               0);
}

TEST(TensorReduceKernel, SizeOneAndScalarInputs) {
  expect_close(run_op("sum", {tensor({}, {2.5})})[0], {2.5});
  expect_close(run_op("mean", {tensor({1, 1, 3}, {3, 6, 9})}, {{"axis", Ints{0, 1}}})[0], {3, 6, 9});
  EXPECT_EQ(run_op("argmax", {tensor({1, 1}, {7})})[0].to_ints(), (Ints{0}));
}

TEST(TensorReduceKernel, EmptyAxisGivesIdentity) {
  // As ONNX specifies for reductions over an empty set.
  const double inf = std::numeric_limits<double>::infinity();
  NDArray empty = tensor({2, 0}, {});
  const Attrs axis1 = {{"axis", Ints{1}}};
  expect_close(run_op("sum", {empty}, axis1)[0], {0, 0}, 0, 0);
  expect_close(run_op("prod", {empty}, axis1)[0], {1, 1}, 0, 0);
  EXPECT_EQ(run_op("max", {empty}, axis1)[0].to_doubles(), (std::vector<double>{-inf, -inf}));
  EXPECT_EQ(run_op("min", {empty}, axis1)[0].to_doubles(), (std::vector<double>{inf, inf}));
  EXPECT_TRUE(std::isnan(run_op("mean", {empty}, axis1)[0].at(0)));
  EXPECT_EQ(run_op("max", {tensor({0}, {}, DType::kInt8)})[0].to_ints(), (Ints{-128}));
  EXPECT_EQ(run_op("mean", {tensor({0}, {}, DType::kInt32)})[0].to_ints(), (Ints{0}));
}

TEST(TensorReduceKernel, GlobalAveragePoolShape) {
  // mean over (2, 3) of an NCHW tensor: the merged inner row is H*W long.
  const Shape shape = {2, 3, 4, 4};
  std::vector<double> values(static_cast<size_t>(num_elements(shape)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i / 16);  // channel index
  NDArray out = run_op("mean", {tensor(shape, values)}, {{"axis", Ints{2, 3}}, {"keepdims", true}})[0];
  EXPECT_EQ(out.shape(), (Shape{2, 3, 1, 1}));
  expect_close(out, {0, 1, 2, 3, 4, 5});
}

}  // namespace
}  // namespace kiln::testing
