// Type relations and reference kernels of bitwise_and, bitwise_or, bitwise_xor, bitwise_not.
#include "op_test_util.h"

namespace kiln::testing {
namespace {

TEST(TensorBitwiseType, BroadcastIntegers) {
  const Type a = tensor_type({2, 1, 3}, DType::kInt32), b = tensor_type({4, 1}, DType::kInt32);
  for (const char* op : {"bitwise_and", "bitwise_or", "bitwise_xor"}) {
    EXPECT_EQ(type_str(infer_op(op, {a, b})), "Tensor[(2, 4, 3), int32]") << op;
    EXPECT_EQ(OpRegistry::global().get(op).pattern, OpPattern::kBroadcast) << op;
  }
  EXPECT_EQ(type_str(infer_op("bitwise_not", {tensor_type({kAnyDim, 2}, DType::kUInt16)})), "Tensor[(?, 2), uint16]");
  EXPECT_EQ(OpRegistry::global().get("bitwise_not").pattern, OpPattern::kElemwise);
}

TEST(TensorBitwiseType, ErrorsNameArgumentsAndDtypes) {
  std::string e = infer_op_error("bitwise_and", {f32({2}), f32({2})});
  EXPECT_NE(e.find("'bitwise_and'"), std::string::npos) << e;
  EXPECT_NE(e.find("an integer dtype"), std::string::npos) << e;
  EXPECT_NE(e.find("float32"), std::string::npos) << e;
  e = infer_op_error("bitwise_or", {tensor_type({2}, DType::kInt8), tensor_type({2}, DType::kUInt8)});
  EXPECT_NE(e.find("'rhs'"), std::string::npos) << e;
  EXPECT_NE(e.find("uint8"), std::string::npos) << e;
  e = infer_op_error("bitwise_xor", {tensor_type({2, 3}, DType::kInt64), tensor_type({4}, DType::kInt64)});
  EXPECT_NE(e.find("cannot broadcast"), std::string::npos) << e;
  EXPECT_NE(e.find("(2, 3)"), std::string::npos) << e;
  e = infer_op_error("bitwise_not", {tensor_type({2}, DType::kBool)});
  EXPECT_NE(e.find("bool"), std::string::npos) << e;
}

TEST(TensorBitwiseKernel, SignedValuesWithBroadcasting) {
  NDArray a = tensor({2, 2}, {12, -1, 0x55, -128}, DType::kInt8), b = tensor({2}, {10, 0x0f}, DType::kInt8);
  EXPECT_EQ(run_op("bitwise_and", {a, b})[0].to_ints(), (std::vector<int64_t>{8, 15, 0, 0}));
  EXPECT_EQ(run_op("bitwise_or", {a, b})[0].to_ints(), (std::vector<int64_t>{14, -1, 0x5f, -113}));
  EXPECT_EQ(run_op("bitwise_xor", {a, b})[0].to_ints(), (std::vector<int64_t>{6, -16, 0x5f, -113}));
  EXPECT_EQ(run_op("bitwise_not", {a})[0].to_ints(), (std::vector<int64_t>{-13, 0, -0x56, 127}));
}

TEST(TensorBitwiseKernel, UnsignedAndWideDtypes) {
  NDArray a = tensor({3}, {0, 200, 255}, DType::kUInt8);
  EXPECT_EQ(run_op("bitwise_not", {a})[0].to_ints(), (std::vector<int64_t>{255, 55, 0}));
  NDArray s = tensor({1}, {0xf0}, DType::kUInt8);
  EXPECT_EQ(run_op("bitwise_xor", {s, a})[0].to_ints(), (std::vector<int64_t>{0xf0, 200 ^ 0xf0, 0x0f}));
  NDArray big = tensor({2}, {1LL << 40, -(1LL << 40)}, DType::kInt64);
  EXPECT_EQ(run_op("bitwise_and", {big, tensor({1}, {-1}, DType::kInt64)})[0].to_ints(),
            (std::vector<int64_t>{1LL << 40, -(1LL << 40)}));
  EXPECT_EQ(run_op("bitwise_not", {tensor({2}, {0, 65535}, DType::kUInt16)})[0].to_ints(),
            (std::vector<int64_t>{65535, 0}));
  EXPECT_EQ(
      run_op("bitwise_or", {tensor({2}, {1, 2}, DType::kUInt32), tensor({2}, {4, 2}, DType::kUInt32)})[0].to_ints(),
      (std::vector<int64_t>{5, 2}));
}

}  // namespace
}  // namespace kiln::testing
