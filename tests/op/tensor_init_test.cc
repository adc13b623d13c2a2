// Type relations and reference kernels of zeros, ones and full.
#include "op_test_util.h"

namespace kiln::testing {
namespace {

using Ints = std::vector<int64_t>;

TEST(TensorInitType, ShapeAndDTypeFromAttributes) {
  EXPECT_EQ(type_str(infer_op("zeros", {}, {{"shape", Ints{2, 3}}})), "Tensor[(2, 3), float32]");
  EXPECT_EQ(type_str(infer_op("ones", {}, {{"shape", Ints{4}}, {"dtype", "int64"}})), "Tensor[(4), int64]");
  EXPECT_EQ(type_str(infer_op("zeros", {}, {{"shape", Ints{}}})), "float32");
  EXPECT_EQ(OpRegistry::global().get("zeros").pattern, OpPattern::kElemwise);
  EXPECT_EQ(OpRegistry::global().get("full").pattern, OpPattern::kElemwise);
}

TEST(TensorInitType, FullTakesDTypeFromFillValueByDefault) {
  Type fill = tensor_type({}, DType::kInt32);
  EXPECT_EQ(type_str(infer_op("full", {fill}, {{"shape", Ints{2}}})), "Tensor[(2), int32]");
  EXPECT_EQ(type_str(infer_op("full", {fill}, {{"shape", Ints{2}}, {"dtype", "float16"}})), "Tensor[(2), float16]");
}

TEST(TensorInitType, Errors) {
  std::string msg = infer_op_error("zeros", {}, {{"shape", Ints{2, -1}}});
  EXPECT_NE(msg.find("'zeros'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'shape'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2, ?)"), std::string::npos) << msg;
  msg = infer_op_error("ones", {}, {{"shape", Ints{2}}, {"dtype", "float"}});
  EXPECT_NE(msg.find("'ones'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'dtype'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\"float\""), std::string::npos) << msg;
  msg = infer_op_error("zeros", {});
  EXPECT_NE(msg.find("'shape'"), std::string::npos) << msg;
  msg = infer_op_error("full", {f32({2})}, {{"shape", Ints{3}}});
  EXPECT_NE(msg.find("'full'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'fill_value'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2)"), std::string::npos) << msg;
  msg = infer_op_error("zeros", {f32({})}, {{"shape", Ints{3}}});
  EXPECT_NE(msg.find("number of arguments"), std::string::npos) << msg;
}

TEST(TensorInitKernel, ZerosAndOnes) {
  NDArray z = run_op("zeros", {}, {{"shape", Ints{2, 2}}, {"dtype", "int16"}})[0];
  EXPECT_EQ(z.dtype(), DType::kInt16);
  EXPECT_EQ(z.to_ints(), (Ints{0, 0, 0, 0}));
  for (const char* dtype : {"float32", "float16", "bfloat16", "float64", "uint8", "int64", "bool"}) {
    NDArray o = run_op("ones", {}, {{"shape", Ints{3}}, {"dtype", dtype}})[0];
    EXPECT_EQ(dtype_name(o.dtype()), dtype);
    expect_close(o, {1, 1, 1}, 0, 0);
  }
}

TEST(TensorInitKernel, FullConvertsLikeCast) {
  NDArray f = run_op("full", {tensor({}, {2.5})}, {{"shape", Ints{2, 1}}})[0];
  EXPECT_EQ(f.shape(), (Shape{2, 1}));
  expect_close(f, {2.5, 2.5}, 0, 0);
  NDArray i = run_op("full", {tensor({}, {-2.7})}, {{"shape", Ints{3}}, {"dtype", "int32"}})[0];
  EXPECT_EQ(i.to_ints(), (Ints{-2, -2, -2}));  // truncation toward zero
  NDArray h = run_op("full", {tensor({}, {7}, DType::kInt64)}, {{"shape", Ints{2}}, {"dtype", "float16"}})[0];
  expect_close(h, {7, 7}, 0, 0);
}

}  // namespace
}  // namespace kiln::testing
