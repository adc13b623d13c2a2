// Inverted residual openings built end to end: a 1x1 convolution, its bias and activation, then a
// depthwise convolution, its bias and activation, in NCHW with constant weights, go blocked
// (AlterOpLayout) and into one nn.conv2d_pointwise_depthwise (FusePointwiseDepthwise); the
// artifact's outputs, on one thread and two, match the interpreter on the original module within
// rtol 1e-4 / atol 1e-5, and with the pass disabled the same module builds without the fused kernel.
#include <gtest/gtest.h>

#include <string>

#include "backend/blocked_build_test_util.h"
#include "kiln/frontend/onnx.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "op/numpy_ref.h"

namespace kiln::testing {
namespace {

struct Case {
  int64_t n, c, e, h, w, k, stride;
  std::string act;  // "clip", "relu" or "swish", after both convolutions
};

// The activation of v as %<id>, by way of %<id - 1> for a swish.
std::string activation(const std::string& act, const std::string& v, int id) {
  const std::string out = "%" + std::to_string(id), sigmoid = "%" + std::to_string(id - 1);
  if (act == "clip") return out + " = clip(" + v + ", a_min=0f, a_max=6f);";
  if (act == "relu") return out + " = nn.relu(" + v + ");";
  return sigmoid + " = sigmoid(" + v + "); " + out + " = multiply(" + v + ", " + sigmoid + ");";
}

std::string opening(const Case& c) {
  auto t = [](std::initializer_list<int64_t> dims) {
    std::string s = "Tensor[(";
    for (int64_t d : dims) s += (s.back() == '(' ? "" : ", ") + std::to_string(d);
    return s + "), float32]";
  };
  const std::string pad = std::to_string(c.k / 2);
  return "def @main(%x: " + t({c.n, c.c, c.h, c.w}) + ", %p: " + t({c.e, c.c, 1, 1}) + ", %pb: " + t({c.e}) +
         ", %d: " + t({c.e, 1, c.k, c.k}) + ", %db: " + t({c.e}) +
         ") { %0 = nn.conv2d(%x, %p); %1 = nn.bias_add(%0, %pb); " + activation(c.act, "%1", 3) +
         " %4 = nn.conv2d(%3, %d, strides=[" + std::to_string(c.stride) + ", " + std::to_string(c.stride) +
         "], padding=[" + pad + ", " + pad + "], groups=" + std::to_string(c.e) + "); %5 = nn.bias_add(%4, %db); " +
         activation(c.act, "%5", 7) + " %7 }";
}

// Built with every pair fused (whatever its plane) or with the pass off, in the 16-channel blocks
// the fused kernel takes whatever the host's vector (AVX2 hosts run its tiles' loops).
BuiltModel build_opening(const IRModule& mod, bool fuse) {
  BuildOptions options = blocked_build_options();
  options.passes.options["AlterOpLayout"].set("vector_lanes", AttrValue(int64_t{16}));
  options.passes.options["FusePointwiseDepthwise"].set("min_plane", AttrValue(int64_t{1}));
  if (!fuse) options.passes.disabled_passes.insert("FusePointwiseDepthwise");
  return build_blocked(mod, options);
}

TEST(PointwiseDepthwiseBuild, InvertedResidualOpeningsMatchTheInterpreter) {
  for (const Case& c : {Case{1, 16, 48, 14, 14, 3, 1, "clip"}, Case{2, 24, 64, 12, 8, 3, 2, "swish"},
                        Case{1, 16, 32, 11, 7, 5, 2, "relu"}, Case{1, 32, 96, 9, 12, 5, 1, "swish"}}) {
    const std::string text = opening(c);
    SCOPED_TRACE(text);
    IRModule mod = bind_params(parse_module(text), {{"p", sample_tensor({c.e, c.c, 1, 1}, 1, -0.3, 0.3)},
                                                    {"pb", sample_tensor({c.e}, 2)},
                                                    {"d", sample_tensor({c.e, 1, c.k, c.k}, 3, -0.3, 0.3)},
                                                    {"db", sample_tensor({c.e}, 4)}});
    const NDArray x = sample_tensor({c.n, c.c, c.h, c.w}, 5, -2, 2);
    const NDArray want = interpret(mod, "main", {Value(x)}).tensor();
    for (bool fuse : {true, false}) {
      const BuiltModel built = build_opening(mod, fuse);
      EXPECT_EQ(built.kernels_c.find("kiln_pwdw_f32(") != std::string::npos, fuse);
      for (size_t threads : {1, 2}) expect_all_close(run_artifact(built, x, threads), want, 1e-5, 1e-4);
    }
  }
}

}  // namespace
}  // namespace kiln::testing
