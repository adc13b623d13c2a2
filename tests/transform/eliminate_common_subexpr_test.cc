// Before/after IR tests for EliminateCommonSubexpr, compared as printed text (which shows
// what is shared), and a 50,000-node case.
#include <gtest/gtest.h>

#include <string>
#include <unordered_set>

#include "ir/text_test_util.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/transform/pass.h"
#include "transform/pass_test_util.h"

namespace kiln {
namespace {

void expect_cse(const std::string& before, const std::string& after) {
  testing::expect_pass_prints("EliminateCommonSubexpr", before, after);
}

void expect_unchanged(const std::string& text) { expect_cse(text, text); }

size_t distinct_nodes(const Expr& root, ExprKind kind) {
  std::unordered_set<const ExprNode*> seen;
  post_order_visit(root, [&](const Expr& e) {
    if (e->kind == kind) seen.insert(e.get());
  });
  return seen.size();
}

TEST(EliminateCommonSubexpr, MergesEqualCalls) {
  expect_cse(R"(
def @main(%x: Tensor[(2), float32]) { add(nn.relu(%x), nn.relu(%x)) }
)",
             R"(
def @main(%x: Tensor[(2), float32]) { %0 = nn.relu(%x); add(%0, %0) }
)");
}

TEST(EliminateCommonSubexpr, MergesCallsWhoseArgumentsWereMerged) {
  expect_cse(R"(
def @main(%x: Tensor[(2), float32]) {
  %0 = exp(%x); %1 = exp(%x); %2 = add(%0, %x); %3 = add(%1, %x); multiply(%2, %3)
}
)",
             R"(
def @main(%x: Tensor[(2), float32]) { %0 = exp(%x); %1 = add(%0, %x); multiply(%1, %1) }
)");
}

TEST(EliminateCommonSubexpr, ComparesAttributesWithTheirDefaultsFilledIn) {
  expect_cse(R"(
def @main(%x: Tensor[(2), float32]) { add(nn.leaky_relu(%x), nn.leaky_relu(%x, alpha=0.01f)) }
)",
             R"(
def @main(%x: Tensor[(2), float32]) { %0 = nn.leaky_relu(%x); add(%0, %0) }
)");
}

TEST(EliminateCommonSubexpr, KeepsCallsWithDifferentAttributes) {
  expect_unchanged(R"(
def @main(%x: Tensor[(2), float32]) { add(nn.leaky_relu(%x, alpha=0.1f), nn.leaky_relu(%x, alpha=0.2f)) }
)");
  // -0.0 == 0.0, but the bounds give different results for x = -0.0.
  expect_unchanged(R"(
def @main(%x: Tensor[(2), float32]) { (clip(%x, a_min=-0f, a_max=1f), clip(%x, a_min=0f, a_max=1f)) }
)");
  expect_unchanged(R"(
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 2, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1]); %1 = nn.conv2d(%x, %w, padding=[1, 1], dilation=[1, 1], strides=[2, 2]);
  (%0, %1)
}
)");
}

TEST(EliminateCommonSubexpr, KeepsCallsWithDifferentArgumentsOrOps) {
  expect_unchanged(R"(
def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) { add(exp(%x), exp(%y)) }
)");
  expect_unchanged(R"(
def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) { multiply(add(%x, %y), subtract(%x, %y)) }
)");
  expect_unchanged(R"(
def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) { multiply(add(%x, %y), add(%y, %x)) }
)");
}

TEST(EliminateCommonSubexpr, NeverMergesNondeterministicOps) {
  expect_unchanged(R"(
def @main(%x: Tensor[(2), float32]) {
  %0 = random.uniform(shape=[2], seed=3); %1 = random.uniform(shape=[2], seed=3); add(%0, %1)
}
)");
  expect_unchanged(R"(
def @main(%p: Tensor[(2), float32]) { (random.bernoulli(%p), random.bernoulli(%p)) }
)");
}

TEST(EliminateCommonSubexpr, MergesEqualConstantsAndTheCallsOnThem) {
  IRModule got = testing::run_pass("EliminateCommonSubexpr", R"(
def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) {
  %0 = add(%x, 1f); %1 = add(%x, 1f); %2 = add(%y, 1f); %3 = add(%y, 2f); %4 = add(%y, -0f); %5 = add(%y, 0f);
  (%0, %1, %2, %3, %4, %5)
}
)");
  const Function& main = got.lookup("main");
  EXPECT_EQ(distinct_nodes(main, ExprKind::kConstant), 4u);  // 1f, 2f, -0f and 0f differ by bytes
  EXPECT_EQ(distinct_nodes(main, ExprKind::kCall), 5u);
}

TEST(EliminateCommonSubexpr, LargeConstantsMergeOnlyWhenEveryByteIsEqual) {
  // 4099 floats: the hash samples some of their bytes, the merge compares them all.
  auto weights = [](int64_t changed) {
    std::vector<float> v(4099, 0.5f);
    if (changed >= 0) v[static_cast<size_t>(changed)] = 0.25f;
    return make_constant(NDArray::from_vector({4099}, v));
  };
  Var x = make_var("x", tensor_type({4099}, DType::kFloat32));
  std::vector<Expr> sums;
  for (int64_t changed : {-1, -1, 1, 4098, 17, 17}) sums.push_back(call_op("add", {x, weights(changed)}));
  IRModule got = run_passes(IRModule::from_function(make_function({x}, make_tuple(sums))), {"EliminateCommonSubexpr"});
  EXPECT_EQ(distinct_nodes(got.lookup("main"), ExprKind::kConstant), 4u);
  EXPECT_EQ(distinct_nodes(got.lookup("main"), ExprKind::kCall), 4u);
}

TEST(EliminateCommonSubexpr, MergesProjectionsAndTuplesOfTheSameNodes) {
  expect_cse(R"(
def @main(%x: Tensor[(6), float32]) {
  %0 = split(%x, indices_or_sections=2); %1 = %0.1; %2 = %0.1; %3 = (%1, %x); %4 = (%2, %x); (%3, %4, %0.0)
}
)",
             R"(
def @main(%x: Tensor[(6), float32]) {
  %0 = split(%x, indices_or_sections=2); %1 = (%0.1, %x); (%1, %1, %0.0)
}
)");
}

TEST(EliminateCommonSubexpr, MergesLetValuesButKeepsTheLets) {
  expect_cse(R"(
def @main(%x: Tensor[(2), float32]) { let %a = exp(%x); let %b = exp(%x); add(%a, %b) }
)",
             R"(
def @main(%x: Tensor[(2), float32]) { %0 = exp(%x); let %a = %0; let %b = %0; add(%a, %b) }
)");
}

TEST(EliminateCommonSubexpr, LeavesCallsOfFunctionsAlone) {
  expect_unchanged(R"(
def @f(%y: Tensor[(2), float32]) { random.uniform(shape=[2]) }
def @main(%x: Tensor[(2), float32]) { add(@f(%x), @f(%x)) }
)");
}

TEST(EliminateCommonSubexpr, KeepsTheSourcesOfWhatItKeepsAndRebuilds) {
  Var x = make_var("x", tensor_type({2}, DType::kFloat32));
  Expr first, second, sum;
  {
    SourceScope scope("relu_1");
    first = call_op("nn.relu", {x});
  }
  {
    SourceScope scope("relu_2");
    second = call_op("nn.relu", {x});
  }
  {
    SourceScope scope("sum");
    sum = call_op("add", {first, second});
  }
  IRModule mod;
  mod.add("main", make_function({x}, sum));
  IRModule result = run_passes(mod, {"EliminateCommonSubexpr"});  // owns the rebuilt nodes
  const auto* out = as<CallNode>(result.lookup("main")->body);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->source, "sum");
  EXPECT_EQ(out->args.at(0), first);
  EXPECT_EQ(out->args.at(1), first);
}

TEST(EliminateCommonSubexpr, HandlesFiftyThousandNodeChains) {
  // Two equal 25,000-call chains: one remains, and the adds of the results merge too.
  Var x = make_var("x", tensor_type({2}, DType::kFloat32));
  Expr a = x, b = x;
  for (int i = 0; i < 25000; ++i) {
    a = call_op(i % 2 ? "add" : "multiply", {a, x});
    b = call_op(i % 2 ? "add" : "multiply", {b, x});
  }
  IRModule mod;
  mod.add("main", make_function({x}, call_op("subtract", {a, b})));
  IRModule out = run_passes(mod, {"EliminateCommonSubexpr"});
  EXPECT_EQ(distinct_nodes(out.lookup("main"), ExprKind::kCall), 25001u);
  // Nothing left to merge: the same nodes come back.
  IRModule again = run_passes(out, {"EliminateCommonSubexpr"});
  EXPECT_EQ(again.lookup("main"), out.lookup("main"));
}

}  // namespace
}  // namespace kiln
