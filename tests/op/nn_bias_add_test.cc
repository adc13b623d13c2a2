// Type relation and reference kernel of nn.bias_add.
#include "op_test_util.h"

namespace kiln::testing {
namespace {

TEST(NnBiasAddType, BiasAlongAxis) {
  EXPECT_EQ(type_str(infer_op("nn.bias_add", {f32({1, 3, 2, 2}), f32({3})})), "Tensor[(1, 3, 2, 2), float32]");
  EXPECT_EQ(type_str(infer_op("nn.bias_add", {f32({kAnyDim, 3}), f32({3})})), "Tensor[(?, 3), float32]");
  EXPECT_EQ(type_str(infer_op("nn.bias_add", {f32({2, kAnyDim}), f32({5})})), "Tensor[(2, ?), float32]");
  EXPECT_EQ(type_str(infer_op("nn.bias_add", {f32({2, 7}), f32({7})}, {{"axis", -1}})), "Tensor[(2, 7), float32]");
  EXPECT_EQ(OpRegistry::global().get("nn.bias_add").pattern, OpPattern::kBroadcast);
}

TEST(NnBiasAddType, MismatchNamesBothShapes) {
  std::string msg = infer_op_error("nn.bias_add", {f32({1, 3, 2, 2}), f32({4})});
  EXPECT_NE(msg.find("'nn.bias_add'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'bias'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(4)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(1, 3, 2, 2)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected (3)"), std::string::npos) << msg;
  msg = infer_op_error("nn.bias_add", {f32({2, 3}), f32({1, 3})});
  EXPECT_NE(msg.find("(1, 3)"), std::string::npos) << msg;
}

TEST(NnBiasAddType, OtherErrors) {
  std::string msg = infer_op_error("nn.bias_add", {f32({2, 3}), f32({3})}, {{"axis", 2}});
  EXPECT_NE(msg.find("'axis'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2, 3)"), std::string::npos) << msg;
  msg = infer_op_error("nn.bias_add", {f32({2, 3}), tensor_type({3}, DType::kFloat16)});
  EXPECT_NE(msg.find("'data'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'bias'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("float16"), std::string::npos) << msg;
}

TEST(NnBiasAddKernel, ChannelAxis) {
  // (1, 2, 2, 2) + bias (2,) on axis 1.
  NDArray data = tensor({1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  expect_close(run_op("nn.bias_add", {data, tensor({2}, {10, -10})})[0], {10, 11, 12, 13, -6, -5, -4, -3});
}

TEST(NnBiasAddKernel, LastAxisAndIntegers) {
  NDArray data = tensor({2, 3}, {1, 2, 3, 4, 5, 6}, DType::kInt32);
  NDArray bias = tensor({3}, {100, 0, 2147483647}, DType::kInt32);
  EXPECT_EQ(run_op("nn.bias_add", {data, bias}, {{"axis", -1}})[0].to_ints(),
            (std::vector<int64_t>{101, 2, -2147483646LL, 104, 5, -2147483643LL}));  // wraps
  NDArray h = run_op("nn.bias_add", {tensor({2, 1}, {1, 2}, DType::kFloat16), tensor({1}, {0.5}, DType::kFloat16)},
                     {{"axis", 1}})[0];
  expect_close(h, {1.5, 2.5}, 0, 0);
}

}  // namespace
}  // namespace kiln::testing
