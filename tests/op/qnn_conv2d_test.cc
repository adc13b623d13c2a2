// qnn.conv2d and qnn.matmul: type relations and reference kernels against numpy.
#include <cmath>

#include "op/numpy_eval.h"
#include "op/numpy_ref.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

Type typed(Shape shape, DType t) { return tensor_type(std::move(shape), t); }
NDArray scalar(DType t, double v) { return NDArray::scalar(t, v); }

// Integer samples in [lo, hi] of dtype t.
NDArray int_sample(Shape shape, uint32_t seed, double lo, double hi, DType t) {
  NDArray f = sample_tensor(std::move(shape), seed, lo, hi + 1, DType::kFloat64);
  NDArray out = NDArray::empty(f.shape(), t);
  for (int64_t i = 0; i < f.numel(); ++i) out.set(i, std::floor(f.at(i)));
  return out;
}

TEST(QnnConv2dType, Shapes) {
  Type x = typed({1, 4, 5, 5}, DType::kUInt8), w = typed({6, 2, 3, 3}, DType::kInt8);
  Type zp = typed({}, DType::kUInt8), wzp = typed({6}, DType::kInt8);
  EXPECT_EQ(type_str(infer_op("qnn.conv2d", {x, w, zp, wzp, f32({}), f32({6})},
                              {{"groups", 2}, {"padding", std::vector<int64_t>{1, 1}}})),
            "Tensor[(1, 6, 5, 5), int32]");
  EXPECT_EQ(type_str(infer_op("qnn.conv2d", {x, typed({6, 4, 2, 2}, DType::kUInt8), zp, zp, f32({}), f32({})},
                              {{"strides", std::vector<int64_t>{2, 2}}})),
            "Tensor[(1, 6, 2, 2), int32]");
}

TEST(QnnConv2dType, Errors) {
  Type x = typed({1, 4, 5, 5}, DType::kUInt8), zp = typed({}, DType::kUInt8);
  std::string e = infer_op_error("qnn.conv2d", {x, typed({6, 3, 3, 3}, DType::kUInt8), zp, zp, f32({}), f32({})});
  EXPECT_NE(e.find("qnn.conv2d"), std::string::npos) << e;
  EXPECT_NE(e.find("'data' (1, 4, 5, 5)"), std::string::npos) << e;
  EXPECT_NE(e.find("'kernel' (6, 3, 3, 3)"), std::string::npos) << e;
  e = infer_op_error("qnn.conv2d",
                     {x, typed({6, 4, 3, 3}, DType::kUInt8), zp, typed({5}, DType::kUInt8), f32({}), f32({})});
  EXPECT_NE(e.find("'kernel_zero_point'"), std::string::npos) << e;
  EXPECT_NE(e.find("(6)"), std::string::npos) << e;
  e = infer_op_error("qnn.conv2d", {f32({1, 4, 5, 5}), typed({6, 4, 3, 3}, DType::kUInt8), zp, zp, f32({}), f32({})});
  EXPECT_NE(e.find("8-bit"), std::string::npos) << e;
}

TEST(QnnConv2dKernel, MatchesNumpyWithZeroPointsPaddingAndGroups) {
  NDArray x = int_sample({2, 4, 5, 6}, 1, 0, 255, DType::kUInt8);
  NDArray w = int_sample({6, 2, 3, 2}, 2, -128, 127, DType::kInt8);
  NDArray wzp = NDArray::from_doubles({6}, DType::kInt8, std::vector<double>{-3, 0, 5, 1, -1, 2});
  Attrs attrs{{"groups", 2},
              {"padding", std::vector<int64_t>{1, 0, 2, 1}},
              {"strides", std::vector<int64_t>{2, 1}},
              {"dilation", std::vector<int64_t>{1, 2}}};
  auto out = run_op(
      "qnn.conv2d",
      {x, w, scalar(DType::kUInt8, 7), wzp, NDArray::scalar(DType::kFloat32, 1), tensor({6}, {1, 1, 1, 1, 1, 1})},
      attrs);
  ASSERT_EQ(out[0].shape(), (Shape{2, 6, 3, 5}));
  EXPECT_EQ(out[0].dtype(), DType::kInt32);
  std::string setup = "x = " + np_array(x) + " - 7\nw = " + np_array(w) +
                      " - np.array([-3, 0, 5, 1, -1, 2.0]).reshape(6, 1, 1, 1)\n"
                      "xp = np.pad(x, ((0, 0), (0, 0), (1, 2), (0, 1)))\n"
                      "out = np.zeros((2, 6, 3, 5))\n"
                      "for oc in range(6):\n"
                      "  g = oc // 3\n"
                      "  for oy in range(3):\n"
                      "    for ox in range(5):\n"
                      "      patch = xp[:, 2 * g:2 * g + 2, 2 * oy:2 * oy + 3, ox:ox + 3:2]\n"
                      "      out[:, oc, oy, ox] = (patch * w[oc]).sum(axis=(1, 2, 3))\n";
  expect_close(out[0], numpy::eval("out", setup), 0, 0);
}

TEST(QnnMatmulType, ShapesAndErrors) {
  Type zp = typed({}, DType::kUInt8);
  EXPECT_EQ(type_str(infer_op("qnn.matmul", {typed({3, 2, 4}, DType::kUInt8), typed({4, 5}, DType::kInt8), zp,
                                             typed({5}, DType::kInt8), f32({}), f32({})})),
            "Tensor[(3, 2, 5), int32]");
  std::string e = infer_op_error(
      "qnn.matmul", {typed({2, 4}, DType::kUInt8), typed({3, 5}, DType::kUInt8), zp, zp, f32({}), f32({})});
  EXPECT_NE(e.find("qnn.matmul"), std::string::npos) << e;
  EXPECT_NE(e.find("'tensor_a' (2, 4)"), std::string::npos) << e;
  EXPECT_NE(e.find("'tensor_b' (3, 5)"), std::string::npos) << e;
  e = infer_op_error("qnn.matmul", {typed({2, 4}, DType::kUInt8), typed({4, 5}, DType::kUInt8),
                                    typed({3}, DType::kUInt8), zp, f32({}), f32({})});
  EXPECT_NE(e.find("'a_zero_point'"), std::string::npos) << e;
}

TEST(QnnMatmulKernel, MatchesNumpyWithPerRowAndPerColumnZeroPoints) {
  NDArray a = int_sample({2, 3, 4}, 3, 0, 255, DType::kUInt8);
  NDArray b = int_sample({1, 4, 5}, 4, -128, 127, DType::kInt8);
  NDArray azp = NDArray::from_doubles({3}, DType::kUInt8, std::vector<double>{1, 128, 255});
  NDArray bzp = NDArray::from_doubles({5}, DType::kInt8, std::vector<double>{-1, 0, 3, 7, -128});
  auto out =
      run_op("qnn.matmul", {a, b, azp, bzp, NDArray::scalar(DType::kFloat32, 1), NDArray::scalar(DType::kFloat32, 1)});
  ASSERT_EQ(out[0].shape(), (Shape{2, 3, 5}));
  std::string expr = "np.matmul(" + np_array(a) + " - np.array([1, 128, 255.0]).reshape(3, 1), " + np_array(b) +
                     " - np.array([-1, 0, 3, 7, -128.0]))";
  expect_close(out[0], numpy::eval(expr), 0, 0);
}

}  // namespace
}  // namespace kiln::testing
