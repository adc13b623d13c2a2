// Converters of the windows and vision family end to end: ConvTranspose (output_shape,
// auto_pad, 1-D), 3-D Conv and pools, MaxPool's Indices, MaxUnpool, GridSample, RoiAlign,
// NonMaxSuppression.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/onnx_test_util.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/printer.h"

namespace kiln::testing {
namespace {

using Ints = std::vector<int64_t>;

NDArray wave(Shape shape, double phase) {
  std::vector<double> v(static_cast<size_t>(num_elements(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(double(i) * 1.7 + phase);
  return tensor(std::move(shape), v);
}

void expect_matches(const NDArray& actual, const NDArray& expected, double tol = 1e-5) {
  ASSERT_EQ(actual.shape(), expected.shape());
  expect_close(actual, expected.to_doubles(), tol, tol);
}

// numpy's transposed convolution without padding (groups 1), for 1-D and 2-D inputs.
const char* const kConvTranspose = R"(
def conv_t(x, w, s):
  k = w.shape[2:]
  o = [(x.shape[i + 2] - 1) * s[i] + k[i] for i in range(len(k))]
  y = np.zeros((x.shape[0], w.shape[1]) + tuple(o))
  for n in range(x.shape[0]):
    for z in np.ndindex(*x.shape[2:]):
      for t in np.ndindex(*k):
        pos = tuple(z[i] * s[i] + t[i] for i in range(len(k)))
        y[(n, slice(None)) + pos] += np.dot(x[(n, slice(None)) + z], w[(slice(None), slice(None)) + t])
  return y
)";

TEST(OnnxVisionConverters, ConvTransposeOutputShapeExtendsAtTheEnd) {
  OnnxModelBuilder b(11);
  b.input("x0", {1, 2, 3, 3}).input("x1", {2, 3, 3, 3}).output("y", {1, 3, 10, 8});
  auto& n = b.node("ConvTranspose", {"x0", "x1"}, {"y"});
  set_attr(n, "strides", Ints{3, 2});
  set_attr(n, "output_shape", Ints{10, 8});
  NDArray x = wave({1, 2, 3, 3}, 0.1), w = wave({2, 3, 3, 3}, 0.5);
  NDArray y = run_model(b, {x, w})[0];
  TempDir dir;
  NDArray ref = numpy_reference(dir, {{"x", x}, {"w", w}},
                                std::string(kConvTranspose) +
                                    "r = conv_t(np.load('x.npy'), np.load('w.npy'), [3, 2])\n"
                                    "out = np.zeros((1, 3, 10, 8), np.float32)\nout[:, :, :9, :7] = r\n");
  expect_matches(y, ref, 1e-4);
}

TEST(OnnxVisionConverters, ConvTranspose1dSameUpperAndBias) {
  OnnxModelBuilder b(11);
  b.input("x0", {1, 1, 4}).input("x1", {1, 2, 3}).input("x2", {2}).output("y", {1, 2, 8});
  auto& n = b.node("ConvTranspose", {"x0", "x1", "x2"}, {"y"});
  set_attr(n, "strides", Ints{2});
  set_attr(n, "auto_pad", std::string("SAME_UPPER"));
  NDArray x = wave({1, 1, 4}, 0.3), w = wave({1, 2, 3}, 0.9), bias = tensor({2}, {0.5, -1});
  NDArray y = run_model(b, {x, w, bias})[0];
  // Full extent 9, output 8: total padding 1, which SAME_UPPER puts at the end.
  TempDir dir;
  NDArray ref = numpy_reference(dir, {{"x", x}, {"w", w}},
                                std::string(kConvTranspose) +
                                    "out = (conv_t(np.load('x.npy'), np.load('w.npy'), [2])[:, :, :8] + "
                                    "np.array([0.5, -1]).reshape(1, 2, 1)).astype(np.float32)\n");
  expect_matches(y, ref, 1e-4);
}

TEST(OnnxVisionConverters, Conv3dAndPool3dUseTheNcdhwOps) {
  OnnxModelBuilder b(11);
  b.input("x0", {1, 1, 3, 3, 3}).input("x1", {1, 1, 2, 2, 2}).output("y", {1, 1, 1, 1, 1});
  b.node("Conv", {"x0", "x1"}, {"c"});
  auto& pool = b.node("MaxPool", {"c"}, {"y"});
  set_attr(pool, "kernel_shape", Ints{2, 2, 2});
  std::vector<double> ones(27, 1.0);
  ones[26] = 10;
  // Every 2x2x2 sum is 8 except the one holding the 10: 17; the max pool picks it.
  NDArray y = run_model(b, {tensor({1, 1, 3, 3, 3}, ones), tensor({1, 1, 2, 2, 2}, std::vector<double>(8, 1.0))})[0];
  expect_close(y, {17});
  OnnxModel m = from_onnx_bytes(b.bytes(), {}, "test.onnx");
  std::string text = print_module(m.module);
  EXPECT_TRUE(contains(text, "nn.conv3d(")) << text;
  EXPECT_TRUE(contains(text, "nn.max_pool3d(")) << text;
}

TEST(OnnxVisionConverters, MaxPoolIndicesAndMaxUnpool) {
  OnnxModelBuilder b(12);
  b.input("x0", {1, 1, 2, 4}).output("v", {1, 1, 1, 2}).output("i", {1, 1, 1, 2}, onnx::TensorProto::INT64);
  b.output("u", {1, 1, 2, 4});
  auto& pool = b.node("MaxPool", {"x0"}, {"v", "i"});
  set_attr(pool, "kernel_shape", Ints{2, 2});
  set_attr(pool, "strides", Ints{2, 2});
  set_attr(pool, "storage_order", int64_t{1});
  // MaxUnpool wants row-major positions: a second MaxPool gives them.
  auto& row = b.node("MaxPool", {"x0"}, {"unused", "i_row"});
  set_attr(row, "kernel_shape", Ints{2, 2});
  set_attr(row, "strides", Ints{2, 2});
  auto& unpool = b.node("MaxUnpool", {"v", "i_row"}, {"u"});
  set_attr(unpool, "kernel_shape", Ints{2, 2});
  set_attr(unpool, "strides", Ints{2, 2});
  auto out = run_model(b, {tensor({1, 1, 2, 4}, {1, 2, 9, 3, 4, 0, 5, 6})});
  expect_close(out[0], {4, 9});
  // Column-major in the 2 x 4 plane: (1, 0) -> 1, (0, 2) -> 4.
  EXPECT_EQ(out[1].to_ints(), (Ints{1, 4}));
  expect_close(out[2], {0, 0, 9, 0, 4, 0, 0, 0});
}

TEST(OnnxVisionConverters, GridSampleTransposesTheGrid) {
  OnnxModelBuilder b(16);
  b.input("x0", {1, 1, 2, 3}).input("x1", {1, 1, 2, 2}).output("y", {1, 1, 1, 2});
  auto& n = b.node("GridSample", {"x0", "x1"}, {"y"});
  set_attr(n, "align_corners", int64_t{1});
  // Points (x, y) = (-1, -1) and (0, 0): pixel (0, 0) and the middle of column 1.
  NDArray y = run_model(b, {tensor({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}), tensor({1, 1, 2, 2}, {-1, -1, 0, 0})})[0];
  expect_close(y, {1, 3.5});
}

TEST(OnnxVisionConverters, RoiAlignJoinsBatchIndices) {
  OnnxModelBuilder b(16);
  b.input("x0", {2, 1, 4, 4}).input("x1", {2, 4}).input("x2", {2}, onnx::TensorProto::INT64).output("y", {2, 1, 1, 1});
  auto& n = b.node("RoiAlign", {"x0", "x1", "x2"}, {"y"});
  set_attr(n, "output_height", int64_t{1});
  set_attr(n, "output_width", int64_t{1});
  set_attr(n, "sampling_ratio", int64_t{2});
  set_attr(n, "coordinate_transformation_mode", std::string("output_half_pixel"));
  std::vector<double> v;
  for (int i = 0; i < 32; ++i) v.push_back(i);  // image 1 is image 0 plus 16
  NDArray y = run_model(
      b, {tensor({2, 1, 4, 4}, v), tensor({2, 4}, {0, 0, 2, 2, 0, 0, 2, 2}), tensor({2}, {0, 1}, DType::kInt64)})[0];
  expect_close(y, {5, 21});
}

TEST(OnnxVisionConverters, NonMaxSuppressionWithDefaults) {
  OnnxModelBuilder b(11);
  b.input("x0", {1, 3, 4}).input("x1", {1, 1, 3}).input("x2", {1}, onnx::TensorProto::INT64);
  b.output("y", {-1, 3}, onnx::TensorProto::INT64);
  b.node("NonMaxSuppression", {"x0", "x1", "x2"}, {"y"});
  // Boxes 0 and 1 overlap (IoU 0.9 / 1.1 > the default 0); box 2 is apart.
  NDArray boxes = tensor({1, 3, 4}, {0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, 2, 1, 3});
  NDArray y = run_model(b, {boxes, tensor({1, 1, 3}, {0.5, 0.9, 0.1}), tensor({1}, {5}, DType::kInt64)})[0];
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.to_ints(), (Ints{0, 0, 1, 0, 0, 2}));
}

}  // namespace
}  // namespace kiln::testing
