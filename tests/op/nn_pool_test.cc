#include <cmath>
#include <limits>

#include "kiln/attrs/layout.h"
#include "op/numpy_ref.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

using Ints = std::vector<int64_t>;

Shape shape_of(const Type& t) { return expect_tensor(t, "result").shape; }

std::vector<double> iota(int n, double start = 0) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(start + i);
  return v;
}

// ---- type relations ----

TEST(NnPoolType, Shapes) {
  EXPECT_EQ(type_str(infer_op("nn.max_pool2d", {f32({1, 64, 112, 112})},
                              {{"pool_size", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"padding", Ints{1, 1}}})),
            "Tensor[(1, 64, 56, 56), float32]");
  EXPECT_EQ(shape_of(infer_op("nn.avg_pool2d", {f32({-1, 3, 7, -1})}, {{"pool_size", Ints{2}}})),
            (Shape{-1, 3, 6, -1}));
  EXPECT_EQ(shape_of(infer_op("nn.max_pool2d", {f32({2, 9, 10, 3})}, {{"pool_size", Ints{3}}, {"layout", "NHWC"}})),
            (Shape{2, 7, 8, 3}));
  EXPECT_EQ(shape_of(infer_op("nn.global_avg_pool2d", {f32({-1, 512, 7, 7})})), (Shape{-1, 512, 1, 1}));
  EXPECT_EQ(shape_of(infer_op("nn.global_max_pool2d", {f32({2, 7, 7, 5})}, {{"layout", "NHWC"}})), (Shape{2, 1, 1, 5}));
  EXPECT_EQ(type_str(infer_op("nn.max_pool2d", {tensor_type({1, 1, 4, 4}, DType::kInt8)}, {{"pool_size", Ints{2}}})),
            "Tensor[(1, 1, 3, 3), int8]");
}

TEST(NnPoolType, CeilModeDropsWindowsStartingInTrailingPadding) {
  Attrs attrs = {{"pool_size", Ints{2}}, {"strides", Ints{2}}, {"padding", Ints{1}}};
  EXPECT_EQ(shape_of(infer_op("nn.max_pool2d", {f32({1, 1, 5, 5})}, attrs)), (Shape{1, 1, 3, 3}));
  attrs.set("ceil_mode", true);
  // ceil((5 + 2 - 2) / 2) + 1 = 4, but the 4th window would start at 6 >= 5 + 1 (in the padding).
  EXPECT_EQ(shape_of(infer_op("nn.max_pool2d", {f32({1, 1, 5, 5})}, attrs)), (Shape{1, 1, 3, 3}));
  attrs.set("padding", Ints{0});
  EXPECT_EQ(shape_of(infer_op("nn.max_pool2d", {f32({1, 1, 5, 6})}, attrs)), (Shape{1, 1, 3, 3}));
}

TEST(NnPoolType, Errors) {
  std::string e = infer_op_error("nn.max_pool2d", {f32({1, 3, 8})}, {{"pool_size", Ints{2}}});
  EXPECT_NE(e.find("argument 'data'"), std::string::npos) << e;
  EXPECT_NE(e.find("(1, 3, 8)"), std::string::npos) << e;
  e = infer_op_error("nn.avg_pool2d", {f32({1, 3, 8, 2})}, {{"pool_size", Ints{3}}});
  EXPECT_NE(e.find("width of argument 'data' (1, 3, 8, 2)"), std::string::npos) << e;
  e = infer_op_error("nn.max_pool2d", {f32({1, 3, 8, 8})}, {{"pool_size", Ints{2, 2, 2}}});
  EXPECT_NE(e.find("'pool_size'"), std::string::npos) << e;
  e = infer_op_error("nn.max_pool2d", {f32({1, 3, 8, 8})}, {{"layout", "NCWH"}});
  EXPECT_NE(e.find("'layout'"), std::string::npos) << e;
  e = infer_op_error("nn.max_pool2d", {f32({1, 3, 8, 8})}, {{"dilation", Ints{0}}});
  EXPECT_NE(e.find("'dilation'"), std::string::npos) << e;
  e = infer_op_error("nn.global_avg_pool2d", {tensor_type({1, 3, 8, 8}, DType::kBool)});
  EXPECT_NE(e.find("bool"), std::string::npos) << e;
}

TEST(NnPoolType, BlockedLayout) {
  Attrs attrs = {{"pool_size", Ints{3}}, {"strides", Ints{2}}, {"padding", Ints{1}}, {"layout", "NCHW8c"}};
  EXPECT_EQ(type_str(infer_op("nn.max_pool2d", {f32({1, 8, 112, 112, 8})}, attrs)),
            "Tensor[(1, 8, 56, 56, 8), float32]");
  EXPECT_EQ(shape_of(infer_op("nn.global_avg_pool2d", {f32({1, 32, 7, 7, 16})}, {{"layout", "NCHW16c"}})),
            (Shape{1, 32, 1, 1, 16}));
  std::string e = infer_op_error("nn.avg_pool2d", {f32({1, 8, 8, 8, 4})}, attrs);
  EXPECT_NE(e.find("must be the block of NCHW8c"), std::string::npos) << e;
  e = infer_op_error("nn.global_max_pool2d", {f32({1, 8, 8, 8})}, {{"layout", "NCHW8c"}});
  EXPECT_NE(e.find("5 dimensions"), std::string::npos) << e;
  attrs.set("out_layout", "NCHW");
  e = infer_op_error("nn.max_pool2d", {f32({1, 8, 8, 8, 8})}, attrs);
  EXPECT_NE(e.find("'out_layout'"), std::string::npos) << e;
  e = infer_op_error("nn.max_pool2d", {f32({1, 8, 8, 8, 8})}, {{"layout", "NHWC8c"}});
  EXPECT_NE(e.find("'layout'"), std::string::npos) << e;
}

// ---- kernels, hand-worked ----

TEST(NnPoolKernel, TwoByTwoStrideTwo) {
  NDArray x = tensor({1, 1, 4, 4}, iota(16, 1));
  Attrs attrs = {{"pool_size", Ints{2}}, {"strides", Ints{2}}};
  expect_close(run_op("nn.max_pool2d", {x}, attrs)[0], {6, 8, 14, 16});
  expect_close(run_op("nn.avg_pool2d", {x}, attrs)[0], {3.5, 5.5, 11.5, 13.5});
}

TEST(NnPoolKernel, PaddingNeverWinsMaxAndCountIncludePad) {
  NDArray negative = tensor({1, 1, 3, 3}, {-1, -2, -3, -4, -5, -6, -7, -8, -9});
  Attrs attrs = {{"pool_size", Ints{3}}, {"padding", Ints{1}}};
  expect_close(run_op("nn.max_pool2d", {negative}, attrs)[0], {-1, -1, -2, -1, -1, -2, -4, -4, -5});
  NDArray x = tensor({1, 1, 3, 3}, iota(9, 1));
  // Corner: mean of 1, 2, 4, 5 over 4 inputs, or over all 9 window positions.
  std::vector<double> without_pad = run_op("nn.avg_pool2d", {x}, attrs)[0].to_doubles();
  EXPECT_NEAR(without_pad[0], 3.0, 1e-6);
  EXPECT_NEAR(without_pad[1], 21.0 / 6, 1e-6);
  EXPECT_NEAR(without_pad[4], 5.0, 1e-6);
  attrs.set("count_include_pad", true);
  std::vector<double> with_pad = run_op("nn.avg_pool2d", {x}, attrs)[0].to_doubles();
  EXPECT_NEAR(with_pad[0], 12.0 / 9, 1e-6);
  EXPECT_NEAR(with_pad[1], 21.0 / 9, 1e-6);
  EXPECT_NEAR(with_pad[4], 5.0, 1e-6);
}

TEST(NnPoolKernel, CeilModePartialWindows) {
  NDArray x = tensor({1, 1, 5, 5}, iota(25));
  Attrs attrs = {{"pool_size", Ints{2}}, {"strides", Ints{2}}, {"ceil_mode", true}};
  expect_close(run_op("nn.max_pool2d", {x}, attrs)[0], {6, 8, 9, 16, 18, 19, 21, 23, 24});
  // The last window holds one column (or row); as in PyTorch its divisor is the taps inside.
  attrs.set("count_include_pad", true);
  expect_close(run_op("nn.avg_pool2d", {x}, attrs)[0], {3, 5, 6.5, 13, 15, 16.5, 20.5, 22.5, 24});
}

TEST(NnPoolKernel, Dilation) {
  NDArray x = tensor({1, 1, 1, 5}, {1, 5, 2, 4, 3});
  Attrs attrs = {{"pool_size", Ints{1, 2}}, {"dilation", Ints{1, 2}}};
  expect_close(run_op("nn.max_pool2d", {x}, attrs)[0], {2, 5, 3});
  expect_close(run_op("nn.avg_pool2d", {x}, attrs)[0], {1.5, 4.5, 2.5});
}

TEST(NnPoolKernel, IntegerAndHalfMaxPool) {
  auto out =
      run_op("nn.max_pool2d", {tensor({1, 1, 2, 2}, {-128, 5, 127, -3}, DType::kInt8)}, {{"pool_size", Ints{2}}});
  EXPECT_EQ(out[0].dtype(), DType::kInt8);
  EXPECT_EQ(out[0].int_at(0), 127);
  // Padding of an int8 max pool is the lowest int8, never 0.
  out = run_op("nn.max_pool2d", {tensor({1, 1, 1, 1}, {-100}, DType::kInt8)},
               {{"pool_size", Ints{2}}, {"padding", Ints{0, 0, 1, 1}}});
  EXPECT_EQ(out[0].int_at(0), -100);
  out = run_op("nn.max_pool2d", {tensor({1, 1, 2, 2}, {0.5, -2, 1.5, 1}, DType::kFloat16)}, {{"pool_size", Ints{2}}});
  EXPECT_EQ(out[0].dtype(), DType::kFloat16);
  expect_close(out[0], {1.5}, 0, 0);
}

TEST(NnPoolKernel, NanPropagatesThroughMax) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  auto out = run_op("nn.max_pool2d", {tensor({1, 1, 1, 3}, {1, nan, 2})}, {{"pool_size", Ints{1, 3}}});
  EXPECT_TRUE(std::isnan(out[0].at(0)));
}

TEST(NnPoolKernel, GlobalPoolsBothLayouts) {
  NDArray x = tensor({1, 2, 2, 2}, {1, 2, 3, 4, -5, -6, -7, -8});
  expect_close(run_op("nn.global_avg_pool2d", {x})[0], {2.5, -6.5});
  expect_close(run_op("nn.global_max_pool2d", {x})[0], {4, -5});
  // The same numbers read as NHWC: pixels (1, 2), (3, 4), (-5, -6), (-7, -8).
  expect_close(run_op("nn.global_avg_pool2d", {x}, {{"layout", "NHWC"}})[0], {-2, -2});
  expect_close(run_op("nn.global_max_pool2d", {x}, {{"layout", "NHWC"}})[0], {3, 4});
  auto out = run_op("nn.global_avg_pool2d", {tensor({1, 1, 2, 2}, {1, 2, 3, 5}, DType::kFloat64)});
  expect_close(out[0], {2.75}, 0, 0);
}

TEST(NnPoolKernel, NhwcWindowPooling) {
  // 1 x 2 x 2 x 2 NHWC: channel 0 holds 1, 3, 5, 7 and channel 1 holds 2, 4, 6, 8.
  NDArray x = tensor({1, 2, 2, 2}, iota(8, 1));
  auto out = run_op("nn.max_pool2d", {x}, {{"pool_size", Ints{2, 1}}, {"layout", "NHWC"}});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 2, 2}));
  expect_close(out[0], {5, 6, 7, 8});
}

NDArray relaid(const NDArray& x, const std::string& src, const std::string& dst) {
  return run_op("layout_transform", {x}, {{"src_layout", src}, {"dst_layout", dst}}).at(0);
}

// Each pool of NCHW{x}c data gives the NCHW pool's values, laid out in blocks.
TEST(NnPoolKernel, BlockedMatchesNchw) {
  NDArray x = sample_tensor({2, 16, 9, 10}, 23, -3, 3);
  Attrs window = {{"pool_size", Ints{3, 2}},
                  {"strides", Ints{2, 1}},
                  {"dilation", Ints{1, 2}},
                  {"padding", Ints{1, 0, 1, 1}},
                  {"ceil_mode", true}};
  Attrs with_pad = window;
  with_pad.set("count_include_pad", true);
  const std::vector<std::pair<std::string, Attrs>> runs = {{"nn.max_pool2d", window},
                                                           {"nn.avg_pool2d", window},
                                                           {"nn.avg_pool2d", with_pad},
                                                           {"nn.global_avg_pool2d", {}},
                                                           {"nn.global_max_pool2d", {}}};
  for (const std::string layout : {"NCHW8c", "NCHW16c"}) {
    const NDArray blocked_x = relaid(x, "NCHW", layout);
    for (auto [op, attrs] : runs) {
      SCOPED_TRACE(op + " " + attrs.to_string() + " " + layout);
      const NDArray want = run_op(op, {x}, attrs).at(0);
      attrs.set("layout", layout);
      const NDArray got = run_op(op, {blocked_x}, attrs).at(0);
      EXPECT_EQ(got.shape(), Layout::parse("NCHW").convert_shape(want.shape(), Layout::parse(layout)));
      const NDArray unblocked = relaid(got, layout, "NCHW");
      ASSERT_EQ(unblocked.shape(), want.shape());
      for (int64_t i = 0; i < want.numel(); ++i) ASSERT_EQ(unblocked.at(i), want.at(i)) << i;
    }
  }
}

// ---- comparison with numpy ----

// numpy pooling over taps stacked on a new axis; NaN marks positions outside the input.
const char* kNumpyPool = R"(
def pool(x, kind, k, s, d, pads, ceil, include_pad):
    (kh, kw), (sh, sw), (dh, dw), (pt, pl, pb, pr) = k, s, d, pads
    def out_len(n, k, s, d, pb, pa):
        span = n + pb + pa - d * (k - 1) - 1
        o = (-(-span // s) if ceil else span // s) + 1
        if ceil and (o - 1) * s >= n + pb:
            o -= 1
        return o
    N, C, H, W = x.shape
    OH, OW = out_len(H, kh, sh, dh, pt, pb), out_len(W, kw, sw, dw, pl, pr)
    eh = max(0, (OH - 1) * sh + dh * (kh - 1) + 1 - (H + pt + pb))
    ew = max(0, (OW - 1) * sw + dw * (kw - 1) + 1 - (W + pl + pr))
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb + eh), (pl, pr + ew)), constant_values=np.nan)
    padded = np.pad(np.ones((H + pt + pb, W + pl + pr)), ((0, eh), (0, ew)))
    def taps(a):
        return np.stack([a[..., i * dh:i * dh + (OH - 1) * sh + 1:sh, j * dw:j * dw + (OW - 1) * sw + 1:sw]
                         for i in range(kh) for j in range(kw)])
    t = taps(xp)
    if kind == 'max':
        return np.nanmax(t, axis=0)
    count = taps(padded).sum(axis=0) if include_pad else (~np.isnan(t)).sum(axis=0)
    return np.nansum(t, axis=0) / count
)";

std::string py_tuple(const Ints& v) {
  std::string s = "(";
  for (int64_t x : v) s += std::to_string(x) + ", ";
  return s + ")";
}

// Python call of pool() on `x` with these parameters, printing the result.
std::string numpy_pool_call(const std::string& kind, const Ints& k, const Ints& s, const Ints& d, const Ints& pad,
                            bool ceil, bool include_pad) {
  return print_values("pool(x, '" + kind + "', " + py_tuple(k) + ", " + py_tuple(s) + ", " + py_tuple(d) + ", " +
                      py_tuple(pad) + ", " + (ceil ? "True" : "False") + ", " + (include_pad ? "True" : "False") +
                      ")") +
         "\n";
}

TEST(NnPoolKernel, MatchesNumpy) {
  NDArray x = sample_tensor({2, 3, 11, 10}, 21, -3, 3);
  Ints k = {3, 2}, s = {2, 1}, d = {1, 2}, pad = {1, 0, 1, 1};
  std::string script = std::string(kNumpyPool) + "x = " + np_array(x) + "\n";
  std::vector<std::pair<std::string, Attrs>> runs;
  for (bool ceil : {false, true}) {
    Attrs attrs = {{"pool_size", k}, {"strides", s}, {"dilation", d}, {"padding", pad}, {"ceil_mode", ceil}};
    runs.emplace_back("nn.max_pool2d", attrs);
    script += numpy_pool_call("max", k, s, d, pad, ceil, false);
    for (bool include : {false, true}) {
      attrs.set("count_include_pad", include);
      runs.emplace_back("nn.avg_pool2d", attrs);
      script += numpy_pool_call("avg", k, s, d, pad, ceil, include);
    }
  }
  std::vector<std::vector<double>> expected = run_python_lines(script);
  ASSERT_EQ(expected.size(), runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    SCOPED_TRACE(runs[i].first + " " + runs[i].second.to_string());
    expect_close(run_op(runs[i].first, {x}, runs[i].second)[0], expected[i]);
  }
}

TEST(NnPoolKernel, CeilModeMatchesNumpyWithStrideThree) {
  NDArray x = sample_tensor({1, 2, 8, 7}, 22);
  // Height 8: windows start at 0, 3, 6 (the last one runs past the input); width 7 with one
  // column of left padding: windows start at -1, 2, 5.
  Ints k = {3, 3}, s = {3, 3}, d = {1, 1}, pad = {0, 1, 0, 0};
  Attrs attrs = {{"pool_size", k}, {"strides", s}, {"padding", pad}, {"ceil_mode", true}, {"count_include_pad", true}};
  auto out = run_op("nn.avg_pool2d", {x}, attrs);
  EXPECT_EQ(out[0].shape(), (Shape{1, 2, 3, 3}));
  expect_close(out[0], run_python(std::string(kNumpyPool) + "x = " + np_array(x) + "\n" +
                                  numpy_pool_call("avg", k, s, d, pad, true, true)));
}

}  // namespace
}  // namespace kiln::testing
