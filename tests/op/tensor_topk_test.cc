// Type relation and reference kernel of topk.
#include <limits>

#include "op_test_util.h"

namespace kiln::testing {
namespace {

TEST(TensorTopkType, TupleOfValuesAndIndices) {
  EXPECT_EQ(type_str(infer_op("topk", {f32({3, 5})}, {{"k", 2}, {"axis", 1}})),
            "(Tensor[(3, 2), float32], Tensor[(3, 2), int64])");
  EXPECT_EQ(type_str(infer_op("topk", {f32({3, 5})}, {{"k", 2}, {"axis", 0}, {"ret_type", "indices"}})),
            "Tensor[(2, 5), int64]");
  EXPECT_EQ(type_str(infer_op("topk", {f32({3, 5})}, {{"k", 0}, {"ret_type", "values"}})), "Tensor[(3, 5), float32]");
}

TEST(TensorTopkType, KLargerThanAxisNamesShape) {
  std::string msg = infer_op_error("topk", {f32({3, 5})}, {{"k", 4}, {"axis", 0}});
  EXPECT_NE(msg.find("'topk'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'k'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(3, 5)"), std::string::npos) << msg;
  msg = infer_op_error("topk", {f32({3})}, {{"ret_type", "all"}});
  EXPECT_NE(msg.find("ret_type"), std::string::npos) << msg;
}

TEST(TensorTopkKernel, LargestWithTiesByLowerIndex) {
  NDArray x = tensor({2, 4}, {3, 1, 3, 2, 0, 5, 5, -1});
  auto out = run_op("topk", {x}, {{"k", 3}, {"axis", 1}});
  expect_close(out[0], {3, 3, 2, 5, 5, 0});
  EXPECT_EQ(out[1].to_ints(), (std::vector<int64_t>{0, 2, 3, 1, 2, 0}));
}

TEST(TensorTopkKernel, SmallestAlongAxis0AndNaNLast) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  NDArray x = tensor({3, 2}, {nan, 4, 1, 4, 2, -3});
  auto out = run_op("topk", {x}, {{"k", 2}, {"axis", 0}, {"is_ascend", true}});
  expect_close(out[0], {1, -3, 2, 4});
  EXPECT_EQ(out[1].to_ints(), (std::vector<int64_t>{1, 2, 2, 0}));
  auto largest = run_op("topk", {x}, {{"k", 1}, {"axis", 0}, {"ret_type", "indices"}, {"dtype", "int32"}});
  EXPECT_EQ(largest[0].dtype(), DType::kInt32);
  EXPECT_EQ(largest[0].to_ints(), (std::vector<int64_t>{0, 0}));
}

}  // namespace
}  // namespace kiln::testing
