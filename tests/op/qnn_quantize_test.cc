// qnn.quantize, qnn.dequantize, qnn.requantize: type relations and reference kernels
// against hand-worked values.
#include "op_test_util.h"

namespace kiln::testing {
namespace {

Type typed(Shape shape, DType t) { return tensor_type(std::move(shape), t); }
NDArray u8(Shape shape, const std::vector<double>& v) { return tensor(std::move(shape), v, DType::kUInt8); }
NDArray i8(Shape shape, const std::vector<double>& v) { return tensor(std::move(shape), v, DType::kInt8); }
NDArray i32(Shape shape, const std::vector<double>& v) { return tensor(std::move(shape), v, DType::kInt32); }
NDArray scalar_f32(double v) { return NDArray::scalar(DType::kFloat32, v); }

TEST(QnnQuantizeType, ShapesAndDtypes) {
  Type scale = f32({}), zp = typed({}, DType::kUInt8);
  EXPECT_EQ(type_str(infer_op("qnn.quantize", {f32({2, 3}), scale, zp}, {{"out_dtype", "uint8"}})),
            "Tensor[(2, 3), uint8]");
  EXPECT_EQ(type_str(infer_op("qnn.quantize", {f32({2, 3}), f32({3}), typed({3}, DType::kInt8)}, {{"axis", 1}})),
            "Tensor[(2, 3), int8]");
  EXPECT_EQ(type_str(infer_op("qnn.dequantize", {typed({4}, DType::kInt32), f32({1}), typed({}, DType::kInt32)})),
            "Tensor[(4), float32]");
  EXPECT_EQ(type_str(infer_op("qnn.requantize",
                              {typed({2, 5}, DType::kInt32), f32({5}), typed({}, DType::kInt32), f32({}), zp},
                              {{"out_dtype", "uint8"}})),
            "Tensor[(2, 5), uint8]");
}

TEST(QnnQuantizeType, Errors) {
  std::string e = infer_op_error("qnn.quantize", {f32({2, 3}), f32({2}), typed({}, DType::kInt8)}, {{"axis", 1}});
  EXPECT_NE(e.find("qnn.quantize"), std::string::npos) << e;
  EXPECT_NE(e.find("'output_scale'"), std::string::npos) << e;
  EXPECT_NE(e.find("(3)"), std::string::npos) << e;
  EXPECT_NE(e.find("(2)"), std::string::npos) << e;
  e = infer_op_error("qnn.quantize", {f32({2}), f32({}), typed({}, DType::kInt8)}, {{"out_dtype", "float32"}});
  EXPECT_NE(e.find("'out_dtype'"), std::string::npos) << e;
  e = infer_op_error("qnn.dequantize", {f32({2}), f32({}), typed({}, DType::kInt8)});
  EXPECT_NE(e.find("'data'"), std::string::npos) << e;
  e = infer_op_error("qnn.dequantize", {typed({2}, DType::kInt8), f32({}), f32({})});
  EXPECT_NE(e.find("'input_zero_point'"), std::string::npos) << e;
  e = infer_op_error("qnn.requantize",
                     {typed({2}, DType::kInt32), f32({}), typed({}, DType::kInt32), f32({}), typed({}, DType::kInt8)},
                     {{"rounding", "DOWN"}});
  EXPECT_NE(e.find("'rounding'"), std::string::npos) << e;
}

TEST(QnnQuantizeKernel, RoundsHalfToEvenAndSaturates) {
  // x / 2 = 0, 0.5, 1.5, 2.5, -0.5, 300, -300, 1.2 -> rint 0, 0, 2, 2, -0, 300, -300, 1; + 128.
  NDArray x = tensor({8}, {0, 1, 3, 5, -1, 600, -600, 2.4});
  auto out = run_op("qnn.quantize", {x, scalar_f32(2), NDArray::scalar(DType::kUInt8, 128)}, {{"out_dtype", "uint8"}});
  EXPECT_EQ(out[0].dtype(), DType::kUInt8);
  expect_close(out[0], {128, 128, 130, 130, 128, 255, 0, 129});
  out = run_op("qnn.quantize", {x, scalar_f32(2), NDArray::scalar(DType::kInt8, 0)});
  expect_close(out[0], {0, 0, 2, 2, 0, 127, -128, 1});
}

TEST(QnnQuantizeKernel, PerChannelAlongAxis) {
  NDArray x = tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = run_op("qnn.quantize", {x, tensor({3}, {1, 2, 4}), i8({3}, {0, 10, -10})}, {{"axis", 1}});
  // Columns: /1 +0, /2 +10, /4 -10 -> 1, 11, -9 (0.75 rounds to 1); 4, 12 (2.5 -> 2), -8 (1.5 -> 2).
  expect_close(out[0], {1, 11, -9, 4, 12, -8});
}

TEST(QnnDequantizeKernel, PerTensorAndPerChannel) {
  auto out = run_op("qnn.dequantize", {u8({4}, {0, 3, 128, 255}), scalar_f32(2), NDArray::scalar(DType::kUInt8, 128)});
  expect_close(out[0], {-256, -250, 0, 254});
  out = run_op("qnn.dequantize", {i8({2, 2}, {1, 2, 3, 4}), tensor({2}, {0.5, 2}), i8({2}, {1, 0})}, {{"axis", 0}});
  expect_close(out[0], {0, 0.5, 6, 8});
  out = run_op("qnn.dequantize", {i32({2}, {-7, 9}), scalar_f32(0.25), NDArray::scalar(DType::kInt32, 0)});
  expect_close(out[0], {-1.75, 2.25});
}

TEST(QnnRequantizeKernel, RoundingRules) {
  // (data - 0) * 1 / 2 = 2.5, -2.5, 3.5, 1000.
  NDArray data = i32({4}, {5, -5, 7, 2000});
  auto run = [&](const std::string& rounding) {
    return run_op(
        "qnn.requantize",
        {data, scalar_f32(1), NDArray::scalar(DType::kInt32, 0), scalar_f32(2), NDArray::scalar(DType::kInt8, 1)},
        {{"rounding", rounding}})[0];
  };
  expect_close(run("UPWARD"), {4, -1, 5, 127});
  expect_close(run("TONEAREST"), {4, -2, 5, 127});
  expect_close(run("HALF_TO_EVEN"), {3, -1, 5, 127});
}

TEST(QnnRequantizeKernel, PerChannelInputScale) {
  NDArray data = i32({2, 2}, {10, 10, -4, 4});
  auto out = run_op("qnn.requantize",
                    {data, tensor({2}, {0.5, 2}), NDArray::scalar(DType::kInt32, 0), scalar_f32(1),
                     NDArray::scalar(DType::kUInt8, 100)},
                    {{"axis", 1}, {"rounding", "HALF_TO_EVEN"}, {"out_dtype", "uint8"}});
  expect_close(out[0], {105, 120, 98, 108});
}

}  // namespace
}  // namespace kiln::testing
