// The quantized, signal and random converters (src/frontend/onnx/converters/{quantized,
// signal,random}.cc) end to end: tiny ONNX models run through the importer and the
// interpreter, checked against hand values and numpy.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/onnx_test_util.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/printer.h"
#include "op/numpy_eval.h"
#include "op/numpy_ref.h"

namespace kiln::testing {
namespace {

constexpr int kU8 = onnx::TensorProto::UINT8;
constexpr int kI8 = onnx::TensorProto::INT8;
constexpr int kI32 = onnx::TensorProto::INT32;
constexpr int kI64 = onnx::TensorProto::INT64;

NDArray u8(Shape shape, const std::vector<double>& v) { return tensor(std::move(shape), v, DType::kUInt8); }
NDArray i8(Shape shape, const std::vector<double>& v) { return tensor(std::move(shape), v, DType::kInt8); }
NDArray f32_scalar(double v) { return NDArray::scalar(DType::kFloat32, v); }
NDArray i64_scalar(int64_t v) { return NDArray::scalar(DType::kInt64, static_cast<double>(v)); }

TEST(OnnxQuantConverters, QuantizeLinearPerAxisAndDequantizeWithoutZeroPoint) {
  OnnxModelBuilder q(13);
  q.input("x", {2, 3}).output("y", {2, 3}, kI8);
  q.initializer("scale", tensor({3}, {1, 2, 4})).initializer("zp", i8({3}, {0, 10, -10}));
  set_attr(q.node("QuantizeLinear", {"x", "scale", "zp"}, {"y"}), "axis", int64_t{-1});
  NDArray y = run_model(q, {tensor({2, 3}, {1, 2, 3, 4, 5, 6})})[0];
  EXPECT_EQ(y.dtype(), DType::kInt8);
  expect_close(y, {1, 11, -9, 4, 12, -8});

  OnnxModelBuilder d(10);
  d.input("x", {3}, kU8).output("y", {3});
  d.initializer("scale", f32_scalar(0.5));
  d.node("DequantizeLinear", {"x", "scale"}, {"y"});
  expect_close(run_model(d, {u8({3}, {0, 3, 255})})[0], {0, 1.5, 127.5});

  OnnxModelBuilder defaults(13);
  defaults.input("x", {3}).output("y", {3}, kU8);
  defaults.initializer("scale", f32_scalar(2));
  defaults.node("QuantizeLinear", {"x", "scale"}, {"y"});
  NDArray yu = run_model(defaults, {tensor({3}, {-4, 5, 600})})[0];
  EXPECT_EQ(yu.dtype(), DType::kUInt8);
  expect_close(yu, {0, 2, 255});
}

TEST(OnnxQuantConverters, DynamicQuantizeLinearMatchesOnnxFormula) {
  OnnxModelBuilder b(11);
  b.input("x", {6}).output("y", {6}, kU8).output("scale", {}).output("zp", {}, kU8);
  b.node("DynamicQuantizeLinear", {"x"}, {"y", "scale", "zp"});
  NDArray x = tensor({6}, {0, 2, -3, -2.5, 1.34, 0.5});
  auto out = run_model(b, {x});
  ASSERT_EQ(out.size(), 3u);
  // ONNX's definition, in float32 as its reference computes it.
  std::string setup =
      "x = np.array([0, 2, -3, -2.5, 1.34, 0.5], dtype=np.float32)\n"
      "s = np.float32((max(x.max(), 0) - min(x.min(), 0)) / np.float32(255))\n"
      "zp = np.clip(np.rint(-min(x.min(), 0) / s), 0, 255)\n"
      "y = np.clip(np.rint(x / s) + zp, 0, 255)\n";
  auto expected = numpy::eval_many({"y", "s", "zp"}, setup);
  ASSERT_EQ(expected.size(), 3u);
  expect_close(out[0], expected[0], 0, 0);
  expect_close(out[1], expected[1], 0, 1e-7);
  expect_close(out[2], expected[2], 0, 0);
}

// Expected values from ONNX Runtime 1.x (onnxruntime-node, tools/ort/run.js) on the same inputs.
TEST(OnnxQuantConverters, DynamicQuantizeLinearMatchesOnnxRuntime) {
  auto run = [](const std::vector<double>& x) {
    OnnxModelBuilder b(11);
    const int64_t n = static_cast<int64_t>(x.size());
    b.input("x", {n}).output("y", {n}, kU8).output("scale", {}).output("zp", {}, kU8);
    b.node("DynamicQuantizeLinear", {"x"}, {"y", "scale", "zp"});
    return run_model(b, {tensor({n}, x)});
  };
  // Range [-1, 254]: scale 1, zero point 1, and x + 0.5 are exact ties (half to even).
  auto ties = run({-1, 254, 0.5, 1.5, 2.5, -0.5, 100.5, 101.5, 253.5});
  expect_close(ties[0], {0, 255, 1, 3, 3, 1, 101, 103, 255}, 0, 0);
  expect_close(ties[1], {1}, 0, 0);
  expect_close(ties[2], {1}, 0, 0);
  // All negative: the range widens to 0, the zero point saturates at 255.
  auto negative = run({-0.5, -1, -2, -3, -2.55});
  expect_close(negative[0], {213, 170, 85, 0, 38}, 0, 0);
  expect_close(negative[1], {static_cast<double>(3.0f / 255.0f)}, 0, 0);  // printed 0.011764706
  expect_close(negative[2], {255}, 0, 0);
  // A zero point of exactly 0.5 (range [-0.5, 254.5], scale 1) rounds to even: 0.
  auto zero_point_tie = run({-0.5, 254.5, 3});
  expect_close(zero_point_tie[0], {0, 254, 3}, 0, 0);
  expect_close(zero_point_tie[2], {0}, 0, 0);
  // All zero: an empty range, where ONNX Runtime takes scale 1 (ONNX's formula divides 0 by 0).
  auto zeros = run({0, 0, 0});
  expect_close(zeros[0], {0, 0, 0}, 0, 0);
  expect_close(zeros[1], {1}, 0, 0);
  expect_close(zeros[2], {0}, 0, 0);
}

TEST(OnnxQuantConverters, ConvIntegerZeroPointsGroupsStridesPadsMatchOnnxRuntime) {
  OnnxModelBuilder b(10);
  b.input("x", {1, 2, 3, 3}, kU8).output("y", {1, 2, 2, 3}, kI32);
  b.initializer("w", i8({2, 1, 2, 2}, {1, -2, 3, -128, 127, 0, -5, 6}));
  b.initializer("xzp", NDArray::scalar(DType::kUInt8, 130)).initializer("wzp", i8({1}, {-3}));
  onnx::NodeProto& node = b.node("ConvInteger", {"x", "w", "xzp", "wzp"}, {"y"});
  set_attr(node, "group", int64_t{2});
  set_attr(node, "strides", std::vector<int64_t>{2, 1});
  set_attr(node, "pads", std::vector<int64_t>{1, 0, 0, 1});
  NDArray x = u8({1, 2, 3, 3}, {10, 200, 130, 0, 255, 129, 77, 131, 3, 130, 130, 1, 250, 9, 140, 60, 61, 62});
  expect_close(run_model(b, {x})[0], {-9470, 420, 0, -838, 16380, -766, 0, -1161, 258, 14756, -16174, 1436}, 0, 0);
}

TEST(OnnxQuantConverters, ConvIntegerAccumulatorWrapsInInt32) {
  // 33100 products of (0 - 255) * (-128 - 127) = 65025 sum past 2^31; ONNX Runtime wraps.
  const int64_t n = 33100;
  OnnxModelBuilder b(10);
  b.input("x", {1, 1, 1, n}, kU8).output("y", {1, 1, 1, 1}, kI32);
  b.initializer("w", NDArray::from_doubles({1, 1, 1, n}, DType::kInt8, std::vector<double>(n, -128)));
  b.initializer("xzp", NDArray::scalar(DType::kUInt8, 255)).initializer("wzp", NDArray::scalar(DType::kInt8, 127));
  b.node("ConvInteger", {"x", "w", "xzp", "wzp"}, {"y"});
  expect_close(run_model(b, {NDArray::empty({1, 1, 1, n}, DType::kUInt8)})[0], {-2142639796}, 0, 0);
}

TEST(OnnxQuantConverters, QLinearConvWithBiasAndPerChannelWeightScale) {
  OnnxModelBuilder b(10);
  b.input("x", {1, 2, 4, 4}, kU8).output("y", {1, 3, 4, 4}, kU8);
  NDArray w = sample_tensor({3, 2, 3, 3}, 11, -100, 100, DType::kFloat64);
  NDArray w8 = w.cast(DType::kInt8);
  b.initializer("xs", f32_scalar(0.05)).initializer("xzp", NDArray::scalar(DType::kUInt8, 120));
  b.initializer("w", w8).initializer("ws", tensor({3}, {0.01, 0.02, 0.005}));
  b.initializer("wzp", i8({3}, {0, 0, 0}));
  b.initializer("ys", f32_scalar(0.2)).initializer("yzp", NDArray::scalar(DType::kUInt8, 100));
  b.initializer("bias", tensor({3}, {100, -2000, 0}, DType::kInt32));
  set_attr(b.node("QLinearConv", {"x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp", "bias"}, {"y"}), "pads",
           std::vector<int64_t>{1, 1, 1, 1});
  NDArray x = sample_tensor({1, 2, 4, 4}, 12, 0, 255, DType::kFloat64).cast(DType::kUInt8);
  NDArray y = run_model(b, {x})[0];
  std::string setup =
      "x = " + np_array(x) + " - 120\nw = " + np_array(w8) +
      "\nxp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))\n"
      "acc = np.zeros((1, 3, 4, 4))\n"
      "for i in range(4):\n"
      "  for j in range(4):\n"
      "    acc[0, :, i, j] = (xp[0, :, i:i + 3, j:j + 3][None] * w).sum(axis=(1, 2, 3))\n"
      "acc += np.array([100, -2000, 0]).reshape(1, 3, 1, 1)\n"
      "m = np.float32(0.05) * np.array([0.01, 0.02, 0.005], dtype=np.float32)\n"
      "y = np.clip(np.rint(acc * m.reshape(1, 3, 1, 1).astype(np.float64) / np.float64(np.float32(0.2))) "
      "+ 100, 0, 255)\n";
  expect_close(y, numpy::eval("y", setup), 0, 0);
}

TEST(OnnxQuantConverters, ConvIntegerOneDimensional) {
  OnnxModelBuilder b(10);
  b.input("x", {1, 1, 5}, kU8).input("w", {1, 1, 2}, kU8).output("y", {1, 1, 6}, kI32);
  b.initializer("xzp", NDArray::scalar(DType::kUInt8, 1));
  set_attr(b.node("ConvInteger", {"x", "w", "xzp"}, {"y"}), "pads", std::vector<int64_t>{1, 1});
  // (x - 1) = 0, 1, 2, 3, 4 padded with zeros, correlated with w = 2, 3.
  NDArray y = run_model(b, {u8({1, 1, 5}, {1, 2, 3, 4, 5}), u8({1, 1, 2}, {2, 3})})[0];
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 6}));
  expect_close(y, {0, 3, 8, 13, 18, 8});
}

TEST(OnnxQuantConverters, MatMulIntegerAndQLinearMatMul) {
  NDArray a = u8({2, 3}, {10, 20, 30, 40, 50, 60}), bm = i8({3, 2}, {1, -1, 2, 0, -3, 4});
  OnnxModelBuilder mi(10);
  mi.input("a", {2, 3}, kU8).input("b", {3, 2}, kI8).output("y", {2, 2}, kI32);
  mi.initializer("azp", u8({2}, {10, 40}));
  mi.node("MatMulInteger", {"a", "b", "azp"}, {"y"});
  // Rows of a minus 10 and 40: (0, 10, 20) and (0, 10, 20).
  expect_close(run_model(mi, {a, bm})[0], {-40, 80, -40, 80});

  OnnxModelBuilder ql(10);
  ql.input("a", {2, 3}, kU8).input("b", {3, 2}, kI8).output("y", {2, 2}, kU8);
  ql.initializer("as", f32_scalar(0.5)).initializer("azp", NDArray::scalar(DType::kUInt8, 10));
  ql.initializer("bs", f32_scalar(0.25)).initializer("bzp", NDArray::scalar(DType::kInt8, 0));
  ql.initializer("ys", f32_scalar(1)).initializer("yzp", NDArray::scalar(DType::kUInt8, 50));
  ql.node("QLinearMatMul", {"a", "as", "azp", "b", "bs", "bzp", "ys", "yzp"}, {"y"});
  // acc = (a - 10) b = [[-40, 80], [-40, 170]]; * 0.125 = -5, 10, -5, 21.25; + 50.
  expect_close(run_model(ql, {a, bm})[0], {45, 60, 45, 71});
}

TEST(OnnxSignalConverters, DftWithLengthAndStft) {
  OnnxModelBuilder b(17);
  b.input("x", {2, 6, 1}).output("y", {2, 8, 2});
  b.initializer("n", i64_scalar(8));
  set_attr(b.node("DFT", {"x", "n"}, {"y"}), "axis", int64_t{1});
  NDArray x = sample_tensor({2, 6, 1}, 13);
  std::string spectrum = "np.fft.fft(" + np_array(x) + "[..., 0], n=8, axis=1)";
  expect_close(run_model(b, {x})[0], numpy::eval("np.stack([" + spectrum + ".real, " + spectrum + ".imag], axis=-1)"));

  OnnxModelBuilder s(17);
  s.input("signal", {1, 20, 1}).output("y", {1, 4, 4, 2});
  s.initializer("step", i64_scalar(4)).initializer("length", i64_scalar(6));
  s.node("STFT", {"signal", "step", "", "length"}, {"y"});
  NDArray signal = sample_tensor({1, 20, 1}, 14);
  std::string frames = "np.fft.rfft(np.stack([" + np_array(signal) + "[0, 4 * f:4 * f + 6, 0] for f in range(4)]))";
  NDArray y = run_model(s, {signal})[0];
  EXPECT_EQ(y.shape(), (Shape{1, 4, 4, 2}));
  expect_close(y, numpy::eval("np.stack([" + frames + ".real, " + frames + ".imag], axis=-1)"));
}

TEST(OnnxSignalConverters, WindowsAndMelMatrixFoldToConstants) {
  OnnxModelBuilder b(17);
  b.output("y", {4}, onnx::TensorProto::DOUBLE);
  b.initializer("size", i64_scalar(4));
  auto& n = b.node("HannWindow", {"size"}, {"y"});
  set_attr(n, "output_datatype", int64_t{onnx::TensorProto::DOUBLE});
  OnnxModel m = from_onnx_bytes(b.bytes(), {}, "test.onnx");
  std::string text = print_module(m.module);
  EXPECT_EQ(text.find("signal."), std::string::npos) << text;
  NDArray y = interpret(bind_params(m.module, m.params), "main", {}).flatten()[0];
  EXPECT_EQ(y.dtype(), DType::kFloat64);
  expect_close(y, {0, 0.5, 1, 0.5}, 1e-12);

  OnnxModelBuilder sym(17);
  sym.output("y", {3});
  sym.initializer("size", i64_scalar(3));
  set_attr(sym.node("BlackmanWindow", {"size"}, {"y"}), "periodic", int64_t{0});
  // 0.42 - 0.5 cos(pi n) + 0.08 cos(2 pi n) for n = 0, 1, 2.
  expect_close(run_model(sym, {})[0], {0, 1, 0}, 1e-6);

  OnnxModelBuilder mel(17);
  mel.output("y", {5, 2});
  mel.initializer("bins", i64_scalar(2)).initializer("n", i64_scalar(8)).initializer("rate", i64_scalar(8000));
  mel.initializer("lo", f32_scalar(0)).initializer("hi", f32_scalar(4000));
  mel.node("MelWeightMatrix", {"bins", "n", "rate", "lo", "hi"}, {"y"});
  NDArray w = run_model(mel, {})[0];
  EXPECT_EQ(w.shape(), (Shape{5, 2}));
  // Edges at mel steps of 2146.0 / 4 are 0, 426.7, 1113.6, 2219.4 Hz, spectrum bins floor(9 hz / 8000) = 0, 0, 1, 2.
  expect_close(w, {1, 0, 0, 1, 0, 0, 0, 0, 0, 0}, 1e-6);
}

TEST(OnnxSignalConverters, WindowSizeMustBeKnown) {
  OnnxModelBuilder b(17);
  b.input("size", {}, kI64).output("y", {4});
  b.node("HannWindow", {"size"}, {"y"});
  std::string e = error_of([&] { from_onnx_bytes(b.bytes(), {}, "test.onnx"); });
  EXPECT_TRUE(contains(e, "must be known at import time")) << e;
  EXPECT_TRUE(contains(e, "HannWindow")) << e;
}

TEST(OnnxRandomConverters, ImportAndRunWithTheRightShapesAndDtypes) {
  OnnxModelBuilder b(15);
  b.input("x", {3, 4}).output("u", {3, 4}, onnx::TensorProto::DOUBLE).output("n", {2, 5}).output("bern", {3, 4});
  b.output("idx", {3, 6}, kI64);
  auto& like = b.node("RandomUniformLike", {"x"}, {"u"});
  set_attr(like, "dtype", int64_t{onnx::TensorProto::DOUBLE});
  set_attr(like, "low", 2.0);
  set_attr(like, "high", 3.0);
  set_attr(like, "seed", 1.0);
  auto& normal = b.node("RandomNormal", {}, {"n"});
  set_attr(normal, "shape", std::vector<int64_t>{2, 5});
  set_attr(normal, "seed", 2.0);
  set_attr(b.node("Bernoulli", {"x"}, {"bern"}), "seed", 3.0);
  auto& multi = b.node("Multinomial", {"x"}, {"idx"});
  set_attr(multi, "sample_size", int64_t{6});
  set_attr(multi, "dtype", int64_t{onnx::TensorProto::INT64});
  NDArray probs = tensor({3, 4}, {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1});
  auto out = run_model(b, {probs});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].dtype(), DType::kFloat64);
  for (double v : out[0].to_doubles()) EXPECT_TRUE(v >= 2 && v < 3) << v;
  EXPECT_EQ(out[1].shape(), (Shape{2, 5}));
  expect_close(out[2], probs.to_doubles());  // probabilities 0 and 1 leave no choice
  EXPECT_EQ(out[3].shape(), (Shape{3, 6}));
  EXPECT_EQ(out[3].dtype(), DType::kInt64);
  for (int64_t v : out[3].to_ints()) EXPECT_TRUE(v >= 0 && v < 4) << v;
  // A seed makes the import deterministic.
  auto again = run_model(b, {probs});
  EXPECT_TRUE(out[0].same_as(again[0]));
  EXPECT_TRUE(out[1].same_as(again[1]));
}

}  // namespace
}  // namespace kiln::testing
