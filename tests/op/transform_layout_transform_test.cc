// layout_transform and the Layout parser (kiln/attrs/layout.h): parsing, shapes, the reference
// kernel against hand-worked blocks, round trips, and the compute against the kernel. Blocked
// nn.conv2d (NCHW{x}c data, OIHW{x}i{y}o weights): its reference kernel against the NCHW
// convolution of the same tensors, and its compute against the reference kernel.
#include <gtest/gtest.h>

#include <numeric>

#include "kiln/attrs/layout.h"
#include "op/compute_test_util.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

Attrs transform_attrs(const std::string& src, const std::string& dst) {
  return {{"src_layout", AttrValue(src)}, {"dst_layout", AttrValue(dst)}};
}

NDArray iota(Shape shape) {
  std::vector<double> v(static_cast<size_t>(num_elements(shape)));
  std::iota(v.begin(), v.end(), 0.0);
  return tensor(std::move(shape), v);
}

NDArray transformed(const NDArray& x, const std::string& src, const std::string& dst) {
  return run_op("layout_transform", {x}, transform_attrs(src, dst)).at(0);
}

TEST(Layout, ParsesPrimalAndSubAxes) {
  const Layout l = Layout::parse("OIHW8i16o");
  ASSERT_EQ(l.ndim(), 6u);
  EXPECT_EQ(l.axes()[4].name, 'i');
  EXPECT_EQ(l.axes()[4].factor, 8);
  EXPECT_TRUE(l.axes()[0].primal());
  EXPECT_EQ(l.block_of('O'), 16);
  EXPECT_EQ(l.block_of('H'), 1);
  EXPECT_EQ(*l.position('W'), 3u);
  EXPECT_TRUE(l.convertible_to(Layout::parse("OIHW")));
  EXPECT_FALSE(l.convertible_to(Layout::parse("NCHW")));
  EXPECT_EQ(Layout::nchw(16), "NCHW16c");
  EXPECT_EQ(Layout::nchw(0), "NCHW");
}

TEST(Layout, RejectsMalformedLayouts) {
  for (const char* bad : {"", "NCHW8", "NCHW8C", "NCHW0c", "NCHW8d", "NCCHW", "NCHW4c4c", "NC-HW"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(Layout::parse(bad), Error);
  }
}

TEST(Layout, ConvertsShapes) {
  const Layout nchw = Layout::parse("NCHW"), blocked = Layout::parse("NCHW8c");
  EXPECT_EQ(nchw.convert_shape({1, 32, 5, 7}, blocked), (Shape{1, 4, 5, 7, 8}));
  EXPECT_EQ(blocked.convert_shape({1, 4, 5, 7, 8}, nchw), (Shape{1, 32, 5, 7}));
  EXPECT_EQ(blocked.convert_shape({-1, 4, 5, 7, 8}, Layout::parse("NCHW16c")), (Shape{-1, 2, 5, 7, 16}));
  EXPECT_EQ(Layout::parse("OIHW").convert_shape({32, 16, 3, 3}, Layout::parse("OIHW8i16o")),
            (Shape{2, 2, 3, 3, 8, 16}));
  EXPECT_THROW(nchw.convert_shape({1, 12, 5, 7}, blocked), Error);
}

TEST(Layout, ChoosesConvBlocks) {
  ConvLayoutChoice c = choose_conv2d_layout(16, 64, 128, 1);
  EXPECT_EQ(c.data_layout(), "NCHW16c");
  EXPECT_EQ(c.kernel_layout(), "OIHW16i16o");
  EXPECT_EQ(c.out_layout(), "NCHW16c");
  // Whole vectors only: 24 and 40 channels go blocked with 8 lanes, not with 16.
  EXPECT_FALSE(choose_conv2d_layout(16, 24, 40, 1).blocked());
  c = choose_conv2d_layout(8, 24, 40, 1);
  EXPECT_EQ(c.kernel_layout(), "OIHW8i8o");
  c = choose_conv2d_layout(8, 64, 128, 1);
  EXPECT_EQ(c.kernel_layout(), "OIHW8i8o");
  EXPECT_FALSE(choose_conv2d_layout(16, 3, 64, 1).blocked());   // the stem: 3 channels
  EXPECT_FALSE(choose_conv2d_layout(16, 32, 32, 2).blocked());  // grouped convs stay NCHW
  c = choose_conv2d_layout(16, 32, 32, 32);                     // depthwise: one input channel per group
  EXPECT_TRUE(c.depthwise);
  EXPECT_EQ(c.kernel_layout(), "OIHW1i16o");
  EXPECT_EQ(c.out_layout(), "NCHW16c");
  EXPECT_FALSE(conv2d_blocks("NCHW", "OIHW", "").has_value());
  std::optional<ConvLayoutChoice> b = conv2d_blocks("NCHW8c", "OIHW8i16o", "NCHW16c");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->in_block, 8);
  EXPECT_EQ(b->out_block, 16);
  b = conv2d_blocks("NCHW8c", "OIHW1i8o", "");
  ASSERT_TRUE(b.has_value());
  EXPECT_TRUE(b->depthwise);
  EXPECT_THROW(conv2d_blocks("NCHW8c", "OIHW1i16o", "NCHW16c"), Error);  // depthwise keeps the block
  EXPECT_THROW(conv2d_blocks("NCHW8c", "OIHW4i16o", "NCHW16c"), Error);
  EXPECT_THROW(conv2d_blocks("NCHW8c", "OIHW8i16o", "NCHW8c"), Error);
  EXPECT_THROW(conv2d_blocks("NHWC", "OIHW", ""), Error);
}

TEST(LayoutTransform, RelationBlocksAndUnblocks) {
  EXPECT_EQ(type_str(infer_op("layout_transform", {f32({2, 16, 3, 3})}, transform_attrs("NCHW", "NCHW8c"))),
            "Tensor[(2, 2, 3, 3, 8), float32]");
  EXPECT_EQ(type_str(infer_op("layout_transform", {f32({2, 2, 3, 3, 8})}, transform_attrs("NCHW8c", "NCHW"))),
            "Tensor[(2, 16, 3, 3), float32]");
  EXPECT_EQ(type_str(infer_op("layout_transform", {f32({16, 1, 1})}, transform_attrs("CHW", "CHW8c"))),
            "Tensor[(2, 1, 1, 8), float32]");
  EXPECT_NE(infer_op_error("layout_transform", {f32({2, 12, 3, 3})}, transform_attrs("NCHW", "NCHW8c"))
                .find("does not divide into blocks of 8"),
            std::string::npos);
  EXPECT_NE(infer_op_error("layout_transform", {f32({2, 2, 3, 3, 4})}, transform_attrs("NCHW8c", "NCHW"))
                .find("must be the block"),
            std::string::npos);
  EXPECT_NE(infer_op_error("layout_transform", {f32({2, 16, 3})}, transform_attrs("NCHW", "NCHW8c")).find("rank"),
            std::string::npos);
  EXPECT_NE(infer_op_error("layout_transform", {f32({2, 16, 3, 3})}, transform_attrs("NCHW", "OIHW"))
                .find("same primal axes"),
            std::string::npos);
}

TEST(LayoutTransform, KernelBlocksTheChannels) {
  // (1, 4, 1, 2) NCHW -> NCHW2c: element (0, cb, 0, w, ci) is x[0, cb * 2 + ci, 0, w].
  NDArray y = transformed(iota({1, 4, 1, 2}), "NCHW", "NCHW2c");
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1, 2, 2}));
  expect_close(y, {0, 2, 1, 3, 4, 6, 5, 7});
  // OIHW (4, 2, 1, 1) -> OIHW2i2o: (ob, ib, 0, 0, ii, oi) is w[ob * 2 + oi, ib * 2 + ii].
  NDArray w = transformed(iota({4, 2, 1, 1}), "OIHW", "OIHW2i2o");
  EXPECT_EQ(w.shape(), (Shape{2, 1, 1, 1, 2, 2}));
  expect_close(w, {0, 2, 1, 3, 4, 6, 5, 7});
  // Several blocks of both channels: the lanes (output channels) move with the outer block.
  NDArray x = iota({32, 16, 3, 3});
  NDArray big = transformed(x, "OIHW", "OIHW8i16o");
  ASSERT_EQ(big.shape(), (Shape{2, 2, 3, 3, 8, 16}));
  const auto at = [](const NDArray& a, std::initializer_list<int64_t> index) {
    int64_t flat = 0;
    size_t d = 0;
    for (int64_t i : index) flat = flat * a.shape()[d++] + i;
    return a.at(flat);
  };
  EXPECT_EQ(at(big, {1, 1, 2, 1, 3, 5}), at(x, {16 + 5, 8 + 3, 2, 1}));
  EXPECT_EQ(at(big, {0, 1, 0, 2, 7, 15}), at(x, {15, 15, 0, 2}));
  EXPECT_EQ(at(big, {1, 0, 1, 0, 0, 0}), at(x, {16, 0, 1, 0}));
}

TEST(LayoutTransform, RoundTripsAndReblocks) {
  NDArray x = iota({2, 32, 3, 5});
  NDArray back = transformed(transformed(x, "NCHW", "NCHW8c"), "NCHW8c", "NCHW");
  EXPECT_EQ(back.shape(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(back.at(i), x.at(i)) << i;
  // 8c -> 16c directly equals going through NCHW.
  NDArray direct = transformed(transformed(x, "NCHW", "NCHW8c"), "NCHW8c", "NCHW16c");
  NDArray via = transformed(x, "NCHW", "NCHW16c");
  for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(direct.at(i), via.at(i)) << i;
  // Primal axes reordered, with and without blocks (the last axis read with a stride).
  NDArray nhwc = transformed(x, "NCHW", "NHWC");
  EXPECT_EQ(nhwc.shape(), (Shape{2, 3, 5, 32}));
  EXPECT_EQ(nhwc.at(((1 * 3 + 2) * 5 + 4) * 32 + 17), x.at(((1 * 32 + 17) * 3 + 2) * 5 + 4));
  NDArray from_blocks = transformed(transformed(x, "NCHW", "NCHW8c"), "NCHW8c", "NHWC");
  for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(from_blocks.at(i), nhwc.at(i)) << i;
  NDArray to_blocks = transformed(nhwc, "NHWC", "NCHW16c");
  for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(to_blocks.at(i), via.at(i)) << i;
  // Other dtypes move bytes alike.
  NDArray ints = NDArray::from_doubles({1, 8, 2, 2}, DType::kInt64, std::vector<double>(32, 7.0));
  EXPECT_EQ(transformed(ints, "NCHW", "NCHW4c").dtype(), DType::kInt64);
}

TEST(LayoutTransform, ComputeMatchesKernel) {
  auto fn = [](const std::string& shape, const std::string& src, const std::string& dst, const char* dtype) {
    return "fn (%x: Tensor[(" + shape + "), " + dtype + "], Primitive=1) { layout_transform(%x, src_layout=\"" + src +
           "\", dst_layout=\"" + dst + "\") }";
  };
  expect_compiled_matches_interpreter(fn("2, 16, 5, 7", "NCHW", "NCHW8c", "float32"));
  expect_compiled_matches_interpreter(fn("2, 2, 5, 7, 8", "NCHW8c", "NCHW", "float32"));
  expect_compiled_matches_interpreter(fn("1, 4, 3, 3, 8", "NCHW8c", "NCHW16c", "float32"));
  expect_compiled_matches_interpreter(fn("32, 16, 3, 3", "OIHW", "OIHW8i16o", "float32"));
  expect_compiled_matches_interpreter(fn("1, 8, 2, 2", "NCHW", "NCHW4c", "int32"), inputs_in(-100, 100));
  // Large enough to run in parallel tasks of several rows; row counts that the tasks do not divide.
  expect_compiled_matches_interpreter(fn("1, 48, 31, 29", "NCHW", "NCHW16c", "float32"));
  expect_compiled_matches_interpreter(fn("1, 3, 31, 29, 16", "NCHW16c", "NCHW", "float32"));
  expect_compiled_matches_interpreter(fn("1, 6, 23, 19, 8", "NCHW8c", "NCHW16c", "float32"));
}

// A blocked convolution and the NCHW one give the same values on the same tensors.
void expect_blocked_conv_matches_nchw(Shape data_shape, Shape weight_shape, int64_t x, int64_t y, Attrs attrs,
                                      bool depthwise = false) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  auto random = [&](const Shape& s) {
    std::vector<double> v(static_cast<size_t>(num_elements(s)));
    for (double& d : v) d = dist(gen);
    return tensor(s, v);
  };
  NDArray data = random(data_shape), weight = random(weight_shape);
  NDArray want = run_op("nn.conv2d", {data, weight}, attrs).at(0);
  const std::string data_layout = x == 1 ? "NCHW1c" : Layout::nchw(x);
  const std::string kernel_layout = cat("OIHW", depthwise ? 1 : x, "i", y, "o");
  Attrs blocked = attrs;
  blocked.set("data_layout", AttrValue(data_layout));
  blocked.set("kernel_layout", AttrValue(kernel_layout));
  blocked.set("out_layout", AttrValue(Layout::nchw(y)));
  NDArray got =
      run_op("nn.conv2d", {transformed(data, "NCHW", data_layout), transformed(weight, "OIHW", kernel_layout)}, blocked)
          .at(0);
  NDArray unblocked = transformed(got, Layout::nchw(y), "NCHW");
  ASSERT_EQ(unblocked.shape(), want.shape());
  for (int64_t i = 0; i < want.numel(); ++i) ASSERT_NEAR(unblocked.at(i), want.at(i), 1e-5) << i;
}

TEST(BlockedConv2d, RelationAndKernelMatchNchw) {
  Attrs attrs{{"data_layout", AttrValue("NCHW8c")},
              {"kernel_layout", AttrValue("OIHW8i16o")},
              {"out_layout", AttrValue("NCHW16c")},
              {"padding", AttrValue(std::vector<int64_t>{1, 1})}};
  EXPECT_EQ(type_str(infer_op("nn.conv2d", {f32({1, 2, 6, 6, 8}), f32({2, 2, 3, 3, 8, 16})}, attrs)),
            "Tensor[(1, 2, 6, 6, 16), float32]");
  EXPECT_NE(infer_op_error("nn.conv2d", {f32({1, 2, 6, 6, 4}), f32({2, 2, 3, 3, 8, 16})}, attrs).find("block"),
            std::string::npos);
  EXPECT_NE(
      infer_op_error("nn.conv2d", {f32({1, 3, 6, 6, 8}), f32({2, 2, 3, 3, 8, 16})}, attrs).find("input channel blocks"),
      std::string::npos);
  expect_blocked_conv_matches_nchw({1, 16, 6, 6}, {32, 16, 3, 3}, 8, 16, {{"padding", AttrValue(int64_t{1})}});
  expect_blocked_conv_matches_nchw({2, 8, 7, 9}, {8, 8, 1, 1}, 8, 8, {});
  expect_blocked_conv_matches_nchw({1, 16, 9, 9}, {16, 16, 3, 3}, 16, 8,
                                   {{"strides", AttrValue(int64_t{2})}, {"dilation", AttrValue(int64_t{2})}});
  expect_blocked_conv_matches_nchw(
      {1, 16, 7, 7}, {16, 1, 3, 3}, 8, 8,
      {{"groups", AttrValue(int64_t{16})}, {"padding", AttrValue(int64_t{1})}, {"strides", AttrValue(int64_t{2})}},
      /*depthwise=*/true);
  // NCHW1c data (input channels that fill no block) into a blocked output.
  expect_blocked_conv_matches_nchw({1, 11, 5, 5}, {8, 11, 3, 3}, 1, 8,
                                   {{"padding", AttrValue(int64_t{1})}, {"strides", AttrValue(int64_t{2})}});
  expect_blocked_conv_matches_nchw({1, 3, 9, 7}, {16, 3, 3, 3}, 1, 16, {{"padding", AttrValue(int64_t{1})}});
}

TEST(BlockedConv2d, DepthwiseRelationChecksGroups) {
  Attrs attrs{{"data_layout", AttrValue("NCHW8c")},
              {"kernel_layout", AttrValue("OIHW1i8o")},
              {"groups", AttrValue(int64_t{16})},
              {"padding", AttrValue(std::vector<int64_t>{1, 1})}};
  EXPECT_EQ(type_str(infer_op("nn.conv2d", {f32({1, 2, 6, 6, 8}), f32({2, 1, 3, 3, 1, 8})}, attrs)),
            "Tensor[(1, 2, 6, 6, 8), float32]");
  attrs.set("groups", AttrValue(int64_t{8}));
  EXPECT_NE(infer_op_error("nn.conv2d", {f32({1, 2, 6, 6, 8}), f32({2, 1, 3, 3, 1, 8})}, attrs).find("groups=16"),
            std::string::npos);
}

TEST(BlockedConv2d, ComputeMatchesKernel) {
  auto conv = [](const std::string& data, const std::string& weight, const std::string& attrs,
                 const std::string& tail) {
    return "fn (%x: Tensor[(" + data + "), float32], %w: Tensor[(" + weight +
           "), float32], Primitive=1) { %0 = nn.conv2d(%x, %w, " + attrs + "); " + tail + " }";
  };
  const std::string l8_16 = "data_layout=\"NCHW8c\", kernel_layout=\"OIHW8i16o\", out_layout=\"NCHW16c\"";
  const std::string l16 = "data_layout=\"NCHW16c\", kernel_layout=\"OIHW16i16o\", out_layout=\"NCHW16c\"";
  CompareOptions o;
  o.atol = 1e-4;
  o.rtol = 1e-4;
  // 3x3 padded, the conv the group's output; with an element-wise tail; strided; 1x1.
  expect_compiled_matches_interpreter(conv("1, 2, 14, 14, 8", "2, 2, 3, 3, 8, 16", "padding=[1, 1], " + l8_16, "%0"),
                                      o);
  expect_compiled_matches_interpreter(
      conv("1, 2, 14, 14, 8", "2, 2, 3, 3, 8, 16", "padding=[1, 1], " + l8_16, "nn.relu(%0)"), o);
  expect_compiled_matches_interpreter(
      conv("2, 1, 9, 9, 16", "1, 1, 3, 3, 16, 16", "strides=[2, 2], padding=[1, 1], " + l16, "nn.relu(%0)"), o);
  expect_compiled_matches_interpreter(conv("1, 1, 7, 7, 16", "2, 1, 1, 1, 16, 16", l16, "%0"), o);
  // Depthwise: 3x3, padded, stride 1 and 2, with a clip tail.
  const std::string dw = "groups=32, data_layout=\"NCHW16c\", kernel_layout=\"OIHW1i16o\", out_layout=\"NCHW16c\"";
  expect_compiled_matches_interpreter(
      conv("1, 2, 10, 10, 16", "2, 1, 3, 3, 1, 16", "padding=[1, 1], " + dw, "clip(%0, a_min=0f, a_max=6f)"), o);
  expect_compiled_matches_interpreter(
      conv("1, 2, 9, 9, 16", "2, 1, 3, 3, 1, 16", "strides=[2, 2], padding=[1, 1], " + dw, "%0"), o);
  // Planes large enough that each output row pads the rows it reads (depthwise_pads_per_row):
  // odd extents, 3x3 and 5x5, stride 1 and 2, asymmetric padding, a SiLU tail.
  expect_compiled_matches_interpreter(
      conv("1, 2, 47, 51, 16", "2, 1, 3, 3, 1, 16", "padding=[1, 1], " + dw, "multiply(%0, sigmoid(%0))"), o);
  expect_compiled_matches_interpreter(
      conv("1, 2, 53, 49, 16", "2, 1, 5, 5, 1, 16", "strides=[2, 2], padding=[2, 2], " + dw, "%0"), o);
  expect_compiled_matches_interpreter(
      conv("2, 2, 51, 47, 16", "2, 1, 3, 3, 1, 16", "strides=[2, 2], padding=[0, 1, 2, 1], " + dw,
           "clip(%0, a_min=0f, a_max=6f)"),
      o);
}

// Output widths with no divisor that fills the register tile (Inception's 17 and 73) are
// computed rounded up to whole tiles and cropped: 1x7 and 7x1 windows, 1x1, a strided 3x3
// onto 17 columns, asymmetric padding, without and with an element-wise tail, 8- and 16-wide
// blocks.
TEST(BlockedConv2d, WidthsWithoutAGoodDivisorComputeWholeTiles) {
  auto conv = [](const std::string& data, const std::string& weight, const std::string& attrs,
                 const std::string& tail) {
    return "fn (%x: Tensor[(" + data + "), float32], %w: Tensor[(" + weight + "), float32], %b: Tensor[(" +
           weight.substr(0, weight.find(',')) + ", 1, 1, 16), float32], Primitive=1) { %0 = nn.conv2d(%x, %w, " +
           attrs + "); " + tail + " }";
  };
  const std::string l16 = "data_layout=\"NCHW16c\", kernel_layout=\"OIHW16i16o\", out_layout=\"NCHW16c\"";
  const std::string relu = "nn.relu(add(%0, %b))";
  CompareOptions o;
  o.atol = 1e-4;
  o.rtol = 1e-4;
  const std::string source = expect_compiled_matches_interpreter(
      conv("1, 2, 17, 17, 16", "2, 2, 1, 7, 16, 16", "padding=[0, 3], " + l16, relu), o);
  EXPECT_NE(source.find("_wide["), std::string::npos) << "17 columns are computed as 18 (two tiles of 9)";
  expect_compiled_matches_interpreter(conv("1, 2, 17, 17, 16", "1, 2, 7, 1, 16, 16", "padding=[3, 0], " + l16, "%0"),
                                      o);
  expect_compiled_matches_interpreter(conv("1, 3, 17, 23, 16", "2, 3, 1, 1, 16, 16", l16, relu), o);
  expect_compiled_matches_interpreter(conv("1, 1, 9, 73, 16", "2, 1, 1, 1, 16, 16", l16, "%0"), o);
  expect_compiled_matches_interpreter(conv("1, 1, 35, 35, 16", "1, 1, 3, 3, 16, 16", "strides=[2, 2], " + l16, relu),
                                      o);
  expect_compiled_matches_interpreter(
      conv("1, 1, 19, 31, 16", "1, 1, 3, 5, 16, 16", "padding=[0, 1, 2, 3], " + l16, relu), o);
  const std::string l8 = "data_layout=\"NCHW8c\", kernel_layout=\"OIHW8i8o\", out_layout=\"NCHW8c\"";
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(1, 2, 5, 11, 8), float32], %w: Tensor[(1, 2, 1, 3, 8, 8), float32], Primitive=1) { "
      "%0 = nn.conv2d(%x, %w, padding=[0, 1], " +
          l8 + "); nn.relu(%0) }",
      o);
}

}  // namespace
}  // namespace kiln::testing
