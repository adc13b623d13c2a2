#include "op/numpy_ref.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

using Ints = std::vector<int64_t>;

Shape shape_of(const Type& t) { return expect_tensor(t, "result").shape; }

// ---- nn.conv2d type relation ----

TEST(NnConv2dType, StridedPaddedResNetStem) {
  Type t = infer_op("nn.conv2d", {f32({1, 3, 224, 224}), f32({64, 3, 7, 7})},
                    {{"strides", Ints{2, 2}}, {"padding", Ints{3, 3}}});
  EXPECT_EQ(type_str(t), "Tensor[(1, 64, 112, 112), float32]");
}

TEST(NnConv2dType, UnknownBatchAndHeightPropagate) {
  Type t = infer_op("nn.conv2d", {f32({-1, 3, 32, 32}), f32({8, 3, 3, 3})}, {{"padding", Ints{1}}});
  EXPECT_EQ(shape_of(t), (Shape{-1, 8, 32, 32}));
  t = infer_op("nn.conv2d", {f32({1, 3, -1, 32}), f32({8, 3, 3, 3})});
  EXPECT_EQ(shape_of(t), (Shape{1, 8, -1, 30}));
  // Unknown channels cannot be checked, but do not prevent inference.
  t = infer_op("nn.conv2d", {f32({2, -1, 9, 9}), f32({4, 3, 3, 3})}, {{"strides", Ints{2}}});
  EXPECT_EQ(shape_of(t), (Shape{2, 4, 4, 4}));
}

TEST(NnConv2dType, GroupedAndDepthwise) {
  EXPECT_EQ(shape_of(infer_op("nn.conv2d", {f32({1, 8, 10, 10}), f32({16, 2, 3, 3})}, {{"groups", 4}})),
            (Shape{1, 16, 8, 8}));
  EXPECT_EQ(shape_of(infer_op("nn.conv2d", {f32({1, 8, 10, 10}), f32({8, 1, 3, 3})},
                              {{"groups", 8}, {"padding", Ints{1, 1}}})),
            (Shape{1, 8, 10, 10}));
}

TEST(NnConv2dType, FourPaddingsAreTopLeftBottomRight) {
  // top = 1 only: height gains one row, width none.
  Type t = infer_op("nn.conv2d", {f32({1, 1, 5, 5}), f32({1, 1, 3, 3})}, {{"padding", Ints{1, 0, 0, 0}}});
  EXPECT_EQ(shape_of(t), (Shape{1, 1, 4, 3}));
  t = infer_op("nn.conv2d", {f32({1, 1, 5, 5}), f32({1, 1, 3, 3})}, {{"padding", Ints{0, 2, 0, 1}}});
  EXPECT_EQ(shape_of(t), (Shape{1, 1, 3, 6}));
}

TEST(NnConv2dType, DilationWidensTheWindow) {
  Type t = infer_op("nn.conv2d", {f32({1, 1, 7, 8}), f32({1, 1, 3, 3})}, {{"dilation", Ints{2, 3}}});
  EXPECT_EQ(shape_of(t), (Shape{1, 1, 3, 2}));
}

TEST(NnConv2dType, OutDtype) {
  Type t = infer_op("nn.conv2d", {tensor_type({1, 2, 4, 4}, DType::kInt8), tensor_type({3, 2, 1, 1}, DType::kInt8)},
                    {{"out_dtype", "int32"}});
  EXPECT_EQ(type_str(t), "Tensor[(1, 3, 4, 4), int32]");
}

TEST(NnConv2dType, ChannelMismatchNamesBothShapes) {
  std::string e = infer_op_error("nn.conv2d", {f32({1, 3, 8, 8}), f32({4, 2, 3, 3})});
  EXPECT_NE(e.find("'data' (1, 3, 8, 8)"), std::string::npos) << e;
  EXPECT_NE(e.find("'weight' (4, 2, 3, 3)"), std::string::npos) << e;
  EXPECT_NE(e.find("expected 3, found 2"), std::string::npos) << e;
}

TEST(NnConv2dType, WrongRankNamesTheArgument) {
  std::string e = infer_op_error("nn.conv2d", {f32({1, 3, 8}), f32({4, 3, 3, 3})});
  EXPECT_NE(e.find("argument 'data'"), std::string::npos) << e;
  EXPECT_NE(e.find("found (1, 3, 8)"), std::string::npos) << e;
  e = infer_op_error("nn.conv2d", {f32({1, 3, 8, 8}), f32({4, 3, 3})});
  EXPECT_NE(e.find("argument 'weight'"), std::string::npos) << e;
}

TEST(NnConv2dType, KernelLargerThanInput) {
  std::string e = infer_op_error("nn.conv2d", {f32({1, 1, 2, 5}), f32({1, 1, 3, 3})});
  EXPECT_NE(e.find("height of argument 'data' (1, 1, 2, 5)"), std::string::npos) << e;
}

TEST(NnConv2dType, BadAttributes) {
  std::vector<Type> args = {f32({1, 6, 8, 8}), f32({4, 3, 3, 3})};
  EXPECT_NE(infer_op_error("nn.conv2d", args, {{"groups", 4}}).find("not divisible by groups=4"), std::string::npos);
  std::string e = infer_op_error("nn.conv2d", args, {{"groups", 2}, {"strides", Ints{1, 1, 1}}});
  EXPECT_NE(e.find("'strides'"), std::string::npos) << e;
  EXPECT_NE(e.find("[1, 1, 1]"), std::string::npos) << e;
  e = infer_op_error("nn.conv2d", args, {{"groups", 2}, {"padding", Ints{1, 1, 1}}});
  EXPECT_NE(e.find("'padding'"), std::string::npos) << e;
  e = infer_op_error("nn.conv2d", args, {{"groups", 2}, {"strides", Ints{0}}});
  EXPECT_NE(e.find("'strides'"), std::string::npos) << e;
  e = infer_op_error("nn.conv2d", args, {{"groups", 2}, {"data_layout", "NHWC"}});
  EXPECT_NE(e.find("'data_layout'"), std::string::npos) << e;
  e = infer_op_error("nn.conv2d", args, {{"groups", 2}, {"channels", 5}});
  EXPECT_NE(e.find("'channels'"), std::string::npos) << e;
  EXPECT_NE(e.find("expected 4, found 5"), std::string::npos) << e;
  e = infer_op_error("nn.conv2d", args, {{"groups", 2}, {"kernel_size", Ints{5, 5}}});
  EXPECT_NE(e.find("'kernel_size'"), std::string::npos) << e;
  e = infer_op_error("nn.conv2d", {f32({1, 3, 8, 8}), tensor_type({4, 3, 3, 3}, DType::kFloat64)});
  EXPECT_NE(e.find("float64"), std::string::npos) << e;
}

// ---- nn.conv2d_transpose type relation ----

TEST(NnConv2dTransposeType, OutputExtent) {
  // (5 - 1) * 2 - 1 - 1 + (3 - 1) + 1 + 1 = 10
  Type t = infer_op("nn.conv2d_transpose", {f32({1, 4, 5, 5}), f32({4, 2, 3, 3})},
                    {{"strides", Ints{2, 2}}, {"padding", Ints{1, 1}}, {"output_padding", Ints{1, 1}}});
  EXPECT_EQ(shape_of(t), (Shape{1, 2, 10, 10}));
  t = infer_op("nn.conv2d_transpose", {f32({-1, 4, 5, 7}), f32({4, 1, 3, 2})}, {{"groups", 2}});
  EXPECT_EQ(shape_of(t), (Shape{-1, 2, 7, 8}));
}

TEST(NnConv2dTransposeType, Errors) {
  std::string e = infer_op_error("nn.conv2d_transpose", {f32({1, 3, 5, 5}), f32({4, 2, 3, 3})});
  EXPECT_NE(e.find("'data' (1, 3, 5, 5)"), std::string::npos) << e;
  EXPECT_NE(e.find("'weight' (4, 2, 3, 3)"), std::string::npos) << e;
  e = infer_op_error("nn.conv2d_transpose", {f32({1, 4, 5, 5}), f32({4, 2, 3, 3})}, {{"output_padding", Ints{1}}});
  EXPECT_NE(e.find("'output_padding'"), std::string::npos) << e;
}

// ---- reference kernels, hand-worked ----

const std::vector<double> kOneToNine = {1, 2, 3, 4, 5, 6, 7, 8, 9};

TEST(NnConv2dKernel, ValidConvolution) {
  // out[i][j] = 1 x[i][j] + 2 x[i][j+1] + 3 x[i+1][j] + 4 x[i+1][j+1]
  auto out = run_op("nn.conv2d", {tensor({1, 1, 3, 3}, kOneToNine), tensor({1, 1, 2, 2}, {1, 2, 3, 4})});
  expect_close(out[0], {37, 47, 67, 77});
}

// Integers into int32 wrap (Relay's and ConvInteger's rule) rather than saturate: generated code
// may then sum in int32 in any order. 3 * 32767^2 = 3221028867 is 2^32 - 1073938429.
TEST(NnConv2dKernel, IntegersIntoInt32Wrap) {
  const DType i16 = DType::kInt16;
  auto out = run_op(
      "nn.conv2d", {tensor({1, 3, 1, 1}, {32767, 32767, 32767}, i16), tensor({1, 3, 1, 1}, {32767, 32767, 32767}, i16)},
      {{"out_dtype", "int32"}});
  ASSERT_EQ(out[0].dtype(), DType::kInt32);
  EXPECT_EQ(out[0].int_at(0), -1073938429);
  // Another output dtype still saturates.
  out = run_op("nn.conv2d",
               {tensor({1, 3, 1, 1}, {32767, 32767, 32767}, i16), tensor({1, 3, 1, 1}, {32767, 32767, 32767}, i16)},
               {{"out_dtype", "int64"}});
  EXPECT_EQ(out[0].int_at(0), 3221028867);
}

TEST(NnConv2dKernel, StridedAndPadded) {
  // Padded input has a zero border; windows start at -1 and 1 on both axes.
  auto out = run_op("nn.conv2d", {tensor({1, 1, 3, 3}, kOneToNine), tensor({1, 1, 2, 2}, {1, 2, 3, 4})},
                    {{"strides", Ints{2}}, {"padding", Ints{1}}});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 2, 2}));
  expect_close(out[0], {4, 18, 36, 77});
}

TEST(NnConv2dKernel, AsymmetricPaddingAndDilation) {
  // padding top=0 left=1 bottom=0 right=0, dilation 2 on width: taps at columns j-1 and j+1.
  auto out = run_op("nn.conv2d", {tensor({1, 1, 3, 3}, kOneToNine), tensor({1, 1, 1, 2}, {1, 10})},
                    {{"padding", Ints{0, 1, 0, 0}}, {"dilation", Ints{1, 2}}});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 3, 2}));
  expect_close(out[0], {0 + 20, 1 + 30, 0 + 50, 4 + 60, 0 + 80, 7 + 90});
}

TEST(NnConv2dKernel, DepthwiseGroups) {
  auto out = run_op("nn.conv2d", {tensor({1, 2, 1, 2}, {1, 2, 3, 4}), tensor({2, 1, 1, 1}, {2, -1})}, {{"groups", 2}});
  expect_close(out[0], {2, 4, -3, -4});
}

TEST(NnConv2dKernel, MultipleChannelsAndBatch) {
  // Two batches, 2 input channels, 1x1 kernel mixing them: out = 1 * c0 + 10 * c1, and 100 * c0.
  auto out =
      run_op("nn.conv2d", {tensor({2, 2, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), tensor({2, 2, 1, 1}, {1, 10, 100, 0})});
  expect_close(out[0], {31, 42, 100, 200, 75, 86, 500, 600});
}

TEST(NnConv2dKernel, Float64Float16AndInt8) {
  auto out = run_op("nn.conv2d", {tensor({1, 1, 3, 3}, kOneToNine, DType::kFloat64),
                                  tensor({1, 1, 2, 2}, {1, 2, 3, 4}, DType::kFloat64)});
  EXPECT_EQ(out[0].dtype(), DType::kFloat64);
  expect_close(out[0], {37, 47, 67, 77}, 0, 0);
  out = run_op("nn.conv2d", {tensor({1, 1, 3, 3}, kOneToNine, DType::kFloat16),
                             tensor({1, 1, 2, 2}, {1, 2, 3, 4}, DType::kFloat16)});
  EXPECT_EQ(out[0].dtype(), DType::kFloat16);
  expect_close(out[0], {37, 47, 67, 77}, 0, 0);
  // int8 products accumulate into int32 without overflow: 100 * 100 * 4 = 40000.
  out = run_op("nn.conv2d",
               {tensor({1, 1, 2, 2}, {100, 100, 100, -100}, DType::kInt8),
                tensor({1, 1, 2, 2}, {100, 100, 100, -100}, DType::kInt8)},
               {{"out_dtype", "int32"}});
  EXPECT_EQ(out[0].dtype(), DType::kInt32);
  EXPECT_EQ(out[0].int_at(0), 40000);
}

TEST(NnConv2dTransposeKernel, ScatterOfEachInput) {
  // Stride 2 puts the 2x2 kernel, scaled by each input, at non-overlapping places.
  auto out =
      run_op("nn.conv2d_transpose", {tensor({1, 1, 2, 2}, {1, 2, 3, 4}), tensor({1, 1, 2, 2}, {1, 10, 100, 1000})},
             {{"strides", Ints{2}}});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 4, 4}));
  expect_close(out[0], {1, 10, 2, 20, 100, 1000, 200, 2000, 3, 30, 4, 40, 300, 3000, 400, 4000});
  // Stride 1 overlaps: the full convolution [1 2; 3 4] * [1 1; 1 1], then padding 1 crops the border.
  out = run_op("nn.conv2d_transpose", {tensor({1, 1, 2, 2}, {1, 2, 3, 4}), tensor({1, 1, 2, 2}, {1, 1, 1, 1})});
  expect_close(out[0], {1, 3, 2, 4, 10, 6, 3, 7, 4});
  out = run_op("nn.conv2d_transpose", {tensor({1, 1, 2, 2}, {1, 2, 3, 4}), tensor({1, 1, 2, 2}, {1, 1, 1, 1})},
               {{"padding", Ints{1, 1, 0, 0}}});
  expect_close(out[0], {10, 6, 7, 4});
}

// ---- comparison with numpy ----

std::string numpy_conv2d(const NDArray& x, const NDArray& w, Ints stride, Ints pad, Ints dilation, int groups) {
  std::ostringstream s;
  s << "x = " << np_array(x) << "\nw = " << np_array(w) << "\n"
    << "sh, sw = " << stride[0] << ", " << stride[1] << "\ndh, dw = " << dilation[0] << ", " << dilation[1] << "\n"
    << "pt, pl, pb, pr = " << pad[0] << ", " << pad[1] << ", " << pad[2] << ", " << pad[3] << "\ng = " << groups << "\n"
    << R"(N, C, H, W = x.shape
O, I, KH, KW = w.shape
xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
OH = (H + pt + pb - dh * (KH - 1) - 1) // sh + 1
OW = (W + pl + pr - dw * (KW - 1) - 1) // sw + 1
out = np.zeros((N, O, OH, OW))
for gi in range(g):
    xs = xp[:, gi * I:(gi + 1) * I]
    ws = w[gi * (O // g):(gi + 1) * (O // g)]
    for kh in range(KH):
        for kw in range(KW):
            patch = xs[:, :, kh * dh:kh * dh + sh * (OH - 1) + 1:sh, kw * dw:kw * dw + sw * (OW - 1) + 1:sw]
            out[:, gi * (O // g):(gi + 1) * (O // g)] += np.einsum('nchw,oc->nohw', patch, ws[:, :, kh, kw])
)" << print_values("out");
  return s.str();
}

TEST(NnConv2dKernel, MatchesNumpyGroupedStridedDilated) {
  NDArray x = sample_tensor({2, 4, 9, 11}, 1);
  NDArray w = sample_tensor({6, 2, 3, 3}, 2);
  auto out = run_op("nn.conv2d", {x, w},
                    {{"strides", Ints{2, 1}}, {"padding", Ints{1, 2, 0, 1}}, {"dilation", Ints{1, 2}}, {"groups", 2}});
  EXPECT_EQ(out[0].shape(), (Shape{2, 6, 4, 10}));
  expect_close(out[0], run_python(numpy_conv2d(x, w, {2, 1}, {1, 2, 0, 1}, {1, 2}, 2)), 1e-5, 1e-5);
}

TEST(NnConv2dKernel, MatchesNumpyStemLike) {
  NDArray x = sample_tensor({1, 3, 16, 15}, 3);
  NDArray w = sample_tensor({5, 3, 7, 7}, 4);
  auto out = run_op("nn.conv2d", {x, w}, {{"strides", Ints{2}}, {"padding", Ints{3}}});
  expect_close(out[0], run_python(numpy_conv2d(x, w, {2, 2}, {3, 3, 3, 3}, {1, 1}, 1)), 1e-5, 1e-5);
}

TEST(NnConv2dTransposeKernel, MatchesNumpy) {
  NDArray x = sample_tensor({2, 4, 5, 6}, 5);
  NDArray w = sample_tensor({4, 3, 3, 4}, 6);  // IOHW, groups 2: 6 output channels
  auto out = run_op("nn.conv2d_transpose", {x, w},
                    {{"strides", Ints{2, 3}},
                     {"padding", Ints{1, 0, 2, 1}},
                     {"dilation", Ints{1, 2}},
                     {"output_padding", Ints{1, 0}},
                     {"groups", 2}});
  std::ostringstream s;
  s << "x = " << np_array(x) << "\nw = " << np_array(w) << R"(
sh, sw, dh, dw, g = 2, 3, 1, 2, 2
pt, pl, pb, pr, oph, opw = 1, 0, 2, 1, 1, 0
N, C, H, W = x.shape
_, OG, KH, KW = w.shape
full = np.zeros((N, OG * g, (H - 1) * sh + dh * (KH - 1) + 1 + oph, (W - 1) * sw + dw * (KW - 1) + 1 + opw))
I = C // g
for gi in range(g):
    for kh in range(KH):
        for kw in range(KW):
            contrib = np.einsum('nihw,io->nohw', x[:, gi * I:(gi + 1) * I], w[gi * I:(gi + 1) * I, :, kh, kw])
            full[:, gi * OG:(gi + 1) * OG, kh * dh:kh * dh + (H - 1) * sh + 1:sh, kw * dw:kw * dw + (W - 1) * sw + 1:sw] += contrib
out = full[:, :, pt:full.shape[2] - pb, pl:full.shape[3] - pr]
print(' '.join(str(d) for d in out.shape))
)" << print_values("out");
  std::vector<double> expected = run_python(s.str());
  ASSERT_GE(expected.size(), 4u);
  EXPECT_EQ(out[0].shape(), (Shape(expected.begin(), expected.begin() + 4)));
  expect_close(out[0], std::vector<double>(expected.begin() + 4, expected.end()), 1e-5, 1e-5);
}

}  // namespace
}  // namespace kiln::testing
