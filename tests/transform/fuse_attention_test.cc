// FuseAttention: golden before/after IR (torch's nn.MultiheadAttention export with the query
// scaled beforehand, a BERT-style layer with a scale and an additive mask, chains it must leave
// alone) and a property test: the interpreter gives the same results, bit for bit, before and after.
#include <gtest/gtest.h>

#include <string>

#include "kiln/interp/interpreter.h"
#include "op/numpy_ref.h"
#include "transform/pass_test_util.h"

namespace kiln::testing {
namespace {

std::string module(const std::string& params, const std::string& body) {
  return "def @main(" + params + ") {\n  " + body + "\n}";
}

const char* const kHeads =
    "%q: Tensor[(4, 19, 32), float32], %k: Tensor[(4, 32, 23), float32], %v: Tensor[(4, 23, 16), float32]";

TEST(FuseAttention, MultiheadAttentionBecomesOneOp) {
  // The query scaled before the product (as torch exports it) stays outside; the keys become rows.
  expect_pass_result(
      "FuseAttention",
      module(kHeads, "%0 = divide(%q, 8f); %1 = nn.matmul(%0, %k); %2 = nn.softmax(%1, axis=2); nn.matmul(%2, %v)"),
      module(kHeads,
             "%0 = divide(%q, 8f); %1 = transpose(%k, axes=[0, 2, 1]); nn.attention(%0, %1, %v, scale=1f, "
             "rows_outer=False)"));
  // torch's heads split off the key projection (S, H, D) by transpose(axes=[1, 2, 0]): one
  // transpose to (H, S, D) instead.
  const std::string split =
      "%q: Tensor[(4, 19, 32), float32], %x: Tensor[(23, 4, 32), float32], "
      "%v: Tensor[(4, 23, 16), float32]";
  expect_pass_result(
      "FuseAttention",
      module(split,
             "%0 = transpose(%x, axes=[1, 2, 0]); %1 = nn.matmul(%q, %0); "
             "%2 = nn.softmax(%1, axis=-1); nn.matmul(%2, %v)"),
      module(split, "%0 = transpose(%x, axes=[1, 0, 2]); nn.attention(%q, %0, %v, scale=1f, rows_outer=False)"));
  // Keys that were rows already, transposed for the product: no transpose left.
  const std::string rows =
      "%q: Tensor[(4, 19, 32), float32], %x: Tensor[(4, 23, 32), float32], "
      "%v: Tensor[(4, 23, 16), float32]";
  expect_pass_result("FuseAttention",
                     module(rows,
                            "%0 = transpose(%x, axes=[0, 2, 1]); %1 = nn.matmul(%q, %0); "
                            "%2 = nn.softmax(%1, axis=-1); nn.matmul(%2, %v)"),
                     module(rows, "nn.attention(%q, %x, %v, scale=1f, rows_outer=False)"));
}

TEST(FuseAttention, HeadsMergedBackAreWrittenInPlace) {
  // torch's transpose(axes=[1, 0, 2]) and reshape of the heads' outputs before the output projection.
  const std::string chain = "%1 = nn.matmul(%q, %k); %2 = nn.softmax(%1, axis=2); %3 = nn.matmul(%2, %v); ";
  expect_pass_result(
      "FuseAttention", module(kHeads, chain + "%4 = transpose(%3, axes=[1, 0, 2]); reshape(%4, newshape=[19, 64])"),
      module(kHeads, "%1 = transpose(%k, axes=[0, 2, 1]); nn.attention(%q, %1, %v, scale=1f, rows_outer=True)"));
  // A transpose alone, another permutation or another reshape stay as they are.
  for (const std::string& tail :
       {std::string("transpose(%3, axes=[1, 0, 2])"),
        std::string("%4 = transpose(%3, axes=[0, 2, 1]); reshape(%4, newshape=[4, 304])"),
        std::string("%4 = transpose(%3, axes=[1, 0, 2]); reshape(%4, newshape=[19, 4, 16])")}) {
    const std::string printed = print_module(run_pass("FuseAttention", module(kHeads, chain + tail)));
    EXPECT_NE(printed.find("rows_outer=False"), std::string::npos) << printed;
  }
}

TEST(FuseAttention, ScaleAndMaskGoIntoTheOp) {
  const std::string params =
      "%q: Tensor[(1, 12, 9, 64), float32], %k: Tensor[(1, 12, 64, 9), float32], "
      "%v: Tensor[(1, 12, 9, 64), float32], %m: Tensor[(1, 1, 1, 9), float32]";
  expect_pass_result(
      "FuseAttention",
      module(params,
             "%0 = nn.matmul(%q, %k); %1 = multiply(%0, 0.125f); %2 = add(%1, %m); "
             "%3 = nn.softmax(%2, axis=-1); nn.matmul(%3, %v)"),
      module(params,
             "%0 = transpose(%k, axes=[0, 1, 3, 2]); nn.attention(%q, %0, %v, %m, scale=0.125f, rows_outer=False)"));
  // The scalar and the mask on the other side of their calls; no scale.
  expect_pass_result(
      "FuseAttention",
      module(params,
             "%0 = nn.matmul(%q, %k); %1 = multiply(0.125f, %0); "
             "%3 = nn.softmax(%1, axis=3); nn.matmul(%3, %v)"),
      module(params,
             "%0 = transpose(%k, axes=[0, 1, 3, 2]); nn.attention(%q, %0, %v, scale=0.125f, rows_outer=False)"));
  expect_pass_result(
      "FuseAttention",
      module(params, "%0 = nn.matmul(%q, %k); %1 = add(%m, %0); %3 = nn.softmax(%1, axis=-1); nn.matmul(%3, %v)"),
      module(params,
             "%0 = transpose(%k, axes=[0, 1, 3, 2]); nn.attention(%q, %0, %v, %m, scale=1f, rows_outer=False)"));
}

TEST(FuseAttention, LeavesOtherChainsAlone) {
  const std::string square =
      "%q: Tensor[(4, 16, 16), float32], %k: Tensor[(4, 16, 16), float32], %v: Tensor[(4, 16, 16), float32]";
  for (const std::string& body : {
           // softmax along another axis
           std::string("%0 = nn.matmul(%q, %k); %1 = nn.softmax(%0, axis=1); nn.matmul(%1, %v)"),
           // a divided score (x / c is not x * (1 / c) in the last bit)
           std::string("%0 = nn.matmul(%q, %k); %1 = divide(%0, 8f); %2 = nn.softmax(%1); nn.matmul(%2, %v)"),
           // a transposed product
           std::string("%0 = nn.matmul(%q, %k, transpose_b=True); %1 = nn.softmax(%0); nn.matmul(%1, %v)"),
           // the probabilities on the right
           std::string("%0 = nn.matmul(%q, %k); %1 = nn.softmax(%0); nn.matmul(%v, %1)"),
           // a multiply by a tensor
           std::string("%0 = nn.matmul(%q, %k); %1 = multiply(%0, %v); %2 = nn.softmax(%1); nn.matmul(%2, %v)"),
       }) {
    const std::string printed = print_module(run_pass("FuseAttention", module(square, body)));
    EXPECT_EQ(printed.find("nn.attention"), std::string::npos) << printed;
  }
  // Batch axes that broadcast (a shared key) are not the op's.
  const std::string shared =
      "%q: Tensor[(4, 16, 8), float32], %k: Tensor[(1, 8, 16), float32], %v: Tensor[(4, 16, 8), float32]";
  const std::string printed = print_module(
      run_pass("FuseAttention", module(shared, "%0 = nn.matmul(%q, %k); %1 = nn.softmax(%0); nn.matmul(%1, %v)")));
  EXPECT_EQ(printed.find("nn.attention"), std::string::npos) << printed;
}

TEST(FuseAttentionProperty, InterpreterGivesTheSameResults) {
  uint32_t seed = 11;
  struct Case {
    std::string params, body;
  };
  const std::string p3 =
      "%q: Tensor[(3, 19, 32), float32], %k: Tensor[(3, 32, 23), float32], %v: Tensor[(3, 23, 64), float32], "
      "%m: Tensor[(19, 23), float32]";
  const std::string p4 =
      "%q: Tensor[(2, 2, 37, 64), float32], %k: Tensor[(2, 2, 64, 37), float32], "
      "%v: Tensor[(2, 2, 37, 64), float32], %m: Tensor[(2, 1, 1, 37), float32]";
  for (const Case& c : std::vector<Case>{
           {p3, "%0 = nn.matmul(%q, %k); %1 = nn.softmax(%0); %2 = nn.matmul(%1, %v); add(%2, sum(%m))"},
           {p3,
            "%0 = nn.matmul(%q, %k); %1 = multiply(%0, 0.17677669f); %2 = add(%1, %m); %3 = nn.softmax(%2); "
            "nn.matmul(%3, %v)"},
           {p4, "%0 = nn.matmul(%q, %k); %1 = add(%m, %0); %3 = nn.softmax(%1, axis=-1); nn.matmul(%3, %v)"},
           {p3,
            "%0 = nn.matmul(%q, %k); %1 = add(%0, %m); %2 = nn.softmax(%1); %3 = nn.matmul(%2, %v); "
            "%4 = transpose(%3, axes=[1, 0, 2]); reshape(%4, newshape=[19, 192])"},
       }) {
    const std::string text = module(c.params, c.body);
    SCOPED_TRACE(text);
    IRModule mod = parse_module(text);
    IRModule fused = run_pass("FuseAttention", text);
    ASSERT_NE(print_module(fused).find("nn.attention"), std::string::npos);
    std::vector<Value> args;
    for (const Var& p : mod.lookup("main")->params)
      args.emplace_back(sample_tensor(as_tensor(p->type_annotation)->shape, seed++, -3, 3));
    NDArray want = interpret(mod, "main", args).tensor(), got = interpret(fused, "main", args).tensor();
    ASSERT_EQ(want.shape(), got.shape());
    for (int64_t i = 0; i < want.numel(); ++i) ASSERT_EQ(got.at(i), want.at(i)) << i;
  }
}

}  // namespace
}  // namespace kiln::testing
