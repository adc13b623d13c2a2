// FusePointwiseDepthwise: golden before/after IR of an inverted residual opening in the blocked
// layouts AlterOpLayout writes (clip, swish and relu activations, the depthwise bias and
// activation folded or not), the pairs it must leave alone, and the interpreter's results before
// and after agreeing within rounding (the reference kernel of nn.conv2d_pointwise_depthwise
// against the ops it replaces).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kiln/attrs/nn.h"
#include "kiln/attrs/unary.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/op.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/type_infer.h"
#include "kiln/transform/pass.h"
#include "op/numpy_ref.h"

namespace kiln::testing {
namespace {

struct Opening {
  int64_t c = 16, e = 48, plane = 8, stride = 1, pw_kernel = 1;
  std::string pw_act = "clip", dw_act = "clip";
  bool dw_bias = true;
  bool expanded_read_twice = false;  // the expanded tensor is also a result
};

Expr activated(const std::string& act, const Expr& v) {
  if (act == "clip") {
    ClipAttrs clip;
    clip.a_min = 0;
    clip.a_max = 6;
    return call_op("clip", {v}, clip);
  }
  if (act == "relu") return call_op("nn.relu", {v});
  if (act == "swish") return call_op("multiply", {v, call_op("sigmoid", {v})});
  return v;
}

Conv2DAttrs blocked(int64_t channels, int64_t kernel, int64_t groups, int64_t stride,
                    const std::string& kernel_layout) {
  Conv2DAttrs attrs;
  attrs.channels = channels;
  attrs.kernel_size = std::vector<int64_t>{kernel, kernel};
  attrs.padding = {kernel / 2, kernel / 2};
  attrs.strides = {stride, stride};
  attrs.groups = groups;
  attrs.data_layout = "NCHW16c";
  attrs.kernel_layout = kernel_layout;
  attrs.out_layout = "NCHW16c";
  return attrs;
}

// x (1, c/16, plane, plane, 16) -> act(add(conv1x1, pb)) -> act(add(depthwise 3x3, db)).
IRModule opening(const Opening& o) {
  Var x = make_var("x", tensor_type({1, o.c / 16, o.plane, o.plane, 16}, DType::kFloat32));
  const int64_t eb = o.e / 16;
  Expr pw = make_constant(sample_tensor({eb, o.c / 16, o.pw_kernel, o.pw_kernel, 16, 16}, 1, -0.3, 0.3));
  Expr pb = make_constant(sample_tensor({eb, 1, 1, 16}, 2));
  Expr dw = make_constant(sample_tensor({eb, 1, 3, 3, 1, 16}, 3, -0.3, 0.3));
  Expr db = make_constant(sample_tensor({eb, 1, 1, 16}, 4));
  Expr expanded = activated(
      o.pw_act, call_op("add", {call_op("nn.conv2d", {x, pw}, blocked(o.e, o.pw_kernel, 1, 1, "OIHW16i16o")), pb}));
  Expr out = call_op("nn.conv2d", {expanded, dw}, blocked(o.e, 3, o.e, o.stride, "OIHW1i16o"));
  if (o.dw_bias) out = call_op("add", {out, db});
  out = activated(o.dw_act, out);
  if (o.expanded_read_twice) out = make_tuple({out, expanded});
  return infer_types(IRModule::from_function(make_function({x}, out)));
}

std::string fused_call(const IRModule& mod) {
  const std::string printed = print_module(fuse_pointwise_depthwise_pass(mod, 1), {.show_types = false});
  const size_t at = printed.find("nn.conv2d_pointwise_depthwise(");
  return at == std::string::npos ? "" : printed.substr(at, printed.find('\n', at) - at);
}

std::string printed(const IRModule& mod) { return print_module(mod, {.show_types = false, .show_metadata = false}); }

TEST(FusePointwiseDepthwise, ClipOpeningBecomesOneCall) {
  const IRModule before = opening({});
  ASSERT_EQ(printed(before),
            "def @main(%x: Tensor[(1, 1, 8, 8, 16), float32]) {\n"
            "  %0 = nn.conv2d(%x, meta[relay.Constant][0], strides=[1, 1], padding=[0, 0], dilation=[1, 1], groups=1, "
            "channels=48, kernel_size=[1, 1], data_layout=\"NCHW16c\", kernel_layout=\"OIHW16i16o\", "
            "out_layout=\"NCHW16c\", out_dtype=\"\");\n"
            "  %1 = add(%0, meta[relay.Constant][1]);\n"
            "  %2 = clip(%1, a_min=0f, a_max=6f);\n"
            "  %3 = nn.conv2d(%2, meta[relay.Constant][2], strides=[1, 1], padding=[1, 1], dilation=[1, 1], groups=48, "
            "channels=48, kernel_size=[3, 3], data_layout=\"NCHW16c\", kernel_layout=\"OIHW1i16o\", "
            "out_layout=\"NCHW16c\", out_dtype=\"\");\n"
            "  %4 = add(%3, meta[relay.Constant][3]);\n"
            "  clip(%4, a_min=0f, a_max=6f)\n"
            "}\n");
  EXPECT_EQ(printed(fuse_pointwise_depthwise_pass(before, 1)),
            "def @main(%x: Tensor[(1, 1, 8, 8, 16), float32]) {\n"
            "  %0 = reshape(meta[relay.Constant][0], newshape=[48], allowzero=0);\n"
            "  %1 = reshape(meta[relay.Constant][1], newshape=[48], allowzero=0);\n"
            "  nn.conv2d_pointwise_depthwise(%x, meta[relay.Constant][2], %0, meta[relay.Constant][3], %1, "
            "strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], pointwise_activation=\"clip\", pointwise_min=0f, "
            "pointwise_max=6f, depthwise_activation=\"clip\", depthwise_min=0f, depthwise_max=6f)\n"
            "}\n");
}

TEST(FusePointwiseDepthwise, SwishReluAndNoDepthwiseBiasFold) {
  Opening swish;
  swish.pw_act = swish.dw_act = "swish";
  swish.stride = 2;
  EXPECT_EQ(fused_call(opening(swish)),
            "nn.conv2d_pointwise_depthwise(%x, meta[relay.Constant][2], %0, meta[relay.Constant][3], %1, "
            "strides=[2, 2], padding=[1, 1, 1, 1], dilation=[1, 1], pointwise_activation=\"swish\", "
            "pointwise_min=-inff, pointwise_max=inff, depthwise_activation=\"swish\", depthwise_min=-inff, "
            "depthwise_max=inff)");
  Opening relu;
  relu.pw_act = "relu";
  relu.dw_act = "none";
  relu.dw_bias = false;
  EXPECT_EQ(fused_call(opening(relu)),
            "nn.conv2d_pointwise_depthwise(%x, meta[relay.Constant][1], %0, meta[relay.Constant][2], "
            "strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], pointwise_activation=\"clip\", "
            "pointwise_min=0f, pointwise_max=inff, depthwise_activation=\"none\", depthwise_min=-inff, "
            "depthwise_max=inff)");
}

TEST(FusePointwiseDepthwise, LeavesOtherPairsAlone) {
  Opening shared;
  shared.expanded_read_twice = true;  // the expanded tensor must be stored anyway
  EXPECT_EQ(fused_call(opening(shared)), "");
  Opening wide;
  wide.pw_kernel = 3;  // not a 1x1 convolution
  EXPECT_EQ(fused_call(opening(wide)), "");
  Opening odd;
  odd.plane = 17;  // no register tile of 4 to 14 positions divides the width
  EXPECT_EQ(fused_call(opening(odd)), "");
  // Below the expanded plane the pass option asks for.
  EXPECT_EQ(print_module(fuse_pointwise_depthwise_pass(opening({}))).find("nn.conv2d_pointwise_depthwise"),
            std::string::npos);
}

TEST(FusePointwiseDepthwiseProperty, InterpreterGivesTheSameResultsWithinRounding) {
  for (const std::string act : {"clip", "swish", "relu", "none"}) {
    for (int64_t stride : {1, 2}) {
      Opening o;
      o.pw_act = o.dw_act = act;
      o.stride = stride;
      o.plane = 7;
      SCOPED_TRACE(act + " stride " + std::to_string(stride));
      IRModule mod = opening(o);
      IRModule fused = fuse_pointwise_depthwise_pass(mod, 1);
      ASSERT_NE(print_module(fused).find("nn.conv2d_pointwise_depthwise"), std::string::npos);
      const NDArray x = sample_tensor({1, 1, 7, 7, 16}, 9, -2, 2);
      NDArray want = interpret(mod, "main", {Value(x)}).tensor(), got = interpret(fused, "main", {Value(x)}).tensor();
      ASSERT_EQ(want.shape(), got.shape());
      for (int64_t i = 0; i < want.numel(); ++i) EXPECT_NEAR(got.at(i), want.at(i), 1e-5 * (1 + std::fabs(want.at(i))));
    }
  }
}

}  // namespace
}  // namespace kiln::testing
