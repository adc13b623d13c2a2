// Winograd convolutions built end to end: a residual block of 3x3 convolutions in NCHW with
// constant weights goes blocked (AlterOpLayout), then Winograd (WinogradConv2D) with bias,
// activation and residual add fused into the kernel's group; the artifact's outputs match the
// interpreter on the original module within rtol 1e-4 / atol 1e-5, and with the pass disabled
// the same module builds without a Winograd kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kiln/backend/build.h"
#include "kiln/frontend/onnx.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/runtime/graph_executor.h"
#include "op/numpy_ref.h"
#include "runtime/runtime_test_util.h"

namespace kiln::testing {
namespace {

// conv(pad) + bias + relu, conv(pad) + bias + x, relu: ResNet's basic block on (n, c, h, w).
std::string basic_block(int64_t n, int64_t c, int64_t h, int64_t w, const std::string& pad) {
  const std::string x = "Tensor[(" + std::to_string(n) + ", " + std::to_string(c) + ", " + std::to_string(h) + ", " +
                        std::to_string(w) + "), float32]";
  const std::string wt = "Tensor[(" + std::to_string(c) + ", " + std::to_string(c) + ", 3, 3), float32]";
  const std::string b = "Tensor[(" + std::to_string(c) + "), float32]";
  return "def @main(%x: " + x + ", %w1: " + wt + ", %b1: " + b + ", %w2: " + wt + ", %b2: " + b +
         ") { %0 = nn.conv2d(%x, %w1, padding=" + pad + "); %1 = nn.bias_add(%0, %b1); %2 = nn.relu(%1);" +
         " %3 = nn.conv2d(%2, %w2, padding=" + pad + "); %4 = nn.bias_add(%3, %b2); %5 = add(%4, %x); nn.relu(%5) }";
}

struct Built {
  NDArray output;
  std::string kernels;
};

Built build_and_run(const IRModule& mod, const NDArray& x, bool winograd) {
  BuildOptions options;
  options.passes.opt_level = 3;
  options.passes.options["WinogradConv2D"].set("force", AttrValue(true));
  options.passes.options["AlterOpLayout"].set("force", AttrValue(true));
  if (!winograd) options.passes.disabled_passes.insert("WinogradConv2D");
  BuiltModel built = build(mod, {}, {"x"}, {"y"}, options);
  runtime_test::TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  GraphExecutor executor(Artifact::load(dir.file("m.kiln")));
  executor.set_input("x", x);
  executor.run();
  return {executor.get_output(0), built.kernels_c};
}

TEST(WinogradBuild, ResidualBlockMatchesTheInterpreter) {
  struct Case {
    int64_t n, c, h, w;
    std::string pad;
  };
  for (const Case& c : {Case{2, 32, 9, 11, "[1, 1]"}, Case{1, 16, 13, 6, "[1, 1]"}}) {
    const std::string text = basic_block(c.n, c.c, c.h, c.w, c.pad);
    SCOPED_TRACE(text);
    const Shape wshape = {c.c, c.c, 3, 3}, bshape = {c.c};
    IRModule mod = bind_params(parse_module(text), {{"w1", sample_tensor(wshape, 1, -0.2, 0.2)},
                                                    {"b1", sample_tensor(bshape, 2)},
                                                    {"w2", sample_tensor(wshape, 3, -0.2, 0.2)},
                                                    {"b2", sample_tensor(bshape, 4)}});
    const NDArray x = sample_tensor({c.n, c.c, c.h, c.w}, 5);
    const NDArray want = interpret(mod, "main", {Value(x)}).tensor();
    const Built wino = build_and_run(mod, x, true);
    EXPECT_NE(wino.kernels.find("kiln_conv2d_winograd_f32("), std::string::npos);
    const Built direct = build_and_run(mod, x, false);
    EXPECT_EQ(direct.kernels.find("kiln_conv2d_winograd_f32("), std::string::npos);
    for (const Built* got : {&wino, &direct}) {
      ASSERT_EQ(got->output.shape(), want.shape());
      int64_t bad = 0;
      for (int64_t i = 0; i < want.numel(); ++i)
        if (std::fabs(got->output.at(i) - want.at(i)) > 1e-5 + 1e-4 * std::fabs(want.at(i)) && bad++ < 5)
          ADD_FAILURE() << "element " << i << ": want " << want.at(i) << ", got " << got->output.at(i);
    }
  }
}

}  // namespace
}  // namespace kiln::testing
