// FuseOps before/after, as IR text; the first two are the seed notes' examples.
#include <gtest/gtest.h>

#include "kiln/ir/visit.h"
#include "transform/pass_test_util.h"

namespace kiln {
namespace {

using testing::expect_pass_result;
using testing::run_pass;

// Primitive functions of @main, in order of appearance.
int count_primitives(const IRModule& m) {
  int n = 0;
  post_order_visit(m.lookup("main")->body, [&](const Expr& e) {
    if (const auto* f = as<FunctionNode>(e); f && f->is_primitive()) ++n;
  });
  return n;
}

TEST(FuseOps, FiveAddsAndExpBecomeOneFunctionAsInSeed) {
  expect_pass_result("FuseOps", R"(
def @main(%x: Tensor[(10, 20), float32]) {
  %0 = add(%x, %x); %1 = add(%0, %0); %2 = add(%1, %1); %3 = add(%2, %2); %4 = add(%3, %3); exp(%4)
})",
                     R"(
def @main(%x: Tensor[(10, 20), float32]) -> Tensor[(10, 20), float32] {
  %5 = fn (%p0: Tensor[(10, 20), float32], Primitive=1) -> Tensor[(10, 20), float32] {
    %0 = add(%p0, %p0); %1 = add(%0, %0); %2 = add(%1, %1); %3 = add(%2, %2); %4 = add(%3, %3); exp(%4)
  };
  %5(%x)
})");
}

TEST(FuseOps, ReductionEndsAGroupAsInSeed) {
  expect_pass_result("FuseOps", R"(
def @main(%x: Tensor[(20, 20), float32]) {
  %0 = add(%x, %x); %1 = add(%0, %0); %2 = sum(%1, axis=[-1]); add(%2, %2)
})",
                     R"(
def @main(%x: Tensor[(20, 20), float32]) -> Tensor[(20), float32] {
  %2 = fn (%p01: Tensor[(20, 20), float32], Primitive=1) -> Tensor[(20), float32] {
    %0 = add(%p01, %p01); %1 = add(%0, %0); sum(%1, axis=[-1])
  };
  %3 = %2(%x);
  %4 = fn (%p0: Tensor[(20), float32], Primitive=1) -> Tensor[(20), float32] { add(%p0, %p0) };
  %4(%3)
})");
}

TEST(FuseOps, ConvAbsorbsBiasAndReluButNotTheNextConv) {
  // conv2d is out-elemwise-fusable: bias_add and relu join it; the next conv2d starts a group.
  const std::string before = R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4), float32],
          %w2: Tensor[(4, 4, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = nn.bias_add(%0, %b);
  %2 = nn.relu(%1);
  nn.conv2d(%2, %w2)
})";
  expect_pass_result("FuseOps", before, R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4), float32],
          %w2: Tensor[(4, 4, 1, 1), float32]) -> Tensor[(1, 4, 8, 8), float32] {
  %2 = fn (%p0: Tensor[(1, 3, 8, 8), float32], %p1: Tensor[(4, 3, 3, 3), float32], %p2: Tensor[(4), float32],
           Primitive=1) -> Tensor[(1, 4, 8, 8), float32] {
    %0 = nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1]);
    %1 = nn.bias_add(%0, %p2);
    nn.relu(%1)
  };
  %3 = %2(%x, %w, %b);
  %4 = fn (%p01: Tensor[(1, 4, 8, 8), float32], %p11: Tensor[(4, 4, 1, 1), float32], Primitive=1)
           -> Tensor[(1, 4, 8, 8), float32] {
    nn.conv2d(%p01, %p11)
  };
  %4(%3, %w2)
})");
  IRModule once = run_pass("FuseOps", before);
  expect_pass_result("FuseOps", print_module(once), print_module(once));  // idempotent
}

TEST(FuseOps, DiamondFusesIntoItsPostDominator) {
  // exp and log both feed the add, which post-dominates them: one kernel.
  IRModule m = run_pass("FuseOps", R"(
def @main(%x: Tensor[(4), float32]) { %0 = exp(%x); %1 = log(%x); %2 = negative(%0); add(%2, %1) })");
  EXPECT_EQ(count_primitives(m), 1);
}

TEST(FuseOps, ValueFeedingAReductionAndAnotherBranchStaysAlone) {
  // exp feeds a reduction and an elementwise branch that meet again at the add: a
  // reduction may not sit inside a group, so exp, sum and negative+add are three kernels.
  IRModule m = run_pass("FuseOps", R"(
def @main(%x: Tensor[(4, 4), float32]) {
  %0 = exp(%x); %1 = sum(%0, axis=[1], keepdims=True); %2 = negative(%0); add(%1, %2)
})");
  EXPECT_EQ(count_primitives(m), 3);
}

TEST(FuseOps, SliceFieldJoinsTheConcatenationsGroup) {
  // ShuffleNetV2's unit: a channel slice goes straight into the concatenation (and the
  // shuffle after it), the other half through a conv. The slice joins the concatenation's
  // group instead of being a copy of its own.
  IRModule m = run_pass("FuseOps", R"(
def @main(%x: Tensor[(1, 8, 4, 4), float32], %w: Tensor[(4, 4, 1, 1), float32]) {
  %0 = strided_slice(%x, begin=[0], end=[4], axes=[1]);
  %1 = strided_slice(%x, begin=[4], end=[8], axes=[1]);
  %2 = nn.conv2d(%1, %w);
  %3 = (%0, %2);
  %4 = concatenate(%3, axis=1);
  %5 = reshape(%4, newshape=[1, 2, 4, 4, 4]);
  %6 = transpose(%5, axes=[0, 2, 1, 3, 4]);
  reshape(%6, newshape=[1, -1, 4, 4])
})");
  EXPECT_EQ(count_primitives(m), 3);  // the second slice, the conv, slice + concatenate + shuffle
  const std::string printed = print_module(m);
  const size_t slice = printed.find("begin=[0]"), concatenate = printed.find("concatenate(");
  ASSERT_NE(slice, std::string::npos);
  EXPECT_EQ(printed.rfind("Primitive=1", slice), printed.rfind("Primitive=1", concatenate)) << printed;
}

TEST(FuseOps, InterpolationFieldStaysOutOfTheConcatenation) {
  // U-Net's skip connection: a resize computes each element; inside the concatenation's loop
  // it would be recomputed there without its own schedule, so it stays a kernel of its own.
  IRModule m = run_pass("FuseOps", R"(
def @main(%x: Tensor[(1, 4, 4, 4), float32], %y: Tensor[(1, 4, 8, 8), float32]) {
  %0 = image.resize2d(%x, size=[8, 8], method="linear");
  %1 = (%0, %y);
  concatenate(%1, axis=1)
})");
  EXPECT_EQ(count_primitives(m), 2);
}

TEST(FuseOps, LevelZeroPutsEachOpInItsOwnFunction) {
  IRModule m = fuse_ops_pass(parse_module(R"(
def @main(%x: Tensor[(10, 20), float32]) {
  %0 = add(%x, %x); %1 = add(%0, %0); %2 = add(%1, %1); %3 = add(%2, %2); %4 = add(%3, %3); exp(%4)
})"),
                             /*fuse=*/false);
  EXPECT_EQ(count_primitives(m), 6);
}

TEST(FuseOps, ScalarConstantsStayInsideTensorConstantsBecomeParameters) {
  expect_pass_result("FuseOps", R"(
def @main(%x: Tensor[(2), float32]) { %0 = add(%x, 1f); multiply(%0, meta[relay.Constant][0]) }
#[metadata]
{"relay.Constant": [{"dtype":"float32","shape":[2],"data":"AACAPwAAAEA="}]}
)",
                     R"(
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %1 = fn (%p0: Tensor[(2), float32], %p1: Tensor[(2), float32], Primitive=1) -> Tensor[(2), float32] {
    %0 = add(%p0, 1f); multiply(%0, %p1)
  };
  %1(%x, meta[relay.Constant][0])
}
#[metadata]
{"relay.Constant": [{"dtype":"float32","shape":[2],"data":"AACAPwAAAEA="}]}
)");
}

TEST(FuseOps, FiftyThousandNodeChainFuses) {
  std::string text = "def @main(%x: Tensor[(2), float32]) {\n  %0 = add(%x, %x);\n";
  for (int i = 1; i < 50000; ++i) text += "  %" + std::to_string(i) + " = exp(%" + std::to_string(i - 1) + ");\n";
  text += "  %49999\n}\n";
  IRModule m = run_pass("FuseOps", text);
  // Groups are capped at 256 ops.
  EXPECT_EQ(count_primitives(m), (50000 + 255) / 256);
}

}  // namespace
}  // namespace kiln
