// Depthwise convolutions built end to end: MobileNet-style NCHW depthwise layers (3x3 stride 1
// with bias + clip, 5x5 stride 2 with bias + relu, batch 2, odd sizes) go blocked
// (AlterOpLayout) and compile to the row micro-kernel kiln_dwconv_row_f32; the artifact's
// outputs on an executor with 2 threads match the interpreter within rtol 1e-4 / atol 1e-5. A
// ConvNeXt block (channels-last layer norm between transposes) stays blocked without force.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "backend/blocked_build_test_util.h"
#include "kiln/backend/build.h"
#include "kiln/frontend/onnx.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/runtime/graph_executor.h"
#include "op/numpy_ref.h"

namespace kiln::testing {
namespace {

std::string tensor(const Shape& s) {
  std::string out = "Tensor[(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "), float32]";
}

TEST(DepthwiseBuild, BlockedDepthwiseLayersMatchTheInterpreterOnTwoThreads) {
  const int64_t n = 2, c = 32, h = 57, w = 45;
  const Shape x{n, c, h, w}, w3{c, 1, 3, 3}, w5{c, 1, 5, 5}, b{c};
  const std::string text = "def @main(%x: " + tensor(x) + ", %w3: " + tensor(w3) + ", %b3: " + tensor(b) +
                           ", %w5: " + tensor(w5) + ", %b5: " + tensor(b) +
                           ") { %0 = nn.conv2d(%x, %w3, padding=[1, 1], groups=32, channels=32, kernel_size=[3, 3]);"
                           " %1 = nn.bias_add(%0, %b3); %2 = clip(%1, a_min=0f, a_max=6f);"
                           " %3 = nn.conv2d(%2, %w5, strides=[2, 2], padding=[2, 2], groups=32, channels=32,"
                           " kernel_size=[5, 5]); %4 = nn.bias_add(%3, %b5); nn.relu(%4) }";
  SCOPED_TRACE(text);
  IRModule mod = bind_params(parse_module(text), {{"w3", sample_tensor(w3, 1, -0.5, 0.5)},
                                                  {"b3", sample_tensor(b, 2)},
                                                  {"w5", sample_tensor(w5, 3, -0.3, 0.3)},
                                                  {"b5", sample_tensor(b, 4)}});
  const NDArray input = sample_tensor(x, 5);
  const NDArray want = interpret(mod, "main", {Value(input)}).tensor();

  const BuiltModel built = build_blocked(mod);
  EXPECT_NE(built.kernels_c.find("kiln_dwconv_row_ep_f32("), std::string::npos);
  expect_all_close(run_artifact(built, input, /*threads=*/2), want, 1e-5, 1e-4);
}

// ConvNeXt's block (its MLP one dense here): the transposes to and from channels-last copy straight between NCHW{x}c
// and NHWC (no NCHW tensor in between, nothing materialised inside a kernel), whole vectors of channels at a time, and
// the residual add and the next depthwise conv stay blocked.
TEST(DepthwiseBuild, ChannelsLastLayerNormBetweenBlockedDepthwiseConvs) {
  const int64_t c = 32, h = 9, w = 11;
  const Shape x{1, c, h, w}, wd{c, 1, 7, 7}, b{c}, s{c, 1, 1}, m{c, c};
  const std::string text = "def @main(%x: " + tensor(x) + ", %w1: " + tensor(wd) + ", %b1: " + tensor(b) +
                           ", %g: " + tensor(b) + ", %beta: " + tensor(b) + ", %m: " + tensor(m) +
                           ", %s: " + tensor(s) + ", %w2: " + tensor(wd) +
                           ") { %0 = nn.conv2d(%x, %w1, padding=[3, 3], groups=32, channels=32, kernel_size=[7, 7]);"
                           " %1 = nn.bias_add(%0, %b1); %2 = transpose(%1, axes=[0, 2, 3, 1]);"
                           " %3 = nn.layer_norm(%2, %g, %beta, axis=-1); %4 = nn.dense(%3, %m, units=32);"
                           " %5 = transpose(%4, axes=[0, 3, 1, 2]); %6 = multiply(%s, %5); %7 = add(%6, %x);"
                           " nn.conv2d(%7, %w2, padding=[3, 3], groups=32, channels=32, kernel_size=[7, 7]) }";
  SCOPED_TRACE(text);
  IRModule mod = bind_params(parse_module(text), {{"w1", sample_tensor(wd, 1, -0.3, 0.3)},
                                                  {"b1", sample_tensor(b, 2)},
                                                  {"g", sample_tensor(b, 3, 0.5, 1.5)},
                                                  {"beta", sample_tensor(b, 4)},
                                                  {"m", sample_tensor(m, 8, -0.2, 0.2)},
                                                  {"s", sample_tensor(s, 5)},
                                                  {"w2", sample_tensor(wd, 6, -0.3, 0.3)}});
  const NDArray input = sample_tensor(x, 7);
  const NDArray want = interpret(mod, "main", {Value(input)}).tensor();

  BuildOptions options;
  options.passes.opt_level = 3;
  const BuiltModel built = build_blocked(mod, options);
  EXPECT_NE(built.kernels_c.find("kiln_dwconv_row_f32("), std::string::npos);
  // No layout_transform is computed into scratch memory (a stack array, or the workspace when
  // large) before the scale and the residual add: it is inlined into their rows.
  EXPECT_EQ(built.kernels_c.find("float T_layout_transform"), std::string::npos) << built.kernels_c;
  EXPECT_EQ(built.kernels_c.find("workspace_alloc("), std::string::npos) << built.kernels_c;
  EXPECT_NE(built.kernels_c.find("_lane = 0"), std::string::npos) << built.kernels_c;
  expect_all_close(run_artifact(built, input, /*threads=*/2), want, 1e-5, 1e-4);
}

}  // namespace
}  // namespace kiln::testing
