// A small transformer encoder block built with its weights as constants (so PackDenseWeights
// packs them at build time) and run by the graph executor, against the interpreter on the
// unpacked module: packed GEMMs with fused bias / erf-GELU / residual epilogues, attention's
// batched products, softmax rows and a layer norm.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/backend/build.h"
#include "kiln/frontend/onnx.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/runtime/graph_executor.h"
#include "op/numpy_ref.h"
#include "runtime/runtime_test_util.h"

namespace kiln {
namespace {

using runtime_test::TempDir;

// d_model 64, 4 heads of 16, feed-forward 96 (not a multiple of the 32-wide panels), 37 tokens.
const char* kEncoderBlock = R"(
def @main(%x: Tensor[(37, 64), float32], %wqkv: Tensor[(64, 192), float32], %bqkv: Tensor[(192), float32],
          %wo: Tensor[(64, 64), float32], %w1: Tensor[(96, 64), float32], %b1: Tensor[(96), float32],
          %w2: Tensor[(64, 96), float32], %g: Tensor[(64), float32], %b: Tensor[(64), float32]) {
  %0 = nn.matmul(%x, %wqkv);
  %1 = add(%0, %bqkv);
  %2 = reshape(%1, newshape=[37, 3, 4, 16]);
  %3 = transpose(%2, axes=[1, 2, 0, 3]);
  %4 = strided_slice(%3, begin=[0], end=[1], axes=[0]);
  %5 = reshape(%4, newshape=[4, 37, 16]);
  %6 = strided_slice(%3, begin=[1], end=[2], axes=[0]);
  %7 = reshape(%6, newshape=[4, 37, 16]);
  %8 = strided_slice(%3, begin=[2], end=[3], axes=[0]);
  %9 = reshape(%8, newshape=[4, 37, 16]);
  %10 = nn.batch_matmul(%5, %7);
  %11 = multiply(%10, 0.25f);
  %12 = nn.softmax(%11);
  %13 = nn.batch_matmul(%12, %9, transpose_b=False);
  %14 = transpose(%13, axes=[1, 0, 2]);
  %15 = reshape(%14, newshape=[37, 64]);
  %16 = nn.matmul(%15, %wo);
  %17 = add(%16, %x);
  %18 = nn.layer_norm(%17, %g, %b, axis=-1);
  %19 = nn.dense(%18, %w1);
  %20 = add(%19, %b1);
  %21 = multiply(%20, 0.707107f);
  %22 = erf(%21);
  %23 = add(%22, 1f);
  %24 = multiply(%20, %23);
  %25 = multiply(%24, 0.5f);
  %26 = nn.matmul(%25, %w2, transpose_b=True);
  add(%26, %18)
})";

TEST(TransformerBuild, CompiledEncoderBlockMatchesTheInterpreter) {
  IRModule mod = parse_module(kEncoderBlock);
  std::vector<std::pair<std::string, NDArray>> weights;
  uint32_t seed = 1;
  for (const Var& p : mod.lookup("main")->params)
    if (p->name != "x")
      weights.emplace_back(p->name, testing::sample_tensor(as_tensor(p->type_annotation)->shape, seed++, -0.3, 0.3));
  IRModule bound = bind_params(mod, weights);
  BuiltModel built = build(bound, {}, {"x"}, {"y"});
  EXPECT_TRUE(built.fallbacks.empty());
  EXPECT_NE(built.kernels_c.find("kiln_sgemm_panels_f32("), std::string::npos);
  EXPECT_NE(built.kernels_c.find("kiln_softmax_row_f32("), std::string::npos);
  // Every weight product became a packed one: no dense or matmul of a constant is left.
  EXPECT_NE(built.graph_json.find("dense_packed"), std::string::npos);

  TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  GraphExecutor executor(Artifact::load(dir.file("m.kiln")));
  NDArray x = testing::sample_tensor({37, 64}, 99);
  executor.set_input("x", x);
  executor.run();
  NDArray want = interpret(bound, "main", {Value(x)}).tensor(), got = executor.get_output(0);
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < want.numel(); ++i)
    EXPECT_NEAR(got.at(i), want.at(i), 1e-4 * (1 + std::fabs(want.at(i)))) << i;
}

}  // namespace
}  // namespace kiln
