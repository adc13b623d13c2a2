// Type relations and reference kernels of nn.relu, nn.leaky_relu, nn.prelu, nn.dropout.
#include <cmath>
#include <limits>

#include "op_test_util.h"

namespace kiln::testing {
namespace {

TEST(NnActivationType, ElementwiseKeepType) {
  EXPECT_EQ(type_str(infer_op("nn.relu", {f32({kAnyDim, 8})})), "Tensor[(?, 8), float32]");
  EXPECT_EQ(type_str(infer_op("nn.relu", {tensor_type({3}, DType::kInt8)})), "Tensor[(3), int8]");
  EXPECT_EQ(type_str(infer_op("nn.leaky_relu", {f32({2, 3})}, {{"alpha", 0.2}})), "Tensor[(2, 3), float32]");
  EXPECT_EQ(OpRegistry::global().get("nn.relu").pattern, OpPattern::kElemwise);
  EXPECT_EQ(OpRegistry::global().get("nn.leaky_relu").pattern, OpPattern::kElemwise);
  EXPECT_EQ(OpRegistry::global().get("nn.prelu").pattern, OpPattern::kBroadcast);
  EXPECT_EQ(OpRegistry::global().get("nn.dropout").pattern, OpPattern::kOpaque);
}

TEST(NnActivationType, LeakyReluNeedsFloat) {
  std::string msg = infer_op_error("nn.leaky_relu", {tensor_type({2}, DType::kInt32)});
  EXPECT_NE(msg.find("'nn.leaky_relu'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int32"), std::string::npos) << msg;
}

TEST(NnActivationType, PreluAlphaMustMatchChannels) {
  EXPECT_EQ(type_str(infer_op("nn.prelu", {f32({2, 4, 5}), f32({4})})), "Tensor[(2, 4, 5), float32]");
  EXPECT_EQ(type_str(infer_op("nn.prelu", {f32({2, kAnyDim}), f32({4})})), "Tensor[(2, ?), float32]");
  EXPECT_EQ(type_str(infer_op("nn.prelu", {f32({2, 5, 4}), f32({4})}, {{"axis", -1}})), "Tensor[(2, 5, 4), float32]");
  std::string msg = infer_op_error("nn.prelu", {f32({2, 4, 5}), f32({3})});
  EXPECT_NE(msg.find("'nn.prelu'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'alpha'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(3)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2, 4, 5)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected (4)"), std::string::npos) << msg;
  msg = infer_op_error("nn.prelu", {f32({2, 4}), f32({1, 4})});
  EXPECT_NE(msg.find("(1, 4)"), std::string::npos) << msg;
}

TEST(NnActivationType, PreluAxisOutOfRange) {
  std::string msg = infer_op_error("nn.prelu", {f32({2, 4}), f32({4})}, {{"axis", 2}});
  EXPECT_NE(msg.find("'axis'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2, 4)"), std::string::npos) << msg;
}

TEST(NnActivationType, DropoutGivesTupleOfDataAndMask) {
  EXPECT_EQ(type_str(infer_op("nn.dropout", {f32({kAnyDim, 3})})),
            "(Tensor[(?, 3), float32], Tensor[(?, 3), float32])");
  std::string msg = infer_op_error("nn.dropout", {f32({2})}, {{"rate", 1.5}});
  EXPECT_NE(msg.find("'rate'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1.5"), std::string::npos) << msg;
}

TEST(NnActivationKernel, Relu) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  NDArray out = run_op("nn.relu", {tensor({5}, {-2, -0.5, 0, 0.5, nan})})[0];
  const double want[] = {0, 0, 0, 0.5};
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(out.at(i), want[i]) << i;
  EXPECT_TRUE(std::isnan(out.at(4)));  // NaN passes through
  EXPECT_EQ(run_op("nn.relu", {tensor({3}, {-128, 0, 127}, DType::kInt8)})[0].to_ints(),
            (std::vector<int64_t>{0, 0, 127}));
  expect_close(run_op("nn.relu", {tensor({2}, {-1.5, 2.5}, DType::kFloat16)})[0], {0, 2.5}, 0, 0);
}

TEST(NnActivationKernel, LeakyRelu) {
  expect_close(run_op("nn.leaky_relu", {tensor({3}, {-2, 0, 3})}, {{"alpha", 0.25}})[0], {-0.5, 0, 3});
  expect_close(run_op("nn.leaky_relu", {tensor({1}, {-100})})[0], {-1});  // default alpha 0.01
}

TEST(NnActivationKernel, PreluPerChannel) {
  // data (1, 2, 3): channel 0 slope 0.5, channel 1 slope -1.
  NDArray data = tensor({1, 2, 3}, {-2, 1, -4, -3, 0, 5});
  NDArray alpha = tensor({2}, {0.5, -1});
  expect_close(run_op("nn.prelu", {data, alpha})[0], {-1, 1, -2, 3, 0, 5});
  // axis -1: slopes follow the last axis.
  NDArray last = tensor({2, 2}, {-1, -1, 2, -4});
  expect_close(run_op("nn.prelu", {last, tensor({2}, {0.1, 0.2})}, {{"axis", -1}})[0], {-0.1, -0.2, 2, -0.8});
}

TEST(NnActivationKernel, DropoutIsIdentityWithOnesMask) {
  std::vector<NDArray> out = run_op("nn.dropout", {tensor({2, 2}, {1, -2, 3, 0})}, {{"rate", 0.3}});
  ASSERT_EQ(out.size(), 2u);
  expect_close(out[0], {1, -2, 3, 0}, 0, 0);
  expect_close(out[1], {1, 1, 1, 1}, 0, 0);
}

}  // namespace
}  // namespace kiln::testing
