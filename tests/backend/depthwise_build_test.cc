// Depthwise convolutions built end to end: MobileNet-style NCHW depthwise layers (3x3 stride 1
// with bias + clip, 5x5 stride 2 with bias + relu, batch 2, odd sizes) go blocked
// (AlterOpLayout) and compile to the row micro-kernel kiln_dwconv_row_f32; the artifact's
// outputs on an executor with 2 threads match the interpreter within rtol 1e-4 / atol 1e-5.
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
  EXPECT_NE(built.kernels_c.find("kiln_dwconv_row_f32("), std::string::npos);
  expect_all_close(run_artifact(built, input, /*threads=*/2), want, 1e-5, 1e-4);
}

}  // namespace
}  // namespace kiln::testing
