// 1x1 convolutions built end to end on two threads: an inverted-residual block in NCHW with constant
// weights (1x1 expansion + bias + clip, 1x1 projection + bias + residual add, and a strided 1x1)
// goes blocked (AlterOpLayout), its 1x1 convolutions run kiln_conv_nchwc_f32 with the tails fused
// into their kernels, and the artifact's output matches the interpreter on the original module.
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

// x (1, 32, 28, 11) -> expand to 96 (clip 0..6) -> project to 32, + x -> 48 at stride 2.
const char* const kBlock = R"(def @main(%x: Tensor[(1, 32, 28, 11), float32], %w1: Tensor[(96, 32, 1, 1), float32],
    %b1: Tensor[(96), float32], %w2: Tensor[(32, 96, 1, 1), float32], %b2: Tensor[(32), float32],
    %w3: Tensor[(48, 32, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1); %1 = nn.bias_add(%0, %b1); %2 = clip(%1, a_min=0f, a_max=6f);
  %3 = nn.conv2d(%2, %w2); %4 = nn.bias_add(%3, %b2); %5 = add(%4, %x);
  nn.conv2d(%5, %w3, strides=[2, 2]) })";

TEST(Conv1x1Build, InvertedResidualOnTwoThreadsMatchesTheInterpreter) {
  IRModule mod = bind_params(parse_module(kBlock), {{"w1", sample_tensor({96, 32, 1, 1}, 1, -0.3, 0.3)},
                                                    {"b1", sample_tensor({96}, 2)},
                                                    {"w2", sample_tensor({32, 96, 1, 1}, 3, -0.2, 0.2)},
                                                    {"b2", sample_tensor({32}, 4)},
                                                    {"w3", sample_tensor({48, 32, 1, 1}, 5, -0.2, 0.2)}});
  const NDArray x = sample_tensor({1, 32, 28, 11}, 6);
  const NDArray want = interpret(mod, "main", {Value(x)}).tensor();

  const BuiltModel built = build_blocked(mod);
  const auto count = [&](const std::string& call) {
    size_t calls = 0;
    for (size_t at = built.kernels_c.find(call); at != std::string::npos; at = built.kernels_c.find(call, at + 1))
      ++calls;
    return calls;
  };
  // The expansion's bias and clip and the projection's bias and residual are applied in the
  // tile's registers; the last convolution has no bias to start from.
  EXPECT_EQ(count("kiln_conv_nchwc_ep_f32("), 2u) << built.kernels_c;
  EXPECT_EQ(count("kiln_conv_nchwc_f32("), 1u) << built.kernels_c;
  expect_all_close(run_artifact(built, x, /*threads=*/2), want, 1e-4, 1e-4);
}

}  // namespace
}  // namespace kiln::testing
