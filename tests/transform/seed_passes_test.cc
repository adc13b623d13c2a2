// Before/after IR tests for the passes of the seed notes (Relay's transform examples).
#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/structural.h"
#include "kiln/ir/type_infer.h"
#include "kiln/transform/pass.h"
#include "transform/pass_test_util.h"

namespace kiln {
namespace {

// Collapses every run of whitespace to one space and trims both ends.
std::string squash(const std::string& text) {
  std::string out;
  bool pending_space = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

using testing::expect_pass_result;

IRModule run(const std::string& pass, const std::string& before) { return testing::run_pass(pass, before); }

TEST(RemoveUnusedFunctions, DropsUnreachableFunctionsAsInSeed) {
  expect_pass_result("RemoveUnusedFunctions", R"(
def @fn1(%x: Tensor[(1, 1000), float32]) { %x }
def @fn2(%y: Tensor[(1, 1000), float32]) { %y }
def @main(%z: Tensor[(1, 1000), float32]) { %0 = @fn1(%z); add(%z, %0) }
)",
                     R"(
def @fn1(%x: Tensor[(1, 1000), float32]) { %x }
def @main(%z: Tensor[(1, 1000), float32]) { %0 = @fn1(%z); add(%z, %0) }
)");
}

TEST(RemoveUnusedFunctions, KeepsFunctionsReachedThroughOtherFunctions) {
  IRModule m = run("RemoveUnusedFunctions", R"(
def @leaf(%x: Tensor[(2), float32]) { exp(%x) }
def @mid(%x: Tensor[(2), float32]) { @leaf(%x) }
def @unused(%x: Tensor[(2), float32]) { @leaf(%x) }
def @main(%x: Tensor[(2), float32]) { @mid(%x) }
)");
  EXPECT_EQ(m.names(), (std::vector<std::string>{"leaf", "mid", "main"}));
}

TEST(Inline, InlinesFunctionsMarkedInlineAsInSeed) {
  expect_pass_result("Inline", R"(
def @g1(%x1: Tensor[(1, 10), float32], Inline=1) { %x1 }
def @g2(%x2: Tensor[(1, 10), float32]) { %x2 }
def @main(%p0: Tensor[(1, 10), float32]) { %0 = @g1(%p0); %1 = @g2(%p0); add(%0, %1) }
)",
                     R"(
def @g2(%x2: Tensor[(1, 10), float32]) { %x2 }
def @main(%p0: Tensor[(1, 10), float32]) { %0 = @g2(%p0); add(%p0, %0) }
)");
}

TEST(Inline, InlinesNestedInlineCallsWithArgumentsSubstituted) {
  expect_pass_result("Inline", R"(
def @square(%a: Tensor[(3), float32], Inline=1) { multiply(%a, %a) }
def @quad(%b: Tensor[(3), float32], Inline=1) { %0 = @square(%b); @square(%0) }
def @main(%x: Tensor[(3), float32]) { %0 = exp(%x); @quad(%0) }
)",
                     R"(
def @main(%x: Tensor[(3), float32]) { %0 = exp(%x); %1 = multiply(%0, %0); multiply(%1, %1) }
)");
}

TEST(Inline, LeavesRecursiveFunctionsAlone) {
  std::string text = R"(
def @loop(%i: int32, Inline=1) -> int32 {
  %0 = less(%i, 10);
  if (%0) { %1 = add(%i, 1); @loop(%1) } else { %i }
}
def @main(%x: int32) -> int32 { @loop(%x) }
)";
  EXPECT_TRUE(structural_equal(run("Inline", text), parse_module(text)));
}

TEST(SimplifyInference, UnpacksBatchNormAndDropsDropoutAsInSeed) {
  expect_pass_result("SimplifyInference", R"(
def @main(%x: Tensor[(1, 10), float32], %x1: Tensor[(10), float32], %y: Tensor[(10), float32],
          %a: Tensor[(10), float32], %b: Tensor[(10), float32]) {
  %0 = nn.batch_norm(%x, %x1, %y, %a, %b); %1 = %0.0; %2 = nn.dropout(%1); %2.0
}
)",
                     R"(
def @main(%x: Tensor[(1, 10), float32], %x1: Tensor[(10), float32], %y: Tensor[(10), float32],
          %a: Tensor[(10), float32], %b: Tensor[(10), float32]) -> Tensor[(1, 10), float32] {
  %0 = add(%b, 1e-05f); %1 = sqrt(%0); %2 = divide(1f, %1); %3 = multiply(%2, %x1);
  %4 = negative(%a); %5 = multiply(%4, %3); %6 = multiply(%x, %3); %7 = add(%5, %y); add(%6, %7)
}
)");
}

TEST(SimplifyInference, BroadcastsScaleAlongChannelAxisOfImages) {
  expect_pass_result("SimplifyInference", R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %be: Tensor[(2), float32],
          %m: Tensor[(2), float32], %v: Tensor[(2), float32]) {
  %0 = nn.batch_norm(%x, %g, %be, %m, %v, epsilon=0.001f, center=False); %0.0
}
)",
                     R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %be: Tensor[(2), float32],
          %m: Tensor[(2), float32], %v: Tensor[(2), float32]) {
  %0 = add(%v, 0.001f); %1 = sqrt(%0); %2 = divide(1f, %1); %3 = multiply(%2, %g);
  %4 = expand_dims(%3, axis=1, num_newaxis=2); %5 = multiply(%x, %4);
  %6 = negative(%m); %7 = multiply(%6, %3); %8 = expand_dims(%7, axis=1, num_newaxis=2); add(%5, %8)
}
)");
}

// DenseNet's pattern: a batch norm reads a concatenation that contains another batch norm's
// result, so its data is a node the rewrite has just rebuilt (and not yet typed).
TEST(SimplifyInference, UnpacksBatchNormOfConcatenatedBatchNorm) {
  expect_pass_result("SimplifyInference", R"(
def @main(%x: Tensor[(1, 2), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32],
          %g2: Tensor[(4), float32], %b2: Tensor[(4), float32]) {
  %0 = nn.batch_norm(%x, %g, %b, %b, %g); %1 = (%0.0, %x); %2 = concatenate(%1, axis=1);
  %3 = nn.batch_norm(%2, %g2, %b2, %b2, %g2, scale=False, center=False); %3.0
}
)",
                     R"(
def @main(%x: Tensor[(1, 2), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32],
          %g2: Tensor[(4), float32], %b2: Tensor[(4), float32]) {
  %0 = add(%g, 1e-05f); %1 = sqrt(%0); %2 = divide(1f, %1); %3 = multiply(%2, %g);
  %4 = multiply(%x, %3); %5 = negative(%b); %6 = multiply(%5, %3); %7 = add(%6, %b); %8 = add(%4, %7);
  %9 = (%8, %x); %10 = concatenate(%9, axis=1);
  %11 = add(%g2, 1e-05f); %12 = sqrt(%11); %13 = divide(1f, %12); %14 = multiply(%10, %13);
  %15 = negative(%b2); %16 = multiply(%15, %13); add(%14, %16)
}
)");
}

TEST(InferType, AnnotatesEveryBindingWithItsType) {
  IRModule m = run("InferType", R"(
def @main(%x: Tensor[(1, 10), float32], %w: Tensor[(2, 10), float32]) {
  %0 = nn.dense(%x, %w); nn.relu(%0)
}
)");
  EXPECT_EQ(squash(print_module(m)), squash(R"(
def @main(%x: Tensor[(1, 10), float32], %w: Tensor[(2, 10), float32]) -> Tensor[(1, 2), float32] {
  %0 = nn.dense(%x, %w) /* ty=Tensor[(1, 2), float32] */;
  nn.relu(%0) /* ty=Tensor[(1, 2), float32] */
}
)"));
}

TEST(InferType, ReportsFunctionOpAndBothShapesOnMismatch) {
  try {
    run("InferType", "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(4, 3), float32]) { add(%x, %y) }");
    FAIL() << "expected a type error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("@main"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'add'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(2, 3)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(4, 3)"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace kiln
