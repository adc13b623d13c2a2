// Winograd F(4x4, 3x3): the reference kernels (nn.winograd_weight_transform then
// nn.conv2d_winograd against the blocked direct nn.conv2d), the compiled kernel against the
// reference (batch 2, H and W not multiples of 4, padding 1 and 0 and uneven, folded bias and
// clamps, a fused tail and a fused producer), and the WinogradConv2D pass: golden IR, the
// epilogues it folds, the calls it leaves alone, and the interpreter's results before and after
// on random convolutions.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "kiln/frontend/onnx.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/structural.h"
#include "kiln/ir/type_infer.h"
#include "kiln/transform/pass.h"
#include "op/compute_test_util.h"
#include "op/numpy_ref.h"

namespace kiln::testing {
namespace {

struct ConvCase {
  int64_t n, c, h, w, k;
  std::string padding;  // nn.conv2d's [top, left, bottom, right]
  int64_t x = 16, y = 16;
};

std::string dims(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

Shape data_shape(const ConvCase& c) { return {c.n, c.c / c.x, c.h, c.w, c.x}; }
Shape weight_shape(const ConvCase& c) { return {c.k / c.y, c.c / c.x, 3, 3, c.x, c.y}; }

Shape bias_shape(const ConvCase& c) { return {c.k / c.y, 1, 1, c.y}; }

// (N, K/y, OH, OW, y) from the padding [top, left, bottom, right].
Shape out_shape(const ConvCase& c) {
  int64_t p[4] = {0, 0, 0, 0};
  std::sscanf(c.padding.c_str(), "[%" SCNd64 ", %" SCNd64 ", %" SCNd64 ", %" SCNd64 "]", &p[0], &p[1], &p[2], &p[3]);
  return {c.n, c.k / c.y, c.h + p[0] + p[2] - 2, c.w + p[1] + p[3] - 2, c.y};
}

// @main(%x, %r, %w, %b) { relu(nn.conv2d(%x, %w) + %b + %r) } in the blocked layouts
// AlterOpLayout gives.
std::string blocked_conv(const ConvCase& c) {
  const std::string x = std::to_string(c.x), y = std::to_string(c.y);
  return "def @main(%x: Tensor[" + dims(data_shape(c)) + ", float32], %r: Tensor[" + dims(out_shape(c)) +
         ", float32], %w: Tensor[" + dims(weight_shape(c)) + ", float32], %b: Tensor[" + dims(bias_shape(c)) +
         ", float32]) { %0 = nn.conv2d(%x, %w, padding=" + c.padding + ", data_layout=\"NCHW" + x +
         "c\", kernel_layout=\"OIHW" + x + "i" + y + "o\", out_layout=\"NCHW" + y +
         "c\"); %1 = add(%0, %b); %2 = add(%1, %r); nn.relu(%2) }";
}

IRModule with_weights(const std::string& text, const NDArray& w, const NDArray& b) {
  return bind_params(parse_module(text), {{"w", w}, {"b", b}});
}

PassContext forced() {
  PassContext ctx;
  ctx.opt_level = 3;
  ctx.options["WinogradConv2D"].set("force", AttrValue(true));
  return ctx;
}

void expect_close(const NDArray& want, const NDArray& got, double rtol, double atol) {
  ASSERT_EQ(want.shape(), got.shape());
  int64_t bad = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double a = want.at(i), b = got.at(i);
    if (std::abs(a - b) > atol + rtol * std::abs(a) && bad++ < 5)
      ADD_FAILURE() << "element " << i << ": want " << a << ", got " << b;
  }
  EXPECT_EQ(bad, 0);
}

const std::vector<ConvCase> kCases = {
    {2, 16, 9, 11, 32, "[1, 1, 1, 1]"},         // batch 2, H and W not multiples of 4
    {1, 32, 8, 8, 16, "[0, 0, 0, 0]"},          // no padding: 6x6 output
    {1, 16, 7, 5, 48, "[1, 0, 2, 1]"},          // uneven padding, channels not a multiple of 32
    {1, 48, 14, 14, 64, "[1, 1, 1, 1]"},        // several channel blocks each way
    {1, 16, 6, 10, 32, "[1, 1, 1, 1]", 8, 16},  // 8-channel input blocks
    {1, 24, 9, 7, 16, "[1, 1, 1, 1]", 8, 8},    // 8-channel blocks both ways (AVX2's)
};

// The reference kernels through the pass (FoldConstant evaluates the weight transform; bias,
// residual and relu fold into the call) against the direct blocked convolution, on the interpreter.
TEST(WinogradConv2D, ReferenceMatchesDirectConvolution) {
  uint32_t seed = 3;
  for (const ConvCase& c : kCases) {
    SCOPED_TRACE(blocked_conv(c));
    const NDArray w = sample_tensor(weight_shape(c), seed++), b = sample_tensor(bias_shape(c), seed++);
    IRModule mod = with_weights(blocked_conv(c), w, b);
    IRModule wino = run_passes(mod, {"WinogradConv2D"}, forced());
    const std::string printed = print_module(wino);
    ASSERT_NE(printed.find("nn.conv2d_winograd"), std::string::npos) << printed;
    ASSERT_EQ(printed.find("nn.winograd_weight_transform"), std::string::npos) << "not folded:\n" << printed;
    ASSERT_EQ(printed.find("nn.relu"), std::string::npos) << "epilogue not folded:\n" << printed;
    ASSERT_EQ(printed.find("add("), std::string::npos) << "epilogue not folded:\n" << printed;
    const std::vector<Value> args = {Value(sample_tensor(data_shape(c), seed)),
                                     Value(sample_tensor(out_shape(c), seed + 1))};
    seed += 2;
    expect_close(interpret(mod, "main", args).flatten().at(0), interpret(wino, "main", args).flatten().at(0), 1e-4,
                 1e-5);
  }
}

// The weight transform alone: U of a weight with a single 1 at tap (r, s) of channel pair (o, c)
// is G e_r (G e_s)^T at (o, c) and zero elsewhere; output channels past O are zero.
TEST(WinogradConv2D, WeightTransformKernel) {
  const double g[6][3] = {{1.0 / 4, 0, 0},
                          {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                          {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                          {1.0 / 24, 1.0 / 12, 1.0 / 6},
                          {1.0 / 24, -1.0 / 12, 1.0 / 6},
                          {0, 0, 1}};
  const int64_t o = 17, c = 5, r = 2, s = 1;
  NDArray w = NDArray::from_doubles({2, 1, 3, 3, 16, 16}, DType::kFloat32, std::vector<double>(2 * 9 * 256, 0.0));
  w.set(((((o / 16) * 1 + 0) * 3 + r) * 3 + s) * 256 + c * 16 + o % 16, 1.0);
  IRModule mod = parse_module(
      R"(def @main(%w: Tensor[(2, 1, 3, 3, 16, 16), float32]) { nn.winograd_weight_transform(%w, out_channels=20) })");
  const NDArray u = interpret(mod, "main", {Value(w)}).flatten().at(0);
  ASSERT_EQ(u.shape(), (Shape{36, 1, 16, 32}));
  for (int64_t i = 0; i < 36; ++i)
    for (int64_t ch = 0; ch < 16; ++ch)
      for (int64_t k = 0; k < 32; ++k) {
        const double want = (ch == c && k == o) ? g[i / 6][r] * g[i % 6][s] : 0.0;
        EXPECT_NEAR(u.at((i * 16 + ch) * 32 + k), want, 1e-7) << i << " " << ch << " " << k;
      }
}

// U of a real weight is G g G^T, whose structure makes A^T (U . V) A cancel mildly; a random U
// in the same range (G's rows sum to at most 1 in magnitude) has no such structure, so float
// rounding in the transforms (factors up to 8 and 5) shows at 1e-3 of the output: the tolerance
// here checks the kernel's indexing and arithmetic. Real weights are compared at 1e-4 by
// tests/backend/winograd_build_test.cc and the real models against ONNX Runtime.
CompareOptions winograd_inputs() {
  CompareOptions o;
  o.rtol = 1e-3;
  o.atol = 1e-3;
  o.ranges = {{-1, 1}, {-0.25, 0.25}, {-1, 1}};
  return o;
}

// The compiled kernel against the reference kernel, in turn with a folded bias and relu, a folded
// bias and a clamp of both sides, a folded bias, residual and relu, and no bias with a residual add
// and relu that FuseOps gives it.
TEST(WinogradConv2DCompute, CompiledMatchesReference) {
  const CompareOptions tol = winograd_inputs();
  for (size_t i = 0; i < kCases.size(); ++i) {
    const ConvCase& c = kCases[i];
    const std::string panels = std::to_string((c.k + 31) / 32), k = std::to_string(c.k);
    const std::string bias = "%p2: Tensor[(" + k + "), float32]", out = "Tensor[" + dims(out_shape(c)) + ", float32]";
    std::string fn = "fn (%p0: Tensor[" + dims(data_shape(c)) + ", float32], %p1: Tensor[(36, " + panels + ", " +
                     std::to_string(c.c) + ", 32), float32], ";
    const std::string attrs = "padding=" + c.padding + ", channels=" + k + ", out_block=" + std::to_string(c.y);
    switch ((i + 1) % 4) {
      case 0: fn += bias + ", Primitive=1) { nn.conv2d_winograd(%p0, %p1, %p2, " + attrs + ", clamp_min=0f) }"; break;
      case 1:
        fn += bias + ", Primitive=1) { nn.conv2d_winograd(%p0, %p1, %p2, " + attrs +
              ", clamp_min=-0.25f, clamp_max=0.25f) }";
        break;
      case 2:
        fn += bias + ", %p3: " + out + ", Primitive=1) { nn.conv2d_winograd(%p0, %p1, %p2, %p3, " + attrs +
              ", clamp_min=0f) }";
        break;
      default:
        fn += "%p2: " + out + ", Primitive=1) { %0 = nn.conv2d_winograd(%p0, %p1, " + attrs +
              "); %1 = add(%0, %p2); nn.relu(%1) }";
    }
    SCOPED_TRACE(fn);
    const std::string source = expect_compiled_matches_interpreter(fn, tol);
    EXPECT_NE(source.find("kiln_conv2d_winograd_f32("), std::string::npos);
  }
}

// An element-wise producer fused before the call is computed into a buffer the kernel reads.
TEST(WinogradConv2DCompute, FusedProducer) {
  const CompareOptions tol = winograd_inputs();
  expect_compiled_matches_interpreter(R"(fn (%p0: Tensor[(1, 1, 10, 9, 16), float32],
      %p1: Tensor[(36, 1, 16, 32), float32], Primitive=1) {
        %0 = nn.relu(%p0);
        nn.conv2d_winograd(%0, %p1, padding=[1, 1, 1, 1], channels=32, out_block=16) })",
                                      tol);
}

// Golden IR: the pass without its FoldConstant; the bias (as (K)), the residual and the relu fold
// into the call.
TEST(WinogradConv2D, RewritesTheBlockedConvolution) {
  const ConvCase c{1, 16, 8, 8, 32, "[1, 1, 1, 1]"};
  const NDArray w = sample_tensor(weight_shape(c), 5), b = sample_tensor(bias_shape(c), 6);
  WinogradConv2DOptions options;
  options.force = true;
  IRModule got = winograd_conv2d_pass(with_weights(blocked_conv(c), w, b), options, /*fold=*/false);
  IRModule want = infer_types(with_weights(R"(def @main(%x: Tensor[(1, 1, 8, 8, 16), float32],
      %r: Tensor[(1, 2, 8, 8, 16), float32], %w: Tensor[(2, 1, 3, 3, 16, 16), float32],
      %b: Tensor[(2, 1, 1, 16), float32]) {
        %0 = nn.winograd_weight_transform(%w, out_channels=32);
        %1 = reshape(%b, newshape=[32], allowzero=0);
        nn.conv2d_winograd(%x, %0, %1, %r, padding=[1, 1, 1, 1], channels=32, out_block=16, clamp_min=0f,
                           clamp_max=inff) })",
                                           w, b));
  EXPECT_TRUE(structural_equal(got, want)) << "got:\n" << print_module(got) << "\nwant:\n" << print_module(want);
}

// The pass (forced, unfolded) on a 16 -> 32 channel 8x8 convolution %0 followed by `tail`, with
// a bias %b of shape `bias` and a residual input %r; the printed result without its constants.
std::string with_tail(const std::string& tail, const Shape& bias, const WinogradConv2DOptions& options) {
  const std::string text =
      R"(def @main(%x: Tensor[(1, 1, 8, 8, 16), float32], %w: Tensor[(2, 1, 3, 3, 16, 16), float32],
      %b: Tensor[)" +
      dims(bias) + R"(, float32], %r: Tensor[(1, 2, 8, 8, 16), float32]) {
        %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], data_layout="NCHW16c", kernel_layout="OIHW16i16o",
                       out_layout="NCHW16c"); )" +
      tail + " }";
  const IRModule mod = with_weights(text, sample_tensor({2, 1, 3, 3, 16, 16}, 7), sample_tensor(bias, 8));
  const std::string printed = print_module(winograd_conv2d_pass(mod, options, /*fold=*/false));
  return printed.substr(0, printed.find("#[metadata]"));
}

// What the epilogue takes: a bias of one value per channel, then a residual of the output's type,
// then a relu or clip, each only when the convolution's value has no other reader; a residual
// without a bias before it stays outside.
TEST(WinogradConv2D, FoldsOnlyAnEpilogueTheConvolutionAloneFeeds) {
  WinogradConv2DOptions options;
  options.force = true;
  const Shape per_channel = {2, 1, 1, 16};
  const std::string clip = with_tail("%1 = add(%b, %0); clip(%1, a_min=0f, a_max=6f)", per_channel, options);
  EXPECT_NE(clip.find("newshape=[32]"), std::string::npos) << clip;
  EXPECT_NE(clip.find("clamp_min=0f, clamp_max=6f"), std::string::npos) << clip;
  EXPECT_EQ(clip.find("clip("), std::string::npos) << clip;
  const std::string residual = with_tail("%1 = add(%0, %b); %2 = add(%r, %1); nn.relu(%2)", per_channel, options);
  EXPECT_NE(residual.find("newshape=[32]"), std::string::npos) << residual;
  EXPECT_NE(residual.find(", %r, padding="), std::string::npos) << residual;
  EXPECT_EQ(residual.find("add("), std::string::npos) << residual;
  EXPECT_EQ(residual.find("nn.relu("), std::string::npos) << residual;
  const std::string no_bias = with_tail("%1 = add(%0, %r); nn.relu(%1)", per_channel, options);
  EXPECT_NE(no_bias.find("add("), std::string::npos) << no_bias;
  EXPECT_NE(no_bias.find("nn.relu("), std::string::npos) << no_bias;
  const std::string twice = with_tail("%1 = nn.relu(%0); clip(%1, a_min=-1f, a_max=1f)", per_channel, options);
  EXPECT_NE(twice.find("clamp_min=0f, clamp_max=inff"), std::string::npos) << twice;
  EXPECT_NE(twice.find("clip("), std::string::npos) << twice;
  const std::string two_readers = with_tail("%1 = add(%0, %b); %2 = nn.relu(%1); add(%2, %0)", per_channel, options);
  EXPECT_EQ(two_readers.find("reshape("), std::string::npos) << two_readers;
  EXPECT_NE(two_readers.find("nn.relu("), std::string::npos) << two_readers;
  const std::string whole_bias = with_tail("%1 = add(%0, %b); nn.relu(%1)", {1, 2, 8, 8, 16}, options);
  EXPECT_EQ(whole_bias.find("reshape("), std::string::npos) << whole_bias;
  EXPECT_NE(whole_bias.find("nn.relu("), std::string::npos) << whole_bias;
  options.epilogue = false;
  const std::string off = with_tail("%1 = add(%0, %b); nn.relu(%1)", per_channel, options);
  EXPECT_NE(off.find("nn.conv2d_winograd"), std::string::npos) << off;
  EXPECT_EQ(off.find("reshape("), std::string::npos) << off;
  EXPECT_NE(off.find("nn.relu("), std::string::npos) << off;
}

TEST(WinogradConv2D, LeavesOtherConvolutionsAlone) {
  const std::vector<std::string> fns = {
      // stride 2
      R"(def @main(%x: Tensor[(1, 1, 8, 8, 16), float32], %w: Tensor[(1, 1, 3, 3, 16, 16), float32]) {
           nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], data_layout="NCHW16c", kernel_layout="OIHW16i16o") })",
      // dilation 2
      R"(def @main(%x: Tensor[(1, 1, 8, 8, 16), float32], %w: Tensor[(1, 1, 3, 3, 16, 16), float32]) {
           nn.conv2d(%x, %w, dilation=[2, 2], data_layout="NCHW16c", kernel_layout="OIHW16i16o") })",
      // 1x1
      R"(def @main(%x: Tensor[(1, 1, 8, 8, 16), float32], %w: Tensor[(1, 1, 1, 1, 16, 16), float32]) {
           nn.conv2d(%x, %w, data_layout="NCHW16c", kernel_layout="OIHW16i16o") })",
      // NCHW
      R"(def @main(%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(16, 16, 3, 3), float32]) {
           nn.conv2d(%x, %w, padding=[1, 1]) })",
      // depthwise
      R"(def @main(%x: Tensor[(1, 1, 8, 8, 16), float32], %w: Tensor[(1, 1, 3, 3, 1, 16), float32]) {
           nn.conv2d(%x, %w, groups=16, data_layout="NCHW16c", kernel_layout="OIHW1i16o") })",
  };
  WinogradConv2DOptions options;
  options.force = true;
  for (const std::string& fn : fns) {
    IRModule mod = parse_module(fn);
    const TensorTypeNode* w = as_tensor(mod.lookup("main")->params.back()->type_annotation);
    mod = bind_params(mod, {{"w", sample_tensor(w->shape, 1)}});
    const std::string got = print_module(winograd_conv2d_pass(mod, options, false));
    EXPECT_EQ(got.find("winograd"), std::string::npos) << got;
  }
  // A weight that is an input.
  const std::string input_weight =
      print_module(winograd_conv2d_pass(parse_module(blocked_conv({1, 16, 8, 8, 32, "[1, 1, 1, 1]"})), options, false));
  EXPECT_EQ(input_weight.find("winograd"), std::string::npos) << input_weight;
}

}  // namespace
}  // namespace kiln::testing
