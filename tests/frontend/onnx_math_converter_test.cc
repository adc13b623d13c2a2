// The math converters (src/frontend/onnx/converters/math.cc) end to end: tiny ONNX models
// run through the importer and the interpreter, checked against hand values and numpy.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/onnx_test_util.h"
#include "kiln/interp/interpreter.h"

namespace kiln::testing {
namespace {

TEST(OnnxMathConverters, UnaryFunctionsAndCelu) {
  NDArray x = tensor({4}, {-2.5, -0.5, 0.5, 1.5});
  for (const auto& [op, expected] : std::vector<std::pair<std::string, std::vector<double>>>{
           {"Round", {-2, -0, 0, 2}},
           {"Floor", {-3, -1, 0, 1}},
           {"Sin", {std::sin(-2.5), std::sin(-0.5), std::sin(0.5), std::sin(1.5)}},
           {"Celu", {std::expm1(-2.5 / 2) * 2, std::expm1(-0.5 / 2) * 2, 0.5, 1.5}}}) {
    SCOPED_TRACE(op);
    OnnxModelBuilder b(13);
    b.input("x", {4}).output("y", {4});
    auto& n = b.node(op, {"x"}, {"y"});
    if (op == "Celu") set_attr(n, "alpha", 2.0);
    expect_close(run_model(b, {x})[0], expected);
  }
}

TEST(OnnxMathConverters, ModFollowsDivisorSignUnlessFmod) {
  NDArray a = tensor({4}, {-4, 7, -7, 5}, DType::kInt32), b = tensor({4}, {3, -3, -3, 5}, DType::kInt32);
  OnnxModelBuilder m(13);
  m.input("a", {4}, onnx::TensorProto::INT32).input("b", {4}, onnx::TensorProto::INT32);
  m.output("y", {4}, onnx::TensorProto::INT32);
  m.node("Mod", {"a", "b"}, {"y"});
  EXPECT_EQ(run_model(m, {a, b})[0].to_ints(), (std::vector<int64_t>{2, -2, -1, 0}));

  OnnxModelBuilder f(13);
  f.input("a", {3}).input("b", {3}).output("y", {3});
  set_attr(f.node("Mod", {"a", "b"}, {"y"}), "fmod", int64_t{1});
  expect_close(run_model(f, {tensor({3}, {-4.5, 7, 5}), tensor({3}, {2, -3, 5})})[0], {-0.5, 1, 0});
}

TEST(OnnxMathConverters, BitShiftDirections) {
  NDArray x = tensor({3}, {1, 16, 255}, DType::kUInt8), s = tensor({3}, {3, 2, 1}, DType::kUInt8);
  for (const auto& [direction, expected] :
       std::vector<std::pair<std::string, std::vector<int64_t>>>{{"LEFT", {8, 64, 254}}, {"RIGHT", {0, 4, 127}}}) {
    OnnxModelBuilder b(11);
    b.input("x", {3}, onnx::TensorProto::UINT8).input("s", {3}, onnx::TensorProto::UINT8);
    b.output("y", {3}, onnx::TensorProto::UINT8);
    set_attr(b.node("BitShift", {"x", "s"}, {"y"}), "direction", direction);
    EXPECT_EQ(run_model(b, {x, s})[0].to_ints(), expected) << direction;
  }
  OnnxModelBuilder bad(11);
  bad.input("x", {3}, onnx::TensorProto::UINT8).input("s", {3}, onnx::TensorProto::UINT8);
  bad.output("y", {3}, onnx::TensorProto::UINT8);
  set_attr(bad.node("BitShift", {"x", "s"}, {"y"}), "direction", std::string("UP"));
  EXPECT_TRUE(contains(error_of([&] { run_model(bad, {x, s}); }), "\"UP\""));
}

TEST(OnnxMathConverters, CumSumWithAxisInitializerExclusiveReverse) {
  OnnxModelBuilder b(14);
  b.input("x", {2, 3}).output("y", {2, 3}).initializer("axis", NDArray::scalar(DType::kInt64, -1));
  auto& n = b.node("CumSum", {"x", "axis"}, {"y"});
  set_attr(n, "exclusive", int64_t{1});
  set_attr(n, "reverse", int64_t{1});
  expect_close(run_model(b, {tensor({2, 3}, {1, 2, 3, 4, 5, 6})})[0], {5, 3, 0, 11, 6, 0});
}

TEST(OnnxMathConverters, HardmaxFlattensBeforeOpset13) {
  NDArray x = tensor({2, 2, 2}, {1, 4, 4, 0, 2, 2, 3, -1});
  OnnxModelBuilder v13(13);
  v13.input("x", {2, 2, 2}).output("y", {2, 2, 2});
  set_attr(v13.node("Hardmax", {"x"}, {"y"}), "axis", int64_t{1});
  // axis 1 alone: column-wise maxima, first one on ties.
  expect_close(run_model(v13, {x})[0], {0, 1, 1, 0, 0, 1, 1, 0});
  OnnxModelBuilder v11(11);
  v11.input("x", {2, 2, 2}).output("y", {2, 2, 2});
  set_attr(v11.node("Hardmax", {"x"}, {"y"}), "axis", int64_t{1});
  // axes 1 and 2 together: one 1 per batch, at the first maximum of the flattened 2 x 2.
  expect_close(run_model(v11, {x})[0], {0, 1, 0, 0, 0, 0, 1, 0});
}

TEST(OnnxMathConverters, TopKSmallestWithKInput) {
  OnnxModelBuilder b(11);
  b.input("x", {2, 3}).initializer("k", ints({2}));
  b.output("values", {2, 2}).output("indices", {2, 2}, onnx::TensorProto::INT64);
  auto& n = b.node("TopK", {"x", "k"}, {"values", "indices"});
  set_attr(n, "largest", int64_t{0});
  auto out = run_model(b, {tensor({2, 3}, {3, 1, 2, 0, 5, 0})});
  ASSERT_EQ(out.size(), 2u);
  expect_close(out[0], {1, 2, 0, 0});
  EXPECT_EQ(out[1].to_ints(), (std::vector<int64_t>{1, 2, 0, 2}));
}

TEST(OnnxMathConverters, TopKOpset1TakesKAsAttribute) {
  OnnxModelBuilder b(9);
  b.input("x", {4}).output("values", {1}).output("indices", {1}, onnx::TensorProto::INT64);
  set_attr(b.node("TopK", {"x"}, {"values", "indices"}), "k", int64_t{1});
  auto out = run_model(b, {tensor({4}, {3, 7, 7, 2})});
  expect_close(out[0], {7});
  EXPECT_EQ(out[1].to_ints(), (std::vector<int64_t>{1}));
}

TEST(OnnxMathConverters, EinsumAndDetMatchNumpy) {
  TempDir dir;
  NDArray a = tensor({2, 2, 3}, {1, -2, 0.5, 3, 1, -1, 2, 0, 1, -1, 4, 2});
  NDArray c = tensor({2, 3, 3}, {2, 0, 1, 1, 3, -1, 0, 2, 4, 1, 1, 1, 0, -2, 3, 5, 1, 0});
  OnnxModelBuilder e(12);
  e.input("a", {2, 2, 3}).input("c", {2, 3, 3}).output("y", {2, 2, 3});
  set_attr(e.node("Einsum", {"a", "c"}, {"y"}), "equation", std::string("bij, bjk -> bik"));
  NDArray expected = numpy_reference(dir, {{"a", a}, {"c", c}},
                                     "out = np.einsum('bij,bjk->bik', np.load('a.npy'), "
                                     "np.load('c.npy'))");
  NDArray product = run_model(e, {a, c})[0];
  ASSERT_EQ(product.shape(), expected.shape());
  expect_close(product, expected.to_doubles());

  OnnxModelBuilder d(11);
  d.input("c", {2, 3, 3}).output("y", {2});
  d.node("Det", {"c"}, {"y"});
  expected = numpy_reference(dir, {{"c", c}}, "out = np.linalg.det(np.load('c.npy'))");
  expect_close(run_model(d, {c})[0], expected.to_doubles(), 1e-4, 1e-5);
}

}  // namespace
}  // namespace kiln::testing
