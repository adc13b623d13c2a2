// Converter machinery (registry opset rule, attribute converter) and converters end to end,
// checked against numpy.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/converters/converter_util.h"
#include "frontend/onnx_test_util.h"
#include "kiln/interp/interpreter.h"

namespace kiln::testing {
namespace {

using frontend::ConverterRegistry;

ConverterRegistry::Lookup find(const ConverterRegistry& r, int64_t opset) { return r.find("", "Op", opset); }

TEST(OnnxConverterRegistry, PicksTheHighestVersionNotAboveTheOpset) {
  ConverterRegistry r;
  auto impl = [](int v) {
    return [v](frontend::ConvertContext&) -> frontend::ConvertResult {
      return make_constant(NDArray::scalar(DType::kInt64, v));
    };
  };
  r.add("Op", 1, impl(1)).add("Op", 6, impl(6)).add("ai.onnx", "Op", 13, impl(13));
  for (auto [opset, chosen] :
       std::vector<std::pair<int64_t, int>>{{1, 1}, {5, 1}, {6, 6}, {12, 6}, {13, 13}, {99, 13}}) {
    auto found = find(r, opset);
    ASSERT_EQ(found.match, ConverterRegistry::Match::kFound) << "opset " << opset;
    EXPECT_EQ(found.since_version, chosen) << "opset " << opset;
  }
  EXPECT_EQ(find(r, 0).match, ConverterRegistry::Match::kOpsetTooLow);
  EXPECT_EQ(find(r, 0).lowest_version, 1);
  EXPECT_EQ(r.find("", "Other", 13).match, ConverterRegistry::Match::kUnknownOp);
  EXPECT_EQ(r.find("com.example", "Op", 13).match, ConverterRegistry::Match::kUnknownOp);
  EXPECT_TRUE(contains(error_of([&] { r.add("Op", 6, impl(6)); }), "registered twice"));
}

TEST(OnnxConverterRegistry, BuiltinConvertersAreListed) {
  std::vector<std::string> ops = supported_onnx_ops();
  for (const char* op : {"Conv", "Gemm", "Reshape", "Shape", "Resize", "ReduceSum", "Softmax"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
}

// Runs a one-node model built by `build` on `inputs` (names x0, x1, ...).
void expect_matches(const NDArray& actual, const NDArray& expected, double tol = 1e-5) {
  ASSERT_EQ(actual.shape(), expected.shape());
  expect_close(actual, expected.to_doubles(), tol, tol);
}

NDArray iota(Shape shape, double scale = 1.0, double offset = 0.0) {
  std::vector<double> v(static_cast<size_t>(num_elements(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<double>(i) * 1.7 + offset) * scale;
  return tensor(std::move(shape), v);
}

TEST(OnnxAttrConverter, RenamesDefaultsIgnoresForbidsAndChecks) {
  onnx::NodeProto node;
  node.set_op_type("Fake");
  set_attr(node, "kernel_shape", std::vector<int64_t>{3, 3});
  set_attr(node, "storage_order", int64_t{0});
  set_attr(node, "alpha", 0.5);
  frontend::OnnxAttrs attrs(node.attribute(), "");
  frontend::ImportState state;
  frontend::ConvertContext ctx(node, "n", 13, {}, attrs, state);
  auto cvt = frontend::AttrConverter("nn.max_pool2d")
                 .rename("kernel_shape", "pool_size")
                 .rename("strides", "strides", std::vector<int64_t>{2, 2})
                 .ignore("storage_order")
                 .transform("alpha", "ceil_mode", [](const frontend::OnnxAttr& a) { return AttrValue(a.f > 0); })
                 .set("layout", "NCHW");
  EXPECT_EQ(cvt.convert(ctx).to_string(), "pool_size=[3, 3], strides=[2, 2], ceil_mode=True, layout=\"NCHW\"");
  auto forbidding = frontend::AttrConverter("nn.max_pool2d").forbid("storage_order", "column major");
  EXPECT_TRUE(
      contains(error_of([&] { forbidding.convert(ctx); }), "attribute 'storage_order' is not supported: column major"));
  auto checking =
      frontend::AttrConverter("x")
          .ignore("kernel_shape")
          .ignore("storage_order")
          .ignore("alpha")
          .check([](const frontend::OnnxAttrs& a) { check(a.get_float("alpha") < 0.1, "alpha too large"); });
  EXPECT_TRUE(contains(error_of([&] { checking.convert(ctx); }), "alpha too large"));
  auto warning = frontend::AttrConverter("x").ignore("kernel_shape").ignore_with_warning("alpha", "approximated");
  EXPECT_EQ(warning.convert(ctx).to_string(), "storage_order=0");
  ASSERT_EQ(state.warnings.size(), 1u);
  EXPECT_EQ(state.warnings[0], "node 'n' (Fake): attribute 'alpha' is ignored: approximated");
  EXPECT_TRUE(contains(error_of([&] { attrs.get_ints("alpha"); }),
                       "attribute 'alpha' has the wrong kind (expected a list of ints, found FLOAT)"));
  EXPECT_TRUE(contains(error_of([&] { attrs.get_int("axis"); }), "required attribute 'axis' is missing"));
}

TEST(OnnxConverters, ConvWithSameUpperPaddingAndBias) {
  TempDir dir;
  NDArray x = iota({1, 2, 5, 6}), w = iota({3, 2, 3, 2}, 0.5, 1), bias = tensor({3}, {0.1, -0.2, 0.3});
  OnnxModelBuilder b(11);
  b.input("x", {1, 2, 5, 6}).output_any("y").initializer("w", w).initializer("b", bias);
  auto& n = b.node("Conv", {"x", "w", "b"}, {"y"});
  set_attr(n, "auto_pad", std::string("SAME_UPPER"));
  set_attr(n, "strides", std::vector<int64_t>{2, 2});
  NDArray expected = numpy_reference(dir, {{"x", x}, {"w", w}, {"b", bias}}, R"(
x, w, b = np.load('x.npy'), np.load('w.npy'), np.load('b.npy')
# SAME_UPPER, stride 2: out = ceil(in / 2); total pad = (out - 1) * 2 + k - in, extra at the end
def pads(n, k): total = max((-(-n // 2) - 1) * 2 + k - n, 0); return (total // 2, total - total // 2)
xp = np.pad(x, ((0, 0), (0, 0), pads(5, 3), pads(6, 2)))
oh, ow = (xp.shape[2] - 3) // 2 + 1, (xp.shape[3] - 2) // 2 + 1
out = np.zeros((1, 3, oh, ow), np.float32)
for o in range(3):
  for i in range(oh):
    for j in range(ow):
      out[0, o, i, j] = (xp[0, :, 2*i:2*i+3, 2*j:2*j+2] * w[o]).sum() + b[o]
)");
  expect_matches(run_model(b, {x})[0], expected);
}

TEST(OnnxConverters, Conv1dRunsAs2d) {
  TempDir dir;
  NDArray x = iota({2, 3, 7}), w = iota({4, 3, 3}, 1, 2);
  OnnxModelBuilder b(11);
  b.input("x", {2, 3, 7}).output_any("y").initializer("w", w);
  auto& n = b.node("Conv", {"x", "w"}, {"y"});
  set_attr(n, "pads", std::vector<int64_t>{1, 0});
  set_attr(n, "dilations", std::vector<int64_t>{2});
  NDArray expected = numpy_reference(dir, {{"x", x}, {"w", w}}, R"(
x, w = np.load('x.npy'), np.load('w.npy')
xp = np.pad(x, ((0, 0), (0, 0), (1, 0)))
L = xp.shape[2] - 2 * 2
out = np.stack([np.einsum('ncl,ocl->no', np.stack([xp[:, :, t + 2*k] for k in range(3)], -1), w) for t in range(L)], -1).astype(np.float32)
)");
  expect_matches(run_model(b, {x})[0], expected);
}

TEST(OnnxConverters, MaxPoolCeilModeAndAveragePoolExcludingPads) {
  TempDir dir;
  NDArray x = iota({1, 1, 5, 5});
  OnnxModelBuilder b(12);
  b.input("x", {1, 1, 5, 5}).output_any("max").output_any("avg");
  auto& mp = b.node("MaxPool", {"x"}, {"max"});
  set_attr(mp, "kernel_shape", std::vector<int64_t>{2, 2});
  set_attr(mp, "strides", std::vector<int64_t>{2, 2});
  set_attr(mp, "ceil_mode", int64_t{1});
  auto& ap = b.node("AveragePool", {"x"}, {"avg"});
  set_attr(ap, "kernel_shape", std::vector<int64_t>{3, 3});
  set_attr(ap, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(ap, "strides", std::vector<int64_t>{2, 2});
  NDArray max_ref = numpy_reference(dir, {{"x", x}}, R"(
x = np.load('x.npy')[0, 0]
out = np.array([[x[2*i:2*i+2, 2*j:2*j+2].max() for j in range(3)] for i in range(3)], np.float32)[None, None]
)");
  NDArray avg_ref = numpy_reference(dir, {{"x", x}}, R"(
x = np.load('x.npy')[0, 0]
def win(i, j): return x[max(2*i-1, 0):2*i+2, max(2*j-1, 0):2*j+2]
out = np.array([[win(i, j).mean() for j in range(3)] for i in range(3)], np.float32)[None, None]
)");
  std::vector<NDArray> out = run_model(b, {x});
  expect_matches(out[0], max_ref);
  expect_matches(out[1], avg_ref);
}

TEST(OnnxConverters, GemmWithTransposesAlphaAndBeta) {
  TempDir dir;
  NDArray a = iota({3, 2}), w = iota({4, 3}, 1, 1), c = iota({4}, 1, 2);
  OnnxModelBuilder b(11);
  b.input("a", {3, 2}).output_any("y").initializer("w", w).initializer("c", c);
  auto& n = b.node("Gemm", {"a", "w", "c"}, {"y"});
  set_attr(n, "transA", int64_t{1});
  set_attr(n, "transB", int64_t{1});
  set_attr(n, "alpha", 0.5);
  set_attr(n, "beta", 2.0);
  NDArray expected = numpy_reference(
      dir, {{"a", a}, {"w", w}, {"c", c}},
      "out = (0.5 * np.load('a.npy').T @ np.load('w.npy').T + 2 * np.load('c.npy')).astype(np.float32)");
  expect_matches(run_model(b, {a})[0], expected);
}

TEST(OnnxConverters, MatMulBroadcastsBatches) {
  TempDir dir;
  NDArray a = iota({2, 1, 3, 4}), w = iota({5, 4, 2}, 1, 1);
  OnnxModelBuilder b(13);
  b.input("a", {2, 1, 3, 4}).output_any("y").initializer("w", w);
  b.node("MatMul", {"a", "w"}, {"y"});
  NDArray expected = numpy_reference(dir, {{"a", a}, {"w", w}}, "out = np.load('a.npy') @ np.load('w.npy')");
  expect_matches(run_model(b, {a})[0], expected);
}

// Before opset 13 Softmax normalises the input flattened to 2-D at `axis`; from 13, along it.
TEST(OnnxConverters, SoftmaxSemanticsChangeAtOpset13) {
  TempDir dir;
  NDArray x = iota({2, 3, 4});
  for (int64_t opset : {11, 13}) {
    OnnxModelBuilder b(opset);
    b.input("x", {2, 3, 4}).output_any("y");
    set_attr(b.node("Softmax", {"x"}, {"y"}), "axis", int64_t{1});
    std::string script = opset < 13 ? R"(
x = np.load('x.npy').reshape(2, 12)
e = np.exp(x - x.max(1, keepdims=True))
out = (e / e.sum(1, keepdims=True)).reshape(2, 3, 4)
)"
                                    : R"(
x = np.load('x.npy')
e = np.exp(x - x.max(1, keepdims=True))
out = e / e.sum(1, keepdims=True)
)";
    expect_matches(run_model(b, {x})[0], numpy_reference(dir, {{"x", x}}, script));
  }
}

TEST(OnnxConverters, SliceWithNegativeStepsAndSplit) {
  TempDir dir;
  NDArray x = iota({4, 6});
  OnnxModelBuilder b(13);
  b.input("x", {4, 6}).output_any("s").output_any("p0").output_any("p1");
  b.initializer("starts", ints({-1, 1})).initializer("ends", ints({-100, 6})).initializer("axes", ints({0, 1}));
  b.initializer("steps", ints({-2, 2})).initializer("split", ints({2, 4}));
  b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"s"});
  set_attr(b.node("Split", {"x", "split"}, {"p0", "p1"}), "axis", int64_t{1});
  std::vector<NDArray> out = run_model(b, {x});
  expect_matches(out[0], numpy_reference(dir, {{"x", x}}, "out = np.load('x.npy')[::-2, 1:6:2]"));
  expect_matches(out[1], numpy_reference(dir, {{"x", x}}, "out = np.load('x.npy')[:, :2]"));
  expect_matches(out[2], numpy_reference(dir, {{"x", x}}, "out = np.load('x.npy')[:, 2:]"));
}

TEST(OnnxConverters, ReductionsAndArgMax) {
  TempDir dir;
  NDArray x = iota({2, 3, 4});
  OnnxModelBuilder b(13);
  b.input("x", {2, 3, 4}).output_any("sum").output_any("mean").output_any("arg", onnx::TensorProto::INT64);
  b.initializer("axes", ints({0, 2}));
  set_attr(b.node("ReduceSum", {"x", "axes"}, {"sum"}), "keepdims", int64_t{0});
  set_attr(b.node("ReduceMean", {"x"}, {"mean"}), "axes", std::vector<int64_t>{-1});
  set_attr(b.node("ArgMax", {"x"}, {"arg"}), "axis", int64_t{1});
  std::vector<NDArray> out = run_model(b, {x});
  expect_matches(out[0], numpy_reference(dir, {{"x", x}}, "out = np.load('x.npy').sum((0, 2))"));
  expect_matches(out[1], numpy_reference(dir, {{"x", x}}, "out = np.load('x.npy').mean(-1, keepdims=True)"));
  NDArray arg = numpy_reference(dir, {{"x", x}}, "out = np.load('x.npy').argmax(1)[:, None, :]");
  EXPECT_EQ(out[2].dtype(), DType::kInt64);
  EXPECT_EQ(out[2].to_ints(), arg.to_ints());
}

TEST(OnnxConverters, BatchNormAndPad) {
  TempDir dir;
  NDArray x = iota({1, 2, 2, 3});
  NDArray scale = tensor({2}, {1.5, 0.5}), bias = tensor({2}, {0.1, 0.2}), mean = tensor({2}, {0.3, -0.1}),
          var = tensor({2}, {2.0, 0.25});
  OnnxModelBuilder b(13);
  b.input("x", {1, 2, 2, 3}).output_any("bn").output_any("padded");
  b.initializer("s", scale).initializer("b", bias).initializer("m", mean).initializer("v", var);
  b.initializer("pads", ints({0, 0, 1, 0, 0, 0, 0, 2})).initializer("value", tensor({}, {9}));
  set_attr(b.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"bn"}), "epsilon", 1e-3);
  set_attr(b.node("Pad", {"x", "pads", "value"}, {"padded"}), "mode", std::string("constant"));
  std::vector<NDArray> out = run_model(b, {x});
  expect_matches(out[0], numpy_reference(dir, {{"x", x}, {"s", scale}, {"b", bias}, {"m", mean}, {"v", var}}, R"(
r = lambda n: np.load(n + '.npy').reshape(1, 2, 1, 1)
out = (np.load('x.npy') - r('m')) / np.sqrt(r('v') + 1e-3) * r('s') + r('b')
)"),
                 1e-4);
  expect_matches(
      out[1], numpy_reference(dir, {{"x", x}},
                              "out = np.pad(np.load('x.npy'), ((0, 0), (0, 0), (1, 0), (0, 2)), constant_values=9)"));
}

TEST(OnnxConverters, ResizeNearestAndLinear) {
  TempDir dir;
  NDArray x = iota({1, 1, 2, 3});
  OnnxModelBuilder b(13);
  b.input("x", {1, 1, 2, 3}).output_any("near").output_any("lin");
  b.initializer("scales", tensor({4}, {1, 1, 2, 2}));
  auto& near = b.node("Resize", {"x", "", "scales"}, {"near"});
  set_attr(near, "mode", std::string("nearest"));
  set_attr(near, "coordinate_transformation_mode", std::string("asymmetric"));
  set_attr(near, "nearest_mode", std::string("floor"));
  auto& lin = b.node("Resize", {"x", "", "scales"}, {"lin"});
  set_attr(lin, "mode", std::string("linear"));
  set_attr(lin, "coordinate_transformation_mode", std::string("align_corners"));
  std::vector<NDArray> out = run_model(b, {x});
  expect_matches(out[0], numpy_reference(dir, {{"x", x}}, "out = np.load('x.npy').repeat(2, 2).repeat(2, 3)"));
  expect_matches(out[1], numpy_reference(dir, {{"x", x}}, R"(
x = np.load('x.npy')[0, 0]
def interp(v, n): return np.array([np.interp(i * (len(v) - 1) / (n - 1), np.arange(len(v)), v) for i in range(n)])
rows = np.stack([interp(r, 6) for r in x])
out = np.stack([interp(c, 4) for c in rows.T]).T[None, None].astype(np.float32)
)"));
}

TEST(OnnxConverters, ConstantOfShapeRangeAndCast) {
  OnnxModelBuilder b(13);
  b.input("x", {2})
      .output_any("filled", onnx::TensorProto::INT64)
      .output_any("range")
      .output_any("cast", onnx::TensorProto::INT32);
  b.initializer("shape", ints({2, 3})).initializer("start", tensor({}, {1})).initializer("limit", tensor({}, {2.5}));
  b.initializer("delta", tensor({}, {0.5}));
  set_attr(b.node("ConstantOfShape", {"shape"}, {"filled"}), "value", ints({7}));
  b.node("Range", {"start", "limit", "delta"}, {"range"});
  set_attr(b.node("Cast", {"x"}, {"cast"}), "to", int64_t{onnx::TensorProto::INT32});
  std::vector<NDArray> out = run_model(b, {tensor({2}, {2.7, -1.5})});
  EXPECT_EQ(out[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(out[0].to_ints(), (std::vector<int64_t>{7, 7, 7, 7, 7, 7}));
  expect_close(out[1], {1, 1.5, 2});
  EXPECT_EQ(out[2].dtype(), DType::kInt32);
  EXPECT_EQ(out[2].to_ints(), (std::vector<int64_t>{2, -1}));
}

TEST(OnnxConverters, LegacyBroadcastAlignsAtAxis) {
  OnnxModelBuilder b(6);
  b.input("x", {2, 3, 2}).input("v", {3}).output_any("y");
  auto& n = b.node("Add", {"x", "v"}, {"y"});
  set_attr(n, "broadcast", int64_t{1});
  set_attr(n, "axis", int64_t{1});
  NDArray x = tensor({2, 3, 2}, {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1});
  expect_close(run_model(b, {x, tensor({3}, {10, 20, 30})})[0], {10, 10, 20, 20, 30, 30, 11, 11, 21, 21, 31, 31});
}

}  // namespace
}  // namespace kiln::testing
