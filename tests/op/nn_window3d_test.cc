// nn.conv3d, nn.conv3d_transpose, nn.max_pool3d, nn.avg_pool3d, nn.max_pool2d_with_argmax and
// nn.max_unpool: type relations and reference kernels against numpy loops.
#include <cmath>

#include "op/numpy_eval.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

using Ints = std::vector<int64_t>;

std::vector<double> wave(int64_t n, double phase) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(std::round(std::sin(double(i) * 1.3 + phase) * 100) / 50);
  return v;
}

NDArray wave_tensor(Shape shape, double phase) {
  int64_t n = num_elements(shape);
  return tensor(std::move(shape), wave(n, phase));
}

Shape shape_of(const Type& t) { return expect_tensor(t, "result").shape; }

// numpy loops: conv (groups, strides, padding begins+ends, dilation), its transpose, pools.
const char* const kNumpyWindows = R"(
def conv(x, w, s, p, d, g):
  x = np.pad(x, [(0, 0), (0, 0)] + [(p[i], p[i + 3]) for i in range(3)])
  O, I = w.shape[:2]
  K = w.shape[2:]
  o = [(x.shape[i + 2] - d[i] * (K[i] - 1) - 1) // s[i] + 1 for i in range(3)]
  y = np.zeros((x.shape[0], O) + tuple(o))
  for n in range(x.shape[0]):
    for oc in range(O):
      gi = oc // (O // g)
      for z in np.ndindex(*o):
        for t in np.ndindex(*K):
          pos = tuple(z[i] * s[i] + t[i] * d[i] for i in range(3))
          y[(n, oc) + z] += np.dot(w[(oc, slice(None)) + t], x[(n, slice(gi * I, gi * I + I)) + pos])
  return y
def conv_t(x, w, s, p, d, op, g):
  N, C = x.shape[:2]
  K = w.shape[2:]
  OG = w.shape[1]
  o = [(x.shape[i + 2] - 1) * s[i] + d[i] * (K[i] - 1) + 1 + op[i] for i in range(3)]
  full = np.zeros((N, OG * g) + tuple(o))
  for n in range(N):
    for ic in range(C):
      gi = ic // (C // g)
      for z in np.ndindex(*x.shape[2:]):
        for t in np.ndindex(*K):
          pos = tuple(z[i] * s[i] + t[i] * d[i] for i in range(3))
          full[(n, slice(gi * OG, gi * OG + OG)) + pos] += x[(n, ic) + z] * w[(ic, slice(None)) + t]
  return full[:, :, p[0]:o[0] - p[3], p[1]:o[1] - p[4], p[2]:o[2] - p[5]]
def pool(x, k, s, p, kind, include_pad):
  xp = np.pad(x, [(0, 0), (0, 0)] + [(p[i], p[i + 3]) for i in range(3)], constant_values=np.nan)
  o = [(xp.shape[i + 2] - k[i]) // s[i] + 1 for i in range(3)]
  y = np.zeros(x.shape[:2] + tuple(o))
  for z in np.ndindex(*o):
    win = xp[(slice(None), slice(None)) + tuple(slice(z[i] * s[i], z[i] * s[i] + k[i]) for i in range(3))]
    win = win.reshape(x.shape[0], x.shape[1], -1)
    if kind == 'max':
      y[(slice(None), slice(None)) + z] = np.nanmax(win, axis=2)
    elif include_pad:
      y[(slice(None), slice(None)) + z] = np.nansum(win, axis=2) / win.shape[2]
    else:
      y[(slice(None), slice(None)) + z] = np.nanmean(win, axis=2)
  return y
)";

std::string np_array(const NDArray& a) { return numpy::array(a.shape(), a.to_doubles()); }

template <class Fn>
std::string error_message(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(NnConv3dType, ShapesAndErrors) {
  EXPECT_EQ(type_str(infer_op("nn.conv3d", {f32({2, 4, 5, 6, 7}), f32({8, 2, 3, 3, 3})},
                              {{"groups", int64_t{2}}, {"padding", Ints{1, 1, 1}}, {"strides", Ints{1, 2, 2}}})),
            "Tensor[(2, 8, 5, 3, 4), float32]");
  EXPECT_EQ(shape_of(infer_op(
                "nn.conv3d_transpose", {f32({1, 4, 3, 4, 5}), f32({4, 2, 3, 3, 3})},
                {{"strides", Ints{2}}, {"padding", Ints{1, 0, 0, 1, 0, 0}}, {"output_padding", Ints{1, 0, 0}}})),
            (Shape{1, 2, 6, 9, 11}));
  std::string e = infer_op_error("nn.conv3d", {f32({1, 3, 4, 4, 4}), f32({8, 2, 3, 3, 3})});
  EXPECT_NE(e.find("input channels"), std::string::npos) << e;
  EXPECT_NE(e.find("(1, 3, 4, 4, 4)"), std::string::npos) << e;
  EXPECT_NE(e.find("(8, 2, 3, 3, 3)"), std::string::npos) << e;
  e = infer_op_error("nn.conv3d", {f32({1, 3, 4, 4}), f32({8, 3, 3, 3, 3})});
  EXPECT_NE(e.find("argument 'data' must have 5 dimensions"), std::string::npos) << e;
  e = infer_op_error("nn.conv3d", {f32({1, 3, 2, 4, 4}), f32({8, 3, 3, 3, 3})});
  EXPECT_NE(e.find("depth of argument 'data' (1, 3, 2, 4, 4)"), std::string::npos) << e;
  e = infer_op_error("nn.conv3d", {f32({1, 3, 4, 4, 4}), f32({8, 3, 3, 3, 3})}, {{"padding", Ints{1, 1}}});
  EXPECT_NE(e.find("'padding' must have 1, 3 or 6 values"), std::string::npos) << e;
  e = infer_op_error("nn.conv3d_transpose", {f32({1, 4, 3, 4, 5}), f32({4, 2, 3, 3, 3})},
                     {{"output_padding", Ints{1}}});
  EXPECT_NE(e.find("'output_padding'"), std::string::npos) << e;
}

TEST(NnPool3dType, ShapesAndErrors) {
  EXPECT_EQ(shape_of(infer_op("nn.max_pool3d", {f32({2, 3, 5, 6, 7})},
                              {{"pool_size", Ints{2}}, {"strides", Ints{2}}, {"ceil_mode", true}})),
            (Shape{2, 3, 3, 3, 4}));
  EXPECT_EQ(shape_of(infer_op("nn.avg_pool3d", {f32({2, 3, 5, 6, 7})},
                              {{"pool_size", Ints{3, 3, 3}}, {"padding", Ints{1, 0, 0, 1, 0, 0}}})),
            (Shape{2, 3, 5, 4, 5}));
  std::string e = infer_op_error("nn.max_pool3d", {f32({2, 3, 5, 6})}, {{"pool_size", Ints{2}}});
  EXPECT_NE(e.find("argument 'data' must have 5 dimensions"), std::string::npos) << e;
  e = infer_op_error("nn.avg_pool3d", {f32({2, 3, 5, 6, 2})}, {{"pool_size", Ints{3}}});
  EXPECT_NE(e.find("width of argument 'data' (2, 3, 5, 6, 2)"), std::string::npos) << e;
}

TEST(NnConv3dKernel, MatchesNumpyWithGroupsStridesPaddingDilation) {
  NDArray x = wave_tensor({2, 4, 5, 4, 6}, 0.3), w = wave_tensor({6, 2, 2, 3, 2}, 1.1);
  Ints strides{2, 1, 2}, padding{1, 0, 1, 0, 1, 1}, dilation{1, 2, 1};
  NDArray y = run_op("nn.conv3d", {x, w},
                     {{"groups", int64_t{2}}, {"strides", strides}, {"padding", padding}, {"dilation", dilation}})[0];
  std::vector<double> ref = numpy::eval(
      "conv(" + np_array(x) + ", " + np_array(w) + ", [2, 1, 2], [1, 0, 1, 0, 1, 1], [1, 2, 1], 2)", kNumpyWindows);
  EXPECT_EQ(y.shape(), (Shape{2, 6, 3, 1, 4}));
  expect_close(y, ref, 1e-4, 1e-4);
}

TEST(NnConv3dKernel, TransposeMatchesNumpy) {
  NDArray x = wave_tensor({1, 4, 2, 3, 2}, 0.7), w = wave_tensor({4, 3, 2, 2, 3}, 2.0);
  NDArray y = run_op("nn.conv3d_transpose", {x, w},
                     {{"groups", int64_t{2}},
                      {"strides", Ints{2, 1, 3}},
                      {"padding", Ints{0, 1, 1, 1, 0, 1}},
                      {"dilation", Ints{1, 2, 1}},
                      {"output_padding", Ints{1, 0, 2}}})[0];
  std::vector<double> ref = numpy::eval(
      "conv_t(" + np_array(x) + ", " + np_array(w) + ", [2, 1, 3], [0, 1, 1, 1, 0, 1], [1, 2, 1], [1, 0, 2], 2)",
      kNumpyWindows);
  EXPECT_EQ(y.shape(), (Shape{1, 6, 4, 4, 6}));
  expect_close(y, ref, 1e-4, 1e-4);
}

TEST(NnPool3dKernel, MaxAndAverageMatchNumpy) {
  NDArray x = wave_tensor({1, 2, 4, 5, 3}, 0.2);
  Attrs attrs{{"pool_size", Ints{2, 3, 2}}, {"strides", Ints{2, 1, 1}}, {"padding", Ints{1, 1, 0, 0, 1, 1}}};
  NDArray max = run_op("nn.max_pool3d", {x}, attrs)[0];
  NDArray avg = run_op("nn.avg_pool3d", {x}, attrs)[0];
  attrs.set("count_include_pad", true);
  NDArray avg_pad = run_op("nn.avg_pool3d", {x}, attrs)[0];
  std::string args = np_array(x) + ", [2, 3, 2], [2, 1, 1], [1, 1, 0, 0, 1, 1], ";
  auto ref = numpy::eval_many(
      {"pool(" + args + "'max', False)", "pool(" + args + "'avg', False)", "pool(" + args + "'avg', True)"},
      kNumpyWindows);
  ASSERT_EQ(ref.size(), 3u);
  EXPECT_EQ(max.shape(), (Shape{1, 2, 2, 5, 3}));
  expect_close(max, ref[0]);
  expect_close(avg, ref[1]);
  expect_close(avg_pad, ref[2]);
}

TEST(NnMaxPoolWithArgmax, ValuesAndRowOrColumnMajorIndices) {
  // 1 x 2 x 3 x 3; 2 x 2 windows, stride 1.
  NDArray x = tensor({1, 2, 3, 3}, {1, 5, 2, 7, 0, 3, 4, 8, 6, /**/ 9, 1, 1, 1, 1, 1, 1, 1, 9});
  Type t = infer_op("nn.max_pool2d_with_argmax", {f32({1, 2, 3, 3})}, {{"pool_size", Ints{2}}});
  EXPECT_EQ(type_str(t), "(Tensor[(1, 2, 2, 2), float32], Tensor[(1, 2, 2, 2), int64])");
  auto out = run_op("nn.max_pool2d_with_argmax", {x}, {{"pool_size", Ints{2}}});
  expect_close(out[0], {7, 5, 8, 8, 9, 1, 1, 9});
  // Flat positions in the whole tensor; plane 1 starts at 9. Ties keep the first.
  expect_close(out[1], {3, 1, 7, 7, 9, 10, 12, 17});
  auto col = run_op("nn.max_pool2d_with_argmax", {x}, {{"pool_size", Ints{2}}, {"column_major", true}});
  // Column-major within a plane: (h, w) -> w * 3 + h.
  expect_close(col[1], {1, 3, 5, 5, 9, 12, 10, 17});
  std::string e = infer_op_error("nn.max_pool2d_with_argmax", {f32({1, 3, 3, 2})}, {{"layout", "NHWC"}});
  EXPECT_NE(e.find("'layout'"), std::string::npos) << e;
}

TEST(NnMaxUnpool, ScattersAndKeepsMultiIndexInALargerOutput) {
  NDArray v = tensor({1, 1, 2, 2}, {5, 6, 7, 8});
  NDArray i = tensor({1, 1, 2, 2}, {5, 7, 13, 15}, DType::kInt64);
  NDArray y = run_op("nn.max_unpool", {v, i}, {{"output_shape", Ints{1, 1, 4, 4}}})[0];
  expect_close(y, {0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 7, 0, 8});
  NDArray big =
      run_op("nn.max_unpool", {v, i}, {{"output_shape", Ints{1, 1, 5, 5}}, {"index_shape", Ints{1, 1, 4, 4}}})[0];
  std::vector<double> expected(25, 0.0);
  expected[6] = 5, expected[8] = 6, expected[16] = 7, expected[18] = 8;
  expect_close(big, expected);
  std::string e = error_message([&] {
    run_op("nn.max_unpool", {v, tensor({1, 1, 2, 2}, {0, 1, 2, 16}, DType::kInt64)},
           {{"output_shape", Ints{1, 1, 4, 4}}});
  });
  EXPECT_NE(e.find("index 16"), std::string::npos) << e;
  e = infer_op_error("nn.max_unpool", {f32({1, 1, 2, 2}), f32({1, 1, 2, 2})}, {{"output_shape", Ints{1, 1, 4, 4}}});
  EXPECT_NE(e.find("'indices' must hold integers"), std::string::npos) << e;
  e = infer_op_error("nn.max_unpool", {f32({1, 1, 2, 2}), tensor_type({1, 1, 2, 3}, DType::kInt64)},
                     {{"output_shape", Ints{1, 1, 4, 4}}});
  EXPECT_NE(e.find("(1, 1, 2, 3)"), std::string::npos) << e;
}

}  // namespace
}  // namespace kiln::testing
