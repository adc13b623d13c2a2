// Type relations and reference kernels of on_device and device_copy.
#include "op_test_util.h"

namespace kiln::testing {
namespace {

TEST(AnnotationDeviceType, IdentityOnTensorsAndTuples) {
  EXPECT_EQ(type_str(infer_op("on_device", {f32({kAnyDim, 2})}, {{"virtual_device", "cpu"}})),
            "Tensor[(?, 2), float32]");
  Type tup = tuple_type({f32({2}), tensor_type({}, DType::kInt64)});
  EXPECT_EQ(type_str(infer_op("device_copy", {tup}, {{"src_device", "cpu"}, {"dst_device", "cpu"}})),
            "(Tensor[(2), float32], int64)");
  EXPECT_EQ(OpRegistry::global().get("on_device").pattern, OpPattern::kOpaque);
  EXPECT_EQ(OpRegistry::global().get("device_copy").pattern, OpPattern::kOpaque);
}

TEST(AnnotationDeviceType, AttributesHaveRelayDefaults) {
  Attrs attrs = OpRegistry::global().get("on_device").normalize({{"virtual_device", "cpu"}});
  EXPECT_EQ(attrs.get_string("virtual_device"), "cpu");
  EXPECT_FALSE(attrs.get_bool("constrain_result"));
  EXPECT_TRUE(attrs.get_bool("constrain_body"));
  std::string msg = infer_op_error("on_device", {f32({2})}, {{"device", "cpu"}});
  EXPECT_NE(msg.find("'on_device'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'device'"), std::string::npos) << msg;
  msg = infer_op_error("device_copy", {f32({2}), f32({2})});
  EXPECT_NE(msg.find("number of arguments"), std::string::npos) << msg;
}

TEST(AnnotationDeviceKernel, CopiesData) {
  NDArray in = tensor({2, 2}, {1, 2, 3, 4});
  NDArray out = run_op("on_device", {in}, {{"virtual_device", "cpu"}})[0];
  expect_close(out, {1, 2, 3, 4}, 0, 0);
  EXPECT_NE(out.raw(), in.raw());  // a copy, so writing the result cannot change the input
  NDArray ints = run_op("device_copy", {tensor({3}, {7, 8, 9}, DType::kInt64)})[0];
  EXPECT_EQ(ints.to_ints(), (std::vector<int64_t>{7, 8, 9}));
}

TEST(AnnotationDeviceKernel, TupleArgumentCopiesEveryField) {
  std::vector<NDArray> fields = {tensor({2}, {1, 2}), tensor({}, {5}, DType::kInt32)};
  std::vector<NDArray> out = run_op("device_copy", {fields});
  ASSERT_EQ(out.size(), 2u);
  expect_close(out[0], {1, 2}, 0, 0);
  EXPECT_EQ(out[1].dtype(), DType::kInt32);
  EXPECT_EQ(out[1].to_ints(), (std::vector<int64_t>{5}));
}

}  // namespace
}  // namespace kiln::testing
