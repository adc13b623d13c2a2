// Type relations and reference kernels of sigmoid, tanh, exp, log, sqrt, rsqrt, erf, abs,
// negative, clip and cast.
#include <cmath>
#include <limits>

#include "op/numpy_eval.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(TensorUnaryType, FloatOpsKeepTypeIncludingUnknownDims) {
  for (const char* op : {"sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "erf", "abs", "negative"}) {
    Type t = tensor_type({kAnyDim, 3}, DType::kFloat16);
    EXPECT_EQ(type_str(infer_op(op, {t})), "Tensor[(?, 3), float16]") << op;
  }
}

TEST(TensorUnaryType, PatternsAreElemwise) {
  for (const char* op : {"sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "erf", "abs", "negative", "clip", "cast"})
    EXPECT_EQ(OpRegistry::global().get(op).pattern, OpPattern::kElemwise) << op;
}

TEST(TensorUnaryType, TranscendentalRejectsIntegers) {
  std::string msg = infer_op_error("exp", {tensor_type({2}, DType::kInt32)});
  EXPECT_NE(msg.find("'exp'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'data'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int32"), std::string::npos) << msg;
  EXPECT_NE(msg.find("float"), std::string::npos) << msg;
}

TEST(TensorUnaryType, AbsAcceptsIntegersButNotBool) {
  EXPECT_EQ(type_str(infer_op("abs", {tensor_type({2}, DType::kInt8)})), "Tensor[(2), int8]");
  std::string msg = infer_op_error("negative", {tensor_type({2}, DType::kBool)});
  EXPECT_NE(msg.find("'negative'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bool"), std::string::npos) << msg;
}

TEST(TensorUnaryType, NonTensorArgumentIsAnError) {
  std::string msg = infer_op_error("sqrt", {tuple_type({f32({2})})});
  EXPECT_NE(msg.find("'sqrt'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'data'"), std::string::npos) << msg;
}

TEST(TensorUnaryType, ClipRequiresBothBounds) {
  std::string msg = infer_op_error("clip", {f32({2})}, {{"a_max", 1.0}});
  EXPECT_NE(msg.find("a_min"), std::string::npos) << msg;
  EXPECT_EQ(type_str(infer_op("clip", {f32({kAnyDim})}, {{"a_min", 0}, {"a_max", 6}})), "Tensor[(?), float32]");
}

TEST(TensorUnaryType, CastChangesDTypeOnly) {
  EXPECT_EQ(type_str(infer_op("cast", {f32({kAnyDim, 4})}, {{"dtype", "int64"}})), "Tensor[(?, 4), int64]");
  EXPECT_EQ(type_str(infer_op("cast", {tensor_type({}, DType::kBool)}, {{"dtype", "bfloat16"}})), "bfloat16");
}

TEST(TensorUnaryType, CastRejectsUnknownDType) {
  std::string msg = infer_op_error("cast", {f32({2})}, {{"dtype", "int65"}});
  EXPECT_NE(msg.find("'cast'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'dtype'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int65"), std::string::npos) << msg;
}

TEST(TensorUnaryKernel, SigmoidTanhExpLogHandValues) {
  const double ln3 = std::log(3.0), ln2 = std::log(2.0), e = 2.718281828459045;
  // sigmoid(ln 3) = 1 / (1 + 1/3) = 3/4; tanh(ln 2) = (2 - 1/2) / (2 + 1/2) = 3/5.
  expect_close(run_op("sigmoid", {tensor({3}, {0, ln3, -ln3})})[0], {0.5, 0.75, 0.25});
  expect_close(run_op("tanh", {tensor({3}, {0, ln2, -ln2})})[0], {0, 0.6, -0.6});
  expect_close(run_op("exp", {tensor({3}, {0, 1, ln3}, DType::kFloat64)})[0], {1, e, 3}, 1e-12, 1e-12);
  expect_close(run_op("log", {tensor({3}, {1, e, 0.25}, DType::kFloat64)})[0], {0, 1, -2 * ln2}, 1e-12, 1e-12);
}

TEST(TensorUnaryKernel, SigmoidSaturatesWithoutNaN) {
  NDArray out = run_op("sigmoid", {tensor({2}, {-1000, 1000})})[0];
  expect_close(out, {0, 1});
}

TEST(TensorUnaryKernel, SqrtAndRsqrt) {
  expect_close(run_op("sqrt", {tensor({3}, {4, 2.25, 0})})[0], {2, 1.5, 0});
  expect_close(run_op("rsqrt", {tensor({2}, {4, 0.25})})[0], {0.5, 2});
  EXPECT_TRUE(std::isnan(run_op("sqrt", {tensor({1}, {-1})})[0].at(0)));
}

TEST(TensorUnaryKernel, ErfMatchesKnownValuesAndPython) {
  // erf(1) = 0.8427007929497149 (A&S table); odd function.
  expect_close(run_op("erf", {tensor({3}, {0, 1, -1}, DType::kFloat64)})[0],
               {0, 0.8427007929497149, -0.8427007929497149}, 1e-15, 1e-15);
  std::vector<double> xs = {-3, -1.5, -0.3, 0.1, 0.7, 2.2, 4};
  std::vector<double> want = numpy::eval("[math.erf(v) for v in " + numpy::array({7}, xs) + ".tolist()]");
  expect_close(run_op("erf", {tensor({7}, xs)})[0], want, 1e-6, 1e-6);
}

TEST(TensorUnaryKernel, HalfAndBFloat16ComputeInFloat) {
  // e rounds to 2.71875 in float16 (10 mantissa bits: a step of 2^-9 between 2 and 4).
  expect_close(run_op("exp", {tensor({2}, {0, 1}, DType::kFloat16)})[0], {1, 2.71875}, 0, 0);
  NDArray out = run_op("sqrt", {tensor({2}, {16, 0.25}, DType::kBFloat16)})[0];
  EXPECT_EQ(out.dtype(), DType::kBFloat16);
  expect_close(out, {4, 0.5}, 0, 0);
}

TEST(TensorUnaryKernel, AbsAndNegativeOnIntegersWrap) {
  expect_close(run_op("abs", {tensor({4}, {-3, 0, 7, -2147483648.0}, DType::kInt32)})[0], {3, 0, 7, -2147483648.0}, 0,
               0);
  expect_close(run_op("negative", {tensor({2}, {-128, 5}, DType::kInt8)})[0], {-128, -5}, 0, 0);
  expect_close(run_op("negative", {tensor({2}, {1, 0}, DType::kUInt8)})[0], {255, 0}, 0, 0);
  expect_close(run_op("abs", {tensor({3}, {-1.5, 0, 2}, DType::kFloat16)})[0], {1.5, 0, 2}, 0, 0);
  expect_close(run_op("negative", {tensor({2}, {-9.2233720368547758e18, 3}, DType::kInt64)})[0],
               {-9.2233720368547758e18, -3}, 0, 0);
}

TEST(TensorUnaryKernel, ClipFloat) {
  NDArray out = run_op("clip", {tensor({4}, {-2, 0.5, 3, 1})}, {{"a_min", -1.0}, {"a_max", 1.0}})[0];
  expect_close(out, {-1, 0.5, 1, 1}, 0, 0);
}

TEST(TensorUnaryKernel, ClipKeepsNaNAndEmptyRangeGivesMax) {
  NDArray out = run_op("clip", {tensor({2}, {kNaN, 5})}, {{"a_min", 0.0}, {"a_max", 6.0}})[0];
  EXPECT_TRUE(std::isnan(out.at(0)));
  EXPECT_EQ(out.at(1), 5);
  // a_min > a_max: every element becomes a_max (ONNX Clip).
  expect_close(run_op("clip", {tensor({3}, {-5, 2, 9})}, {{"a_min", 3.0}, {"a_max", 1.0}})[0], {1, 1, 1}, 0, 0);
}

TEST(TensorUnaryKernel, ClipIntegersRoundsBoundsInward) {
  // Bounds -1.5 and 2.5 select the integers -1 .. 2.
  NDArray out = run_op("clip", {tensor({5}, {-5, -1, 0, 2, 9}, DType::kInt32)}, {{"a_min", -1.5}, {"a_max", 2.5}})[0];
  expect_close(out, {-1, -1, 0, 2, 2}, 0, 0);
  // Bounds beyond the type's range do not overflow.
  NDArray u8 = run_op("clip", {tensor({2}, {0, 255}, DType::kUInt8)}, {{"a_min", -1e300}, {"a_max", 1e300}})[0];
  expect_close(u8, {0, 255}, 0, 0);
}

TEST(TensorUnaryKernel, CastFloatToIntTruncatesAndSaturates) {
  NDArray out = run_op("cast", {tensor({6}, {2.7, -2.7, -0.5, kNaN, 1e10, -1e10})}, {{"dtype", "int32"}})[0];
  EXPECT_EQ(out.dtype(), DType::kInt32);
  EXPECT_EQ(out.to_ints(), (std::vector<int64_t>{2, -2, 0, 0, 2147483647, -2147483648LL}));
  NDArray u8 = run_op("cast", {tensor({3}, {-3.5, 300, 254.9}, DType::kFloat64)}, {{"dtype", "uint8"}})[0];
  EXPECT_EQ(u8.to_ints(), (std::vector<int64_t>{0, 255, 254}));
}

TEST(TensorUnaryKernel, CastBetweenIntegersWraps) {
  NDArray out = run_op("cast", {tensor({3}, {300, -129, 5}, DType::kInt32)}, {{"dtype", "int8"}})[0];
  EXPECT_EQ(out.to_ints(), (std::vector<int64_t>{44, 127, 5}));
}

TEST(TensorUnaryKernel, CastRoundsToNearestEvenInHalf) {
  // 2049 lies halfway between float16 neighbours 2048 and 2050; ties go to the even 2048.
  NDArray out = run_op("cast", {tensor({2}, {2049, 2051}, DType::kInt64)}, {{"dtype", "float16"}})[0];
  expect_close(out, {2048, 2052}, 0, 0);
}

TEST(TensorUnaryKernel, CastToAndFromBool) {
  NDArray b = run_op("cast", {tensor({4}, {0, -0.0, 0.1, kNaN})}, {{"dtype", "bool"}})[0];
  EXPECT_EQ(b.to_ints(), (std::vector<int64_t>{0, 0, 1, 1}));
  NDArray f = run_op("cast", {tensor({2}, {1, 0}, DType::kBool)}, {{"dtype", "float32"}})[0];
  expect_close(f, {1, 0}, 0, 0);
}

TEST(TensorUnaryKernel, CastConvertsBetweenEveryPairOfDTypes) {
  const DType all[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64, DType::kInt8,
                       DType::kInt16,   DType::kInt32,   DType::kInt64,    DType::kUInt8,   DType::kUInt16,
                       DType::kUInt32,  DType::kUInt64,  DType::kBool};
  for (DType from : all) {
    for (DType to : all) {
      // Values every dtype represents exactly (bool holds only 0 and 1).
      std::vector<double> in = from == DType::kBool ? std::vector<double>{0, 1, 1} : std::vector<double>{0, 3, 100};
      std::vector<double> want = in;
      if (to == DType::kBool)
        for (double& v : want) v = v != 0;
      NDArray out = run_op("cast", {tensor({3}, in, from)}, {{"dtype", std::string(dtype_name(to))}})[0];
      ASSERT_EQ(out.dtype(), to);
      SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to)));
      expect_close(out, want, 0, 0);
    }
  }
}

TEST(TensorUnaryKernel, EmptyTensorIsFine) {
  NDArray out = run_op("exp", {tensor({0, 3}, {})})[0];
  EXPECT_EQ(out.shape(), (Shape{0, 3}));
}

}  // namespace
}  // namespace kiln::testing
