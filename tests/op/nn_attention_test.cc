// nn.attention: the type relation, the reference kernel (hand-worked, and bit for bit the
// matmul / softmax / matmul chain it replaces, as the interpreter runs it) and the compiled
// kernel against the reference on sizes that are no multiple of the tiles (query and key counts
// not multiples of 8 or 16, head dims 64 and 32, several row blocks, masks that broadcast).
#include <gtest/gtest.h>

#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "op/compute_test_util.h"
#include "op/numpy_ref.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

TEST(NnAttentionType, OutputTakesTheValuesWidth) {
  EXPECT_EQ(type_str(infer_op("nn.attention", {f32({12, 197, 64}), f32({12, 150, 64}), f32({12, 150, 32})})),
            "Tensor[(12, 197, 32), float32]");
  EXPECT_EQ(
      type_str(infer_op("nn.attention", {f32({2, 3, 5, 8}), f32({2, 3, 7, 8}), f32({2, 3, 7, 8}), f32({2, 1, 1, 7})})),
      "Tensor[(2, 3, 5, 8), float32]");
}

TEST(NnAttentionType, RowsOuterPutsTheQueriesFirst) {
  EXPECT_EQ(type_str(infer_op("nn.attention", {f32({12, 197, 64}), f32({12, 150, 64}), f32({12, 150, 32})},
                              {{"rows_outer", true}})),
            "Tensor[(197, 384), float32]");
  const std::string e =
      infer_op_error("nn.attention", {f32({1, 2, 5, 8}), f32({1, 2, 7, 8}), f32({1, 2, 7, 8})}, {{"rows_outer", true}});
  EXPECT_NE(e.find("'rows_outer' needs 3-D operands"), std::string::npos) << e;
}

TEST(NnAttentionType, Errors) {
  std::string e = infer_op_error("nn.attention", {f32({2, 5, 8}), f32({2, 7, 4}), f32({2, 7, 8})});
  EXPECT_NE(e.find("head extents"), std::string::npos) << e;
  e = infer_op_error("nn.attention", {f32({2, 5, 8}), f32({2, 7, 8}), f32({2, 6, 8})});
  EXPECT_NE(e.find("key counts"), std::string::npos) << e;
  e = infer_op_error("nn.attention", {f32({2, 5, 8}), f32({3, 7, 8}), f32({2, 7, 8})});
  EXPECT_NE(e.find("batch extents"), std::string::npos) << e;
  e = infer_op_error("nn.attention", {f32({2, 5, 8}), f32({2, 7, 8}), f32({2, 7, 8}), f32({5, 6})});
  EXPECT_NE(e.find("'mask' (5, 6) does not broadcast"), std::string::npos) << e;
  e = infer_op_error("nn.attention", {tensor_type({5, 8}, DType::kInt32), f32({7, 8}), f32({7, 8})});
  EXPECT_NE(e.find("floating point"), std::string::npos) << e;
}

TEST(NnAttentionKernel, HandWorked) {
  // One query row against two keys: scores (1, 0) * 2 -> softmax (e^2, 1) / (e^2 + 1).
  const double w = std::exp(2.0) / (std::exp(2.0) + 1);
  expect_close(run_op("nn.attention", {tensor({1, 2}, {1, 0}), tensor({2, 2}, {1, 0, 0, 1}), tensor({2, 1}, {10, 20})},
                      {{"scale", 2.0}})[0],
               {10 * w + 20 * (1 - w)}, 1e-5);
  // A mask of -inf on the first key leaves only the second.
  const double inf = std::numeric_limits<double>::infinity();
  expect_close(run_op("nn.attention", {tensor({1, 2}, {1, 0}), tensor({2, 2}, {1, 0, 0, 1}), tensor({2, 1}, {10, 20}),
                                       tensor({2}, {-inf, 0})})[0],
               {20}, 1e-6);
}

TEST(NnAttentionKernel, EqualsTheChainBitForBit) {
  uint32_t seed = 3;
  // k holds the keys as rows; the chain multiplies by their transpose.
  for (const auto& [q, k, v, m] : std::vector<std::array<Shape, 4>>{
           {{{2, 5, 8}, {2, 7, 8}, {2, 7, 3}, {7}}}, {{{1, 3, 9, 4}, {1, 3, 6, 4}, {1, 3, 6, 4}, {1, 1, 1, 6}}}}) {
    const std::vector<NDArray> args = {sample_tensor(q, seed++, -2, 2), sample_tensor(k, seed++, -2, 2),
                                       sample_tensor(v, seed++), sample_tensor(m, seed++, -3, 0)};
    const NDArray fused = run_op("nn.attention", {args[0], args[1], args[2], args[3]}, {{"scale", 0.125}})[0];
    // The chain, through the interpreter's kernels.
    NDArray scores = run_op("nn.matmul", {args[0], args[1]}, {{"transpose_b", true}})[0];
    scores = run_op("multiply", {scores, tensor({}, {0.125})})[0];
    scores = run_op("add", {scores, args[3]})[0];
    const NDArray probs = run_op("nn.softmax", {scores})[0];
    const NDArray want = run_op("nn.matmul", {probs, args[2]})[0];
    ASSERT_EQ(fused.shape(), want.shape());
    for (int64_t i = 0; i < want.numel(); ++i) EXPECT_EQ(fused.at(i), want.at(i)) << i;
    if (q.size() != 3) continue;
    // rows_outer: the same values with the first two axes swapped and the heads merged.
    const NDArray outer =
        run_op("nn.attention", {args[0], args[1], args[2], args[3]}, {{"scale", 0.125}, {"rows_outer", true}})[0];
    const NDArray swapped = run_op("transpose", {want}, {{"axes", std::vector<int64_t>{1, 0, 2}}})[0];
    ASSERT_EQ(outer.shape(), (Shape{q[1], q[0] * v[2]}));
    ASSERT_EQ(outer.numel(), swapped.numel());
    for (int64_t i = 0; i < swapped.numel(); ++i) EXPECT_EQ(outer.at(i), swapped.at(i)) << i;
  }
}

std::string attention_fn(const Shape& q, const Shape& k, const Shape& v, const std::string& mask,
                         const std::string& attrs) {
  auto t = [](const Shape& s) { return "Tensor[" + shape_str(s) + ", float32]"; };
  std::string params = "%q: " + t(q) + ", %k: " + t(k) + ", %v: " + t(v);
  std::string args = "%q, %k, %v";
  if (!mask.empty()) {
    params += ", %m: Tensor[" + mask + ", float32]";
    args += ", %m";
  }
  return "fn (" + params + ", Primitive=1) { nn.attention(" + args + attrs + ") }";
}

TEST(NnAttentionCompute, OddSizesMatchTheReference) {
  CompareOptions o;
  o.rtol = 1e-4;
  o.atol = 1e-5;
  struct Case {
    Shape q, k, v;
    std::string mask, attrs;
  };
  for (const Case& c : std::vector<Case>{
           {{12, 37, 64}, {12, 37, 64}, {12, 37, 64}, "", ""},
           {{3, 19, 32}, {3, 23, 32}, {3, 23, 32}, "", ", scale=0.17677669529663687f"},
           {{1, 4, 29, 64}, {1, 4, 29, 64}, {1, 4, 29, 64}, "(1, 1, 1, 29)", ""},
           {{2, 50, 32}, {2, 50, 32}, {2, 50, 16}, "(50, 50)", ", scale=0.25f"},
           {{1, 197, 64}, {1, 197, 64}, {1, 197, 64}, "", ""},
           {{2, 600, 32}, {2, 600, 32}, {2, 600, 32}, "", ""},  // several row blocks
           {{12, 37, 64}, {12, 37, 64}, {12, 37, 64}, "", ", rows_outer=True"},
           {{3, 600, 32}, {3, 600, 32}, {3, 600, 16}, "(600)", ", rows_outer=True"},
       }) {
    const std::string fn = attention_fn(c.q, c.k, c.v, c.mask, c.attrs);
    SCOPED_TRACE(fn);
    const std::string source = expect_compiled_matches_interpreter(fn, o);
    EXPECT_NE(source.find("kiln_sgemm_panels_nt_f32("), std::string::npos);
    EXPECT_NE(source.find("kiln_sgemm_panels_f32("), std::string::npos);
    EXPECT_NE(source.find("kiln_softmax_row_f32("), std::string::npos);
  }
}

// Blocks of query rows divide Sq. When no divisor of at least 8 rows fits its scores and
// probabilities in half of L2 (a prime Sq, ViT-B/16's 197 tokens on a 512 KB L2), the block is the
// smallest divisor of at least 8 rows, not one row: a product of one row per task would transpose
// the keys for every query.
TEST(NnAttentionCompute, RowBlocksOfAtLeastEightRows) {
  CompareOptions o;
  o.rtol = 1e-4;
  o.atol = 1e-5;
  o.target.l2_bytes = 64 * 1024;  // half of it holds 20 rows of 2 x 197 floats
  struct Case {
    int64_t sq;
    std::string block;  // the block's row count in the NT product's call
  };
  for (const Case& c : std::vector<Case>{{197, "(197, 197, 64,"}, {198, "(18, 198, 64,"}, {400, "(10, 400, 64,"}}) {
    const Shape qkv{2, c.sq, 64};
    const std::string fn = attention_fn(qkv, qkv, qkv, "", "");
    SCOPED_TRACE(fn);
    const std::string source = expect_compiled_matches_interpreter(fn, o);
    EXPECT_NE(source.find("kiln_sgemm_panels_nt_f32" + c.block), std::string::npos) << source;
  }
}

TEST(NnAttentionCompute, Float64TakesThePlainLoops) {
  const std::string fn =
      "fn (%q: Tensor[(2, 5, 8), float64], %k: Tensor[(2, 7, 8), float64], %v: Tensor[(2, 7, 3), float64], "
      "Primitive=1) { nn.attention(%q, %k, %v, scale=0.5f) }";
  const std::string source = expect_compiled_matches_interpreter(fn);
  EXPECT_EQ(source.find("kiln_sgemm_panels_f32("), std::string::npos);
}

}  // namespace
}  // namespace kiln::testing
