// Converters of the loss and normalisation family, end to end through the interpreter,
// checked against numpy.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/onnx_test_util.h"
#include "kiln/interp/interpreter.h"

namespace kiln::testing {
namespace {

// numpy_reference saves through np.ascontiguousarray, which turns a 0-d result into shape (1);
// a scalar loss is compared with it as a scalar.
void expect_matches(const NDArray& actual, const NDArray& expected, double tol = 1e-5) {
  if (actual.shape().empty() && expected.shape() == Shape{1}) {
    expect_close(actual, expected.to_doubles(), tol, tol);
    return;
  }
  ASSERT_EQ(actual.shape(), expected.shape());
  expect_close(actual, expected.to_doubles(), tol, tol);
}

NDArray wave(Shape shape, double scale = 1.0, double offset = 0.0) {
  std::vector<double> v(static_cast<size_t>(num_elements(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<double>(i) * 1.7 + offset) * scale;
  return tensor(std::move(shape), v);
}

NDArray labels(Shape shape, int64_t classes) {
  std::vector<double> v(static_cast<size_t>(num_elements(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 5 + 1) % static_cast<size_t>(classes));
  return tensor(std::move(shape), v, DType::kInt64);
}

const char* kNllReference = R"(
def nll(logp, t, w, ii, reduction):
    tc = np.where(t == ii, 0, t)
    g = np.take_along_axis(logp, tc[:, None], 1)[:, 0]
    wt = np.where(t == ii, 0.0, w[tc])
    loss = -g * wt
    if reduction == 'none': return loss
    if reduction == 'sum': return loss.sum()
    return loss.sum() / wt.sum()
)";

TEST(OnnxNormalizationConverters, NegativeLogLikelihoodLossWithWeightsAndIgnoreIndex) {
  TempDir dir;
  NDArray x = wave({3, 4, 2}), t = labels({3, 2}, 4), w = tensor({4}, {0.2, 1, 0.7, 1.5});
  for (std::string reduction : {"none", "sum", "mean"}) {
    OnnxModelBuilder b(13);
    b.input("x0", {3, 4, 2}).input("x1", {3, 2}, onnx::TensorProto::INT64).input("x2", {4}).output_any("y");
    auto& n = b.node("NegativeLogLikelihoodLoss", {"x0", "x1", "x2"}, {"y"});
    set_attr(n, "reduction", reduction);
    set_attr(n, "ignore_index", int64_t{1});
    NDArray want = numpy_reference(dir, {{"x", x}, {"t", t}, {"w", w}},
                                   std::string(kNllReference) + "out = nll(np.load('x.npy'), np.load('t.npy'), " +
                                       "np.load('w.npy'), 1, '" + reduction + "')");
    expect_matches(run_model(b, {x, t, w})[0], want);
  }
}

TEST(OnnxNormalizationConverters, NegativeLogLikelihoodLossDefaultsIgnoreNothing) {
  NDArray x = tensor({2, 3}, {-1, -2, -3, -4, -5, -6}), t = tensor({2}, {2, 0}, DType::kInt32);
  OnnxModelBuilder b(12);
  b.input("x0", {2, 3}).input("x1", {2}, onnx::TensorProto::INT32).output_any("y");
  b.node("NegativeLogLikelihoodLoss", {"x0", "x1"}, {"y"});
  expect_close(run_model(b, {x, t})[0], {3.5});  // mean of 3 and 4
}

// Both outputs: the loss and the log-probabilities, on 4-D scores.
TEST(OnnxNormalizationConverters, SoftmaxCrossEntropyLossWithLogProb) {
  TempDir dir;
  NDArray x = wave({2, 3, 2, 2}, 2.0), t = labels({2, 2, 2}, 3);
  OnnxModelBuilder b(13);
  b.input("x0", {2, 3, 2, 2}).input("x1", {2, 2, 2}, onnx::TensorProto::INT64).output_any("loss").output_any("logp");
  auto& n = b.node("SoftmaxCrossEntropyLoss", {"x0", "x1"}, {"loss", "logp"});
  set_attr(n, "reduction", std::string("sum"));
  set_attr(n, "ignore_index", int64_t{-1});
  std::string logp =
      "x = np.load('x.npy')\nm = x.max(1, keepdims=True)\n"
      "logp = x - m - np.log(np.exp(x - m).sum(1, keepdims=True))\n";
  std::vector<NDArray> out = run_model(b, {x, t});
  ASSERT_EQ(out.size(), 2u);
  expect_matches(out[0], numpy_reference(dir, {{"x", x}, {"t", t}},
                                         std::string(kNllReference) + logp +
                                             "out = nll(logp, np.load('t.npy'), np.ones(3), -1, 'sum')"));
  expect_matches(out[1], numpy_reference(dir, {{"x", x}}, logp + "out = logp"));
}

TEST(OnnxNormalizationConverters, InstanceNormalizationAndLrn) {
  TempDir dir;
  NDArray x = wave({2, 3, 4}, 3.0), scale = tensor({3}, {1, 0.5, 2}), bias = tensor({3}, {0, 1, -1});
  OnnxModelBuilder b(6);
  b.input("x0", {2, 3, 4}).input("x1", {3}).input("x2", {3}).output_any("y");
  set_attr(b.node("InstanceNormalization", {"x0", "x1", "x2"}, {"y"}), "epsilon", 0.01);
  expect_matches(run_model(b, {x, scale, bias})[0],
                 numpy_reference(dir, {{"x", x}},
                                 "x = np.load('x.npy')\nm = x.mean(2, keepdims=True)\nv = x.var(2, keepdims=True)\n"
                                 "out = (x - m) / np.sqrt(v + np.float32(0.01)) * np.array([1, 0.5, 2])[:, None] + "
                                 "np.array([0, 1, -1])[:, None]"),
                 1e-4);

  // ONNX's defaults: alpha 1e-4, beta 0.75, bias 1; here alpha is raised so it matters.
  OnnxModelBuilder l(13);
  l.input("x0", {2, 3, 4}).output_any("y");
  auto& n = l.node("LRN", {"x0"}, {"y"});
  set_attr(n, "size", int64_t{3});
  set_attr(n, "alpha", 0.5);
  expect_matches(run_model(l, {x})[0],
                 numpy_reference(dir, {{"x", x}},
                                 "x = np.load('x.npy').astype(np.float64)\nsq = x ** 2\n"
                                 "s = sq + np.concatenate([sq[:, 1:], 0 * sq[:, :1]], 1) + "
                                 "np.concatenate([0 * sq[:, :1], sq[:, :-1]], 1)\n"
                                 "out = x / (1 + 0.5 / 3 * s) ** 0.75"),
                 1e-5);
}

TEST(OnnxNormalizationConverters, MeanVarianceNormalizationDefaultAndGivenAxes) {
  TempDir dir;
  NDArray x = wave({2, 3, 2, 2}, 2.0, 0.3);
  for (bool given : {false, true}) {
    OnnxModelBuilder b(13);
    b.input("x0", {2, 3, 2, 2}).output_any("y");
    auto& n = b.node("MeanVarianceNormalization", {"x0"}, {"y"});
    if (given) set_attr(n, "axes", std::vector<int64_t>{1, -1});
    std::string axes = given ? "(1, 3)" : "(0, 2, 3)";
    expect_matches(
        run_model(b, {x})[0],
        numpy_reference(dir, {{"x", x}},
                        "x = np.load('x.npy')\nm = x.mean(" + axes + ", keepdims=True)\n" +
                            "out = (x - m) / (np.sqrt(((x - m) ** 2).mean(" + axes + ", keepdims=True)) + 1e-9)"),
        1e-4);
  }
}

TEST(OnnxNormalizationConverters, LossErrorsNameTheShapes) {
  OnnxModelBuilder b(13);
  b.input("x0", {3, 4, 2}).input("x1", {3, 3}, onnx::TensorProto::INT64).output_any("y");
  b.node("NegativeLogLikelihoodLoss", {"x0", "x1"}, {"y"}, "loss");
  std::string e = error_of([&] { from_onnx_bytes(b.bytes(), {}, "test.onnx"); });
  EXPECT_TRUE(contains(e, "nn.nll_loss")) << e;
  EXPECT_TRUE(contains(e, "expected (3, 2), found (3, 3)")) << e;
}

}  // namespace
}  // namespace kiln::testing
