// Before/after IR tests for DeadCodeElimination. Results are compared as printed text, which
// also shows which nodes are shared.
#include <gtest/gtest.h>

#include <string>

#include "ir/text_test_util.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/transform/pass.h"
#include "transform/pass_test_util.h"

namespace kiln {
namespace {

void expect_dce(const std::string& before, const std::string& after) {
  testing::expect_pass_prints("DeadCodeElimination", before, after);
}

void expect_unchanged(const std::string& text) { expect_dce(text, text); }

TEST(DeadCodeElimination, DropsUnusedLetsAndWhatOnlyTheyUsed) {
  expect_dce(R"(
def @main(%x: Tensor[(2), float32]) { let %a = exp(%x); let %b = add(%a, %a); nn.relu(%x) }
)",
             R"(
def @main(%x: Tensor[(2), float32]) { nn.relu(%x) }
)");
}

TEST(DeadCodeElimination, KeepsUsedLets) {
  expect_dce(R"(
def @main(%x: Tensor[(2), float32]) { let %a = exp(%x); let %b = log(%x); let %c = add(%a, %x); multiply(%c, %c) }
)",
             R"(
def @main(%x: Tensor[(2), float32]) { let %a = exp(%x); let %c = add(%a, %x); multiply(%c, %c) }
)");
  expect_unchanged(R"(
def @main(%x: Tensor[(2), float32]) { let %a = exp(%x); add(%a, %x) }
)");
}

TEST(DeadCodeElimination, DropsUnusedBindingsInsideNestedFunctions) {
  expect_dce(R"(
def @main(%x: Tensor[(2), float32]) {
  %0 = fn (%y: Tensor[(2), float32]) { let %z = exp(%y); let %w = tanh(%y); add(%w, %y) };
  %0(%x)
}
)",
             R"(
def @main(%x: Tensor[(2), float32]) {
  %0 = fn (%y: Tensor[(2), float32]) { let %w = tanh(%y); add(%w, %y) };
  %0(%x)
}
)");
}

TEST(DeadCodeElimination, DropsUnusedLetBoundFunctionsAndEveryGlobalFunctionIsCleaned) {
  expect_dce(R"(
def @f(%y: Tensor[(2), float32]) { let %unused = sigmoid(%y); %y }
def @main(%x: Tensor[(2), float32]) { let %g = fn (%y: Tensor[(2), float32]) { exp(%y) }; @f(%x) }
)",
             R"(
def @f(%y: Tensor[(2), float32]) { %y }
def @main(%x: Tensor[(2), float32]) { @f(%x) }
)");
}

TEST(DeadCodeElimination, ProjectsTuplesBuiltInPlace) {
  expect_dce(R"(
def @main(%x: Tensor[(2), float32]) { %0 = exp(%x); %1 = (%0, log(%x)); %2 = %1.1; %3 = ((%2, %0), %x); %4 = %3.0; add(%4.1, %2) }
)",
             R"(
def @main(%x: Tensor[(2), float32]) { %0 = exp(%x); %1 = log(%x); add(%0, %1) }
)");
}

TEST(DeadCodeElimination, LeavesProjectionsOfTuplesItDoesNotSeeBuilt) {
  expect_unchanged(R"(
def @main(%x: Tensor[(2), float32]) { let %t = (exp(%x), %x); %t.0 }
)");
  expect_unchanged(R"(
def @main(%x: Tensor[(6), float32]) { %0 = split(%x, indices_or_sections=2); %0.1 }
)");
}

TEST(DeadCodeElimination, TakesTheBranchOfAConstantCondition) {
  expect_dce(R"(
def @main(%x: Tensor[(2), float32]) { %0 = if (True) { exp(%x) } else { log(%x) }; %1 = if (False) { exp(%x) } else { tanh(%x) }; add(%0, %1) }
)",
             R"(
def @main(%x: Tensor[(2), float32]) { add(exp(%x), tanh(%x)) }
)");
}

TEST(DeadCodeElimination, LeavesIfWithAConditionKnownOnlyAtRunTime) {
  expect_unchanged(R"(
def @main(%c: bool, %x: Tensor[(2), float32]) { if (%c) { exp(%x) } else { log(%x) } }
)");
}

TEST(DeadCodeElimination, DropsLetsUsedOnlyInTheBranchNotTaken) {
  expect_dce(R"(
def @main(%x: Tensor[(2), float32]) { let %a = exp(%x); let %b = tanh(%x); if (False) { %a } else { %b } }
)",
             R"(
def @main(%x: Tensor[(2), float32]) { let %b = tanh(%x); %b }
)");
}

// Each draw has a generator of its own: an unused one changes no other value.
TEST(DeadCodeElimination, DropsUnusedRandomDrawsAndKeepsUsedOnes) {
  expect_dce(R"(
def @main(%x: Tensor[(2), float32]) {
  let %r = random.uniform(shape=[2], seed=1); let %s = random.normal(shape=[2], seed=2); add(%x, %s)
}
)",
             R"(
def @main(%x: Tensor[(2), float32]) { let %s = random.normal(shape=[2], seed=2); add(%x, %s) }
)");
}

TEST(DeadCodeElimination, KeepsVariablesUsedBeforeTheirLetIsReached) {
  // The value of %b uses %a: %a is live only through %b, which is live through the body.
  expect_unchanged(R"(
def @main(%x: Tensor[(2), float32]) { let %a = exp(%x); let %b = add(%a, %x); %0 = (%b, %b); %0 }
)");
}

TEST(DeadCodeElimination, KeepsTheSourcesOfWhatItRebuilds) {
  Var x = make_var("x", tensor_type({2}, DType::kFloat32));
  Expr e, sum;
  {
    SourceScope scope("exp_node");
    e = call_op("exp", {x});
  }
  {
    SourceScope scope("sum");
    sum = call_op("add", {make_tuple_get_item(make_tuple({e, x}), 0), x});
  }
  IRModule mod;
  mod.add("main", make_function({x}, sum));
  IRModule result = run_passes(mod, {"DeadCodeElimination"});  // owns the rebuilt nodes
  const auto* out = as<CallNode>(result.lookup("main")->body);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->source, "sum");
  EXPECT_EQ(out->args.at(0), e);
}

Expr let_chain(int n, bool used, Var* x_out) {
  Var x = make_var("x", tensor_type({2}, DType::kFloat32));
  *x_out = x;
  std::vector<std::pair<Var, Expr>> lets;
  Expr prev = x;
  for (int i = 0; i < n; ++i) {
    Var v = make_var("v" + std::to_string(i));
    lets.emplace_back(v, call_op("add", {prev, x}));
    prev = v;
  }
  Expr body = used ? prev : Expr(call_op("exp", {x}));
  for (auto it = lets.rbegin(); it != lets.rend(); ++it) body = make_let(it->first, it->second, body);
  return body;
}

TEST(DeadCodeElimination, HandlesFiftyThousandLetsWithoutRecursion) {
  Var x;
  Expr body = let_chain(50000, false, &x);
  IRModule dead;
  dead.add("main", make_function({x}, body));
  IRModule out = run_passes(dead, {"DeadCodeElimination"});
  EXPECT_EQ(testing::squash(print_module(out)), "def @main(%x: Tensor[(2), float32]) { exp(%x) }");
  body = let_chain(50000, true, &x);
  IRModule live;
  live.add("main", make_function({x}, body));
  out = run_passes(live, {"DeadCodeElimination"});
  EXPECT_EQ(out.lookup("main"), live.lookup("main"));  // nothing to drop: the same nodes
}

}  // namespace
}  // namespace kiln
