// Converters of the operators of opsets 18-21 (Mish, Gelu, GroupNormalization 18 and 21, the
// Bitwise ops, CenterCropPad, Col2Im), end to end through the interpreter against numpy, and
// the ONNX checker's policy for models newer than the linked onnx (IR 8, opset 17).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "frontend/onnx_test_util.h"
#include "kiln/interp/interpreter.h"

namespace kiln::testing {
namespace {

std::string import_error(OnnxModelBuilder& b) {
  return error_of([&] { from_onnx_bytes(b.bytes(), {}, "test.onnx"); });
}

NDArray wave(Shape shape, double scale = 1.0, double offset = 0.0) {
  std::vector<double> v(static_cast<size_t>(num_elements(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<double>(i) * 1.7 + offset) * scale;
  return tensor(std::move(shape), v);
}

void expect_matches(const NDArray& actual, const NDArray& expected, double tol = 1e-5) {
  ASSERT_EQ(actual.shape(), expected.shape());
  expect_close(actual, expected.to_doubles(), tol, tol);
}

TEST(OnnxOpset18Checker, NewerOpsetsAreCheckedWithoutTheirSchemas) {
  // Mish has no schema in onnx 1.12, and IR version 10 is above its checker's; the graph is
  // still checked (and converted).
  OnnxModelBuilder b(21);
  b.model().set_ir_version(10);
  b.input("x", {3}).output("y", {3});
  b.node("Mish", {"x"}, {"y"});
  EXPECT_EQ(run_model(b, {tensor({3}, {0, 1, -1})})[0].shape(), Shape{3});
}

TEST(OnnxOpset18Checker, StructureOfNewerModelsIsStillChecked) {
  OnnxModelBuilder b(18);
  b.input("x", {3}).output("y", {3});
  b.node("Mish", {"x"}, {"t"});
  b.node("Mish", {"t"}, {"t"});  // not SSA: the checker's complaint
  b.node("Identity", {"t"}, {"y"});
  EXPECT_TRUE(contains(import_error(b), "ONNX checker rejects"));
}

TEST(OnnxOpset18Checker, OlderModelsStillGetSchemaChecks) {
  OnnxModelBuilder b(17);
  b.input("x", {3}).output("y", {3});
  set_attr(b.node("Relu", {"x"}, {"y"}), "slope", 0.5);
  std::string e = import_error(b);
  EXPECT_TRUE(contains(e, "ONNX checker rejects"));
  EXPECT_TRUE(contains(e, "slope"));
}

TEST(OnnxOpset18Converters, ListedByOnnxOps) {
  std::vector<std::string> names;
  for (const auto& v : onnx_converter_versions()) names.push_back(v.op_type);
  for (const char* op : {"Mish", "Gelu", "GroupNormalization", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot",
                         "CenterCropPad", "Col2Im"})
    EXPECT_NE(std::find(names.begin(), names.end(), op), names.end()) << op;
}

TEST(OnnxOpset18Converters, MishAndGelu) {
  TempDir dir;
  NDArray x = wave({2, 5}, 4);
  OnnxModelBuilder b(20);
  b.input("x", {2, 5}).output("m", {2, 5}).output("g", {2, 5}).output("t", {2, 5});
  b.node("Mish", {"x"}, {"m"});
  b.node("Gelu", {"x"}, {"g"});
  set_attr(b.node("Gelu", {"x"}, {"t"}), "approximate", std::string("tanh"));
  std::vector<NDArray> got = run_model(b, {x});
  const std::string load = "import math\nx = np.load('x.npy').astype(np.float64)\n";
  expect_matches(got[0], numpy_reference(dir, {{"x", x}}, load + "out = x * np.tanh(np.log1p(np.exp(x)))"));
  expect_matches(got[1], numpy_reference(dir, {{"x", x}},
                                         load + "out = 0.5 * x * (1 + np.vectorize(math.erf)(x / "
                                                "math.sqrt(2)))"));
  expect_matches(got[2], numpy_reference(dir, {{"x", x}},
                                         load + "out = 0.5 * x * (1 + np.tanh(math.sqrt(2 / "
                                                "math.pi) * (x + 0.044715 * x ** 3)))"));
}

TEST(OnnxOpset18Converters, GeluRejectsAnUnknownApproximation) {
  OnnxModelBuilder b(20);
  b.input("x", {2}).output("y", {2});
  set_attr(b.node("Gelu", {"x"}, {"y"}), "approximate", std::string("sigmoid"));
  std::string e = import_error(b);
  EXPECT_TRUE(contains(e, "'approximate'"));
  EXPECT_TRUE(contains(e, "\"sigmoid\""));
}

const char* kGroupNormReference =
    "x = np.load('x.npy').astype(np.float64)\n"
    "s = np.load('s.npy').astype(np.float64)\n"
    "b = np.load('b.npy').astype(np.float64)\n"
    "r = x.reshape(2, 3, -1)\n"
    "y = ((r - r.mean(-1, keepdims=True)) / np.sqrt(r.var(-1, keepdims=True) + 0.01)).reshape(x.shape)\n";

TEST(OnnxOpset18Converters, GroupNormalizationOpset18HasPerGroupScale) {
  TempDir dir;
  NDArray x = wave({2, 6, 2, 3}, 3), s = tensor({3}, {0.5, 2, -1}), bias = tensor({3}, {1, 0, 3});
  OnnxModelBuilder b(18);
  b.input("x", {2, 6, 2, 3}).input("s", {3}).input("b", {3}).output("y", {2, 6, 2, 3});
  auto& n = b.node("GroupNormalization", {"x", "s", "b"}, {"y"});
  set_attr(n, "num_groups", int64_t{3});
  set_attr(n, "epsilon", 0.01);
  NDArray want = numpy_reference(dir, {{"x", x}, {"s", s}, {"b", bias}},
                                 std::string(kGroupNormReference) +
                                     "out = y * np.repeat(s, 2).reshape(1, 6, 1, 1) + np.repeat(b, 2).reshape(1, "
                                     "6, 1, 1)");
  expect_matches(run_model(b, {x, s, bias})[0], want);
}

TEST(OnnxOpset18Converters, GroupNormalizationOpset21HasPerChannelScale) {
  TempDir dir;
  NDArray x = wave({2, 6, 2, 3}, 3), s = wave({6}, 1, 0.3), bias = wave({6}, 2, 0.9);
  OnnxModelBuilder b(21);
  b.input("x", {2, 6, 2, 3}).input("s", {6}).input("b", {6}).output("y", {2, 6, 2, 3});
  auto& n = b.node("GroupNormalization", {"x", "s", "b"}, {"y"});
  set_attr(n, "num_groups", int64_t{3});
  set_attr(n, "epsilon", 0.01);
  set_attr(n, "stash_type", int64_t{1});
  NDArray want =
      numpy_reference(dir, {{"x", x}, {"s", s}, {"b", bias}},
                      std::string(kGroupNormReference) + "out = y * s.reshape(1, 6, 1, 1) + b.reshape(1, 6, 1, 1)");
  expect_matches(run_model(b, {x, s, bias})[0], want);
}

TEST(OnnxOpset18Converters, GroupNormalizationErrors) {
  OnnxModelBuilder b(18);
  b.input("x", {2, 6, 4}).input("s", {6}).input("b", {6}).output("y", {2, 6, 4});
  set_attr(b.node("GroupNormalization", {"x", "s", "b"}, {"y"}), "num_groups", int64_t{3});
  std::string e = import_error(b);
  EXPECT_TRUE(contains(e, "one value per group"));
  EXPECT_TRUE(contains(e, "expected (3), found (6)"));

  OnnxModelBuilder c(21);
  c.input("x", {2, 6, 4}).input("s", {6}).input("b", {6}).output("y", {2, 6, 4});
  c.node("GroupNormalization", {"x", "s", "b"}, {"y"});
  EXPECT_TRUE(contains(import_error(c), "'num_groups'"));

  OnnxModelBuilder d(21);
  d.input("x", {2, 6, 4}).input("s", {6}).input("b", {6}).output("y", {2, 6, 4});
  auto& n = d.node("GroupNormalization", {"x", "s", "b"}, {"y"});
  set_attr(n, "num_groups", int64_t{4});
  e = import_error(d);
  EXPECT_TRUE(contains(e, "'num_groups'"));
  EXPECT_TRUE(contains(e, "a divisor of 6"));
}

TEST(OnnxOpset18Converters, BitwiseOpsBroadcast) {
  NDArray a = tensor({2, 3}, {0, 5, -6, 127, -128, 77}, DType::kInt32), m = tensor({3}, {1, 6, -1}, DType::kInt32);
  OnnxModelBuilder b(18);
  const int i32 = onnx::TensorProto::INT32;
  b.input("a", {2, 3}, i32).input("m", {3}, i32);
  b.output("and", {2, 3}, i32).output("or", {2, 3}, i32).output("xor", {2, 3}, i32).output("not", {2, 3}, i32);
  b.node("BitwiseAnd", {"a", "m"}, {"and"});
  b.node("BitwiseOr", {"a", "m"}, {"or"});
  b.node("BitwiseXor", {"a", "m"}, {"xor"});
  b.node("BitwiseNot", {"a"}, {"not"});
  std::vector<NDArray> got = run_model(b, {a, m});
  EXPECT_EQ(got[0].to_ints(), (std::vector<int64_t>{0, 4, -6, 1, 0, 77}));
  EXPECT_EQ(got[1].to_ints(), (std::vector<int64_t>{1, 7, -1, 127, -122, -1}));
  EXPECT_EQ(got[2].to_ints(), (std::vector<int64_t>{1, 3, 5, 126, -122, -78}));
  EXPECT_EQ(got[3].to_ints(), (std::vector<int64_t>{-1, -6, 5, -128, 127, -78}));
}

TEST(OnnxOpset18Converters, CenterCropPadCropsAndPadsAroundTheCentre) {
  // Axis 0: 5 -> 2 (crop from (5 - 2) / 2 = 1); axis 1: 2 -> 5 (pad 1 before, 2 after).
  std::vector<double> v;
  for (int i = 0; i < 10; ++i) v.push_back(i + 1);
  NDArray x = tensor({5, 2}, v);
  OnnxModelBuilder b(18);
  b.input("x", {5, 2}).output("y", {2, 5});
  b.initializer("shape", ints({2, 5}));
  b.node("CenterCropPad", {"x", "shape"}, {"y"});
  EXPECT_EQ(run_model(b, {x})[0].to_doubles(), (std::vector<double>{0, 3, 4, 0, 0, 0, 5, 6, 0, 0}));
}

TEST(OnnxOpset18Converters, CenterCropPadOnTheGivenAxes) {
  NDArray x = wave({2, 4, 3});
  OnnxModelBuilder b(18);
  b.input("x", {2, 4, 3}).output("y", {2, 1, 6});
  b.initializer("shape", ints({6, 1}));
  set_attr(b.node("CenterCropPad", {"x", "shape"}, {"y"}), "axes", std::vector<int64_t>{-1, 1});
  TempDir dir;
  NDArray want = numpy_reference(dir, {{"x", x}},
                                 "x = np.load('x.npy')\nout = np.pad(x[:, 1:2, :], ((0, 0), (0, 0), "
                                 "(1, 2)))");
  expect_matches(run_model(b, {x})[0], want);
}

TEST(OnnxOpset18Converters, CenterCropPadNeedsAConstantShape) {
  OnnxModelBuilder b(18);
  b.input("x", {4, 4}).input("s", {2}, onnx::TensorProto::INT64).output("y", {2, 2});
  b.node("CenterCropPad", {"x", "s"}, {"y"});
  std::string e = import_error(b);
  EXPECT_TRUE(contains(e, "(shape) must be known at import time"));
  EXPECT_TRUE(contains(e, "specialises"));
}

TEST(OnnxOpset18Converters, Col2ImWithStridesPadsAndDilations) {
  // Image 5x5, block 2x2, strides 2, dilations 2, pads 1: (5 + 2 - 3) / 2 + 1 = 3 positions per axis.
  NDArray x = wave({1, 8, 9});
  OnnxModelBuilder b(18);
  b.input("x", {1, 8, 9}).output("y", {1, 2, 5, 5});
  b.initializer("image", ints({5, 5})).initializer("block", ints({2, 2}));
  auto& n = b.node("Col2Im", {"x", "image", "block"}, {"y"});
  set_attr(n, "strides", std::vector<int64_t>{2, 2});
  set_attr(n, "dilations", std::vector<int64_t>{2, 2});
  set_attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
  TempDir dir;
  NDArray want =
      numpy_reference(dir, {{"x", x}},
                      "x = np.load('x.npy').reshape(1, 2, 2, 2, 3, 3)\n"
                      "p = np.zeros((1, 2, 7, 7), np.float32)\n"
                      "for ky in range(2):\n"
                      "    for kx in range(2):\n"
                      "        for oy in range(3):\n"
                      "            for ox in range(3):\n"
                      "                p[:, :, oy * 2 + ky * 2, ox * 2 + kx * 2] += x[:, :, ky, kx, oy, ox]\n"
                      "out = p[:, :, 1:6, 1:6]");
  expect_matches(run_model(b, {x})[0], want);
}

TEST(OnnxOpset18Converters, Col2ImNeedsConstantShapes) {
  OnnxModelBuilder b(18);
  b.input("x", {1, 4, 16}).input("image", {2}, onnx::TensorProto::INT64).output("y", {1, 1, 5, 5});
  b.initializer("block", ints({2, 2}));
  b.node("Col2Im", {"x", "image", "block"}, {"y"});
  EXPECT_TRUE(contains(import_error(b), "(image_shape) must be known at import time"));
}

}  // namespace
}  // namespace kiln::testing
