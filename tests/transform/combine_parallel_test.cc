// CombineParallelConv2D, CombineParallelDense and CombineParallelBatchMatmul: the seed notes'
// examples (min_num_branches=2 as there) before and after, follow-on ops joined level by level,
// the groups that must stay apart, the options, the passes in build()'s -O 3 pipeline, and
// agreement of the interpreter before and after on random modules of parallel branches.
#include <gtest/gtest.h>

#include <random>

#include "kiln/backend/build.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/op.h"
#include "kiln/ir/visit.h"
#include "transform/pass_test_util.h"

namespace kiln::testing {
namespace {

IRModule run_with_options(const std::string& pass, const std::string& before, Attrs options) {
  PassContext ctx;
  ctx.options[pass] = std::move(options);
  return run_passes(parse_module(before), {pass}, ctx);
}

void expect_result(const IRModule& got, const std::string& after) {
  IRModule want = parse_module(after);
  EXPECT_TRUE(structural_equal(got, want)) << "got:\n" << print_module(got) << "\nwant:\n" << print_module(want);
}

// `pass` with its options leaves `before` as it is.
void expect_unchanged(const std::string& pass, const std::string& before, Attrs options) {
  expect_result(run_with_options(pass, before, std::move(options)), before);
}

void expect_close_values(const std::vector<NDArray>& want, const std::vector<NDArray>& got, const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(want[i].shape(), got[i].shape()) << what << ", output " << i;
    for (int64_t k = 0; k < want[i].numel(); ++k)
      ASSERT_NEAR(want[i].at(k), got[i].at(k), 1e-5 + 1e-5 * std::abs(want[i].at(k))) << what << ", output " << i;
  }
}

size_t count_calls(const IRModule& mod, const std::string& op) {
  size_t n = 0;
  post_order_visit(mod.lookup("main"), [&](const Expr& e) {
    const auto* call = as<CallNode>(e);
    n += call && call->op() && call->op()->name == op;
  });
  return n;
}

const Attrs kTwoBranches{{"min_num_branches", 2}};

// The seed's CombineParallelConv2D example: two 1x1 convolutions of %x become one of 8
// channels, each the slice of its 4; the max_pool2d of %x is not a convolution and stays.
const std::string kConvBefore = R"(
def @main(%x: Tensor[(1, 4, 16, 16), float32], %w1: Tensor[(4, 4, 1, 1), float32], %w2: Tensor[(4, 4, 1, 1), float32]) -> (Tensor[(1, 4, 16, 16), float32], Tensor[(1, 4, 16, 16), float32], Tensor[(1, 4, 16, 16), float32]) { %0 = nn.conv2d(%x, %w1, padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 4, 16, 16), float32] */; %1 = nn.conv2d(%x, %w2, padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 4, 16, 16), float32] */; %2 = nn.max_pool2d(%x, pool_size=[1, 1], padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 4, 16, 16), float32] */; (%0, %1, %2) }
)";
const std::string kConvAfter = R"(
def @main(%x: Tensor[(1, 4, 16, 16), float32], %w1: Tensor[(4, 4, 1, 1), float32], %w2: Tensor[(4, 4, 1, 1), float32]) -> (Tensor[(1, 4, 16, 16), float32], Tensor[(1, 4, 16, 16), float32], Tensor[(1, 4, 16, 16), float32]) { %0 = (%w1, %w2); %1 = concatenate(%0) /* ty=Tensor[(8, 4, 1, 1), float32] */; %2 = nn.conv2d(%x, %1, padding=[0, 0, 0, 0], channels=8) /* ty=Tensor[(1, 8, 16, 16), float32] */; %3 = strided_slice(%2, begin=[0, 0], end=[-1, 4], strides=[1, 1], slice_mode="size") /* ty=Tensor[(1, 4, 16, 16), float32] */; %4 = strided_slice(%2, begin=[0, 4], end=[-1, 4], strides=[1, 1], slice_mode="size") /* ty=Tensor[(1, 4, 16, 16), float32] */; %5 = nn.max_pool2d(%x, pool_size=[1, 1], padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 4, 16, 16), float32] */; (%3, %4, %5) }
)";

// The seed's CombineParallelDense example: two (3, 4) x (5, 4)^T denses become one
// batch_matmul of the stacked inputs and weights, split and squeezed.
const std::string kDenseBefore = R"(
fn (%x: Tensor[(3, 4), float32], %w1: Tensor[(5, 4), float32], %w2: Tensor[(5, 4), float32]) { %0 = nn.dense(%x, %w1, units=None); %1 = nn.dense(%x, %w2, units=None); (%0, %1) }
)";
const std::string kDenseAfter = R"(
fn (%x: Tensor[(3, 4), float32], %w1: Tensor[(5, 4), float32], %w2: Tensor[(5, 4), float32]) -> (Tensor[(3, 5), float32], Tensor[(3, 5), float32]) { %0 = (%x, %x); %1 = (%w1, %w2); %2 = stack(%0) /* ty=Tensor[(2, 3, 4), float32] */; %3 = stack(%1) /* ty=Tensor[(2, 5, 4), float32] */; %4 = nn.batch_matmul(%2, %3, transpose_b=True) /* ty=Tensor[(2, 3, 5), float32] */; %5 = split(%4, indices_or_sections=2) /* ty=(Tensor[(1, 3, 5), float32], Tensor[(1, 3, 5), float32]) */; %6 = %5.0; %7 = %5.1; %8 = squeeze(%6, axis=[0]) /* ty=Tensor[(3, 5), float32] */; %9 = squeeze(%7, axis=[0]) /* ty=Tensor[(3, 5), float32] */; (%8, %9) }
)";

TEST(CombineParallelConv2D, SeedExample) {
  expect_result(run_with_options("CombineParallelConv2D", kConvBefore, kTwoBranches), kConvAfter);
  expect_result(combine_parallel_conv2d_pass(parse_module(kConvBefore), 2), kConvAfter);
}

TEST(CombineParallelConv2D, FewerBranchesThanMinNumBranches) {
  // Relay's default is 3 branches.
  expect_pass_result("CombineParallelConv2D", kConvBefore, kConvBefore);
  expect_unchanged("CombineParallelConv2D", kConvBefore, {{"min_num_branches", 3}});
}

TEST(CombineParallelConv2D, DifferentKernelSizesStayApart) {
  const std::string before = R"(
def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(4, 4, 1, 1), float32], %w2: Tensor[(4, 4, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w1);
  %1 = nn.conv2d(%x, %w2, padding=[1, 1, 1, 1]);
  (%0, %1)
})";
  expect_unchanged("CombineParallelConv2D", before, kTwoBranches);
}

TEST(CombineParallelConv2D, DifferentWindowsOrGroupsStayApart) {
  const std::string strides = R"(
def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(4, 4, 1, 1), float32], %w2: Tensor[(4, 4, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, strides=[2, 2]);
  %1 = nn.conv2d(%x, %w2);
  (%0, %1)
})";
  expect_unchanged("CombineParallelConv2D", strides, kTwoBranches);
  const std::string grouped = R"(
def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(4, 2, 1, 1), float32], %w2: Tensor[(4, 2, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, groups=2);
  %1 = nn.conv2d(%x, %w2, groups=2);
  (%0, %1)
})";
  expect_unchanged("CombineParallelConv2D", grouped, kTwoBranches);
}

// Strides written [2] and [2, 2] are the same window.
TEST(CombineParallelConv2D, EqualWindowsWrittenDifferently) {
  const std::string before = R"(
def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(4, 4, 1, 1), float32], %w2: Tensor[(2, 4, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, strides=[2]);
  %1 = nn.conv2d(%x, %w2, strides=[2, 2]);
  (%0, %1)
})";
  const std::string after = R"(
def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(4, 4, 1, 1), float32], %w2: Tensor[(2, 4, 1, 1), float32]) {
  %0 = (%w1, %w2);
  %1 = concatenate(%0);
  %2 = nn.conv2d(%x, %1, strides=[2], channels=6);
  %3 = strided_slice(%2, begin=[0, 0], end=[-1, 4], strides=[1, 1], slice_mode="size");
  %4 = strided_slice(%2, begin=[0, 4], end=[-1, 2], strides=[1, 1], slice_mode="size");
  (%3, %4)
})";
  expect_result(run_with_options("CombineParallelConv2D", before, kTwoBranches), after);
}

// bias_add, relu and a per-channel multiply follow each convolution: joined while every branch
// has the same call there; the third branch multiplies with its operands swapped, so the
// multiplies stay on the slices.
TEST(CombineParallelConv2D, FollowOnOpsJoinedLevelByLevel) {
  const std::string params =
      "%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(4, 4, 3, 3), float32], %w2: Tensor[(8, 4, 3, 3), float32], "
      "%w3: Tensor[(2, 4, 3, 3), float32], %b1: Tensor[(4), float32], %b2: Tensor[(8), float32], %b3: Tensor[(2), "
      "float32], %s1: Tensor[(4, 1, 1), float32], %s2: Tensor[(8, 1, 1), float32], %s3: Tensor[(2, 1, 1), float32]";
  const std::string branches = R"(
  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]); %1 = nn.bias_add(%0, %b1); %2 = nn.relu(%1); %3 = multiply(%2, %s1);
  %4 = nn.conv2d(%x, %w2, padding=[1, 1, 1, 1]); %5 = nn.bias_add(%4, %b2); %6 = nn.relu(%5); %7 = multiply(%6, %s2);
  %8 = nn.conv2d(%x, %w3, padding=[1, 1, 1, 1]); %9 = nn.bias_add(%8, %b3); %10 = nn.relu(%9);)";
  const std::string swapped = "def @main(" + params + ") {" + branches + " %11 = multiply(%s3, %10); (%3, %7, %11) }";
  const std::string joined_to_relu = "def @main(" + params + R"() {
  %0 = (%w1, %w2, %w3); %1 = concatenate(%0); %2 = nn.conv2d(%x, %1, padding=[1, 1, 1, 1], channels=14);
  %3 = (%b1, %b2, %b3); %4 = concatenate(%3); %5 = nn.bias_add(%2, %4); %6 = nn.relu(%5);
  %7 = strided_slice(%6, begin=[0, 0], end=[-1, 4], strides=[1, 1], slice_mode="size");
  %8 = strided_slice(%6, begin=[0, 4], end=[-1, 8], strides=[1, 1], slice_mode="size");
  %9 = strided_slice(%6, begin=[0, 12], end=[-1, 2], strides=[1, 1], slice_mode="size");
  (multiply(%7, %s1), multiply(%8, %s2), multiply(%s3, %9))
})";
  expect_pass_result("CombineParallelConv2D", swapped, joined_to_relu);

  const std::string aligned = "def @main(" + params + ") {" + branches + " %11 = multiply(%10, %s3); (%3, %7, %11) }";
  const std::string joined_all = "def @main(" + params + R"() {
  %0 = (%w1, %w2, %w3); %1 = concatenate(%0); %2 = nn.conv2d(%x, %1, padding=[1, 1, 1, 1], channels=14);
  %3 = (%b1, %b2, %b3); %4 = concatenate(%3); %5 = nn.bias_add(%2, %4); %6 = nn.relu(%5);
  %7 = (%s1, %s2, %s3); %8 = concatenate(%7); %9 = multiply(%6, %8);
  (strided_slice(%9, begin=[0, 0], end=[-1, 4], strides=[1, 1], slice_mode="size"),
   strided_slice(%9, begin=[0, 4], end=[-1, 8], strides=[1, 1], slice_mode="size"),
   strided_slice(%9, begin=[0, 12], end=[-1, 2], strides=[1, 1], slice_mode="size"))
})";
  expect_pass_result("CombineParallelConv2D", aligned, joined_all);
}

// A follow-on call that broadcasts its branch to a larger shape, or adds a value that is not
// per channel, ends the joined part.
TEST(CombineParallelConv2D, FollowOnOpsThatDoNotLineUpStayOnTheSlices) {
  const std::string before = R"(
def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(4, 4, 1, 1), float32], %w2: Tensor[(4, 4, 1, 1), float32], %y: Tensor[(8), float32]) {
  %0 = nn.conv2d(%x, %w1); %1 = add(%0, %y);
  %2 = nn.conv2d(%x, %w2); %3 = add(%2, %y);
  (%1, %3)
})";
  const std::string after = R"(
def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(4, 4, 1, 1), float32], %w2: Tensor[(4, 4, 1, 1), float32], %y: Tensor[(8), float32]) {
  %0 = (%w1, %w2); %1 = concatenate(%0); %2 = nn.conv2d(%x, %1, channels=8);
  %3 = strided_slice(%2, begin=[0, 0], end=[-1, 4], strides=[1, 1], slice_mode="size");
  %4 = strided_slice(%2, begin=[0, 4], end=[-1, 4], strides=[1, 1], slice_mode="size");
  (add(%3, %y), add(%4, %y))
})";
  expect_result(run_with_options("CombineParallelConv2D", before, kTwoBranches), after);
}

TEST(CombineParallelDense, SeedExample) {
  expect_result(run_with_options("CombineParallelDense", kDenseBefore, kTwoBranches), kDenseAfter);
  expect_result(combine_parallel_dense_pass(parse_module(kDenseBefore), 2), kDenseAfter);
  expect_pass_result("CombineParallelDense", kDenseBefore, kDenseBefore);
}

TEST(CombineParallelDense, ToDenseJoinsTheUnits) {
  const std::string after = R"(
fn (%x: Tensor[(3, 4), float32], %w1: Tensor[(5, 4), float32], %w2: Tensor[(5, 4), float32]) {
  %0 = (%w1, %w2); %1 = concatenate(%0); %2 = nn.dense(%x, %1, units=10);
  (strided_slice(%2, begin=[0, 0], end=[-1, 5], strides=[1, 1], slice_mode="size"),
   strided_slice(%2, begin=[0, 5], end=[-1, 5], strides=[1, 1], slice_mode="size"))
})";
  expect_result(run_with_options("CombineParallelDense", kDenseBefore, {{"min_num_branches", 2}, {"to_batch", false}}),
                after);
  expect_result(combine_parallel_dense_pass(parse_module(kDenseBefore), 2, false), after);
}

// Batched, a (units,) bias becomes (1, units) so that the stacked biases broadcast along the
// rows of each batch entry.
TEST(CombineParallelDense, FollowOnOpsStackedOrJoined) {
  const std::string before = R"(
def @main(%x: Tensor[(3, 4), float32], %w1: Tensor[(5, 4), float32], %w2: Tensor[(5, 4), float32], %b1: Tensor[(5), float32], %b2: Tensor[(5), float32]) {
  %0 = nn.dense(%x, %w1); %1 = add(%0, %b1); %2 = nn.relu(%1);
  %3 = nn.dense(%x, %w2); %4 = add(%3, %b2); %5 = nn.relu(%4);
  (%2, %5)
})";
  const std::string batched = R"(
def @main(%x: Tensor[(3, 4), float32], %w1: Tensor[(5, 4), float32], %w2: Tensor[(5, 4), float32], %b1: Tensor[(5), float32], %b2: Tensor[(5), float32]) {
  %0 = (%x, %x); %1 = (%w1, %w2);
  %2 = nn.batch_matmul(stack(%0), stack(%1), transpose_b=True);
  %3 = (expand_dims(%b1, axis=0), expand_dims(%b2, axis=0));
  %4 = nn.relu(add(%2, stack(%3)));
  %5 = split(%4, indices_or_sections=2);
  (squeeze(%5.0, axis=[0]), squeeze(%5.1, axis=[0]))
})";
  expect_result(run_with_options("CombineParallelDense", before, kTwoBranches), batched);
  const std::string joined = R"(
def @main(%x: Tensor[(3, 4), float32], %w1: Tensor[(5, 4), float32], %w2: Tensor[(5, 4), float32], %b1: Tensor[(5), float32], %b2: Tensor[(5), float32]) {
  %0 = (%w1, %w2); %1 = nn.dense(%x, concatenate(%0), units=10);
  %2 = (%b1, %b2); %3 = nn.relu(add(%1, concatenate(%2)));
  (strided_slice(%3, begin=[0, 0], end=[-1, 5], strides=[1, 1], slice_mode="size"),
   strided_slice(%3, begin=[0, 5], end=[-1, 5], strides=[1, 1], slice_mode="size"))
})";
  expect_result(run_with_options("CombineParallelDense", before, {{"min_num_branches", 2}, {"to_batch", false}}),
                joined);
}

TEST(CombineParallelDense, WeightsOfOtherShapesStayApartWhenBatched) {
  const std::string before = R"(
fn (%x: Tensor[(3, 4), float32], %w1: Tensor[(5, 4), float32], %w2: Tensor[(6, 4), float32]) { (nn.dense(%x, %w1), nn.dense(%x, %w2)) }
)";
  expect_unchanged("CombineParallelDense", before, kTwoBranches);
  // Joined along the units they need only the same input features.
  IRModule joined = run_with_options("CombineParallelDense", before, {{"min_num_branches", 2}, {"to_batch", false}});
  EXPECT_NE(print_module(joined).find("units=11"), std::string::npos) << print_module(joined);
}

const std::string kBatchMatmulBefore = R"(
fn (%x: Tensor[(2, 3, 4), float32], %y1: Tensor[(2, 5, 4), float32], %y2: Tensor[(2, 6, 4), float32], %y3: Tensor[(2, 7, 4), float32]) {
  (nn.batch_matmul(%x, %y1), nn.batch_matmul(%x, %y2), nn.batch_matmul(%x, %y3))
})";

TEST(CombineParallelBatchMatmul, JoinsAlongN) {
  const std::string after = R"(
fn (%x: Tensor[(2, 3, 4), float32], %y1: Tensor[(2, 5, 4), float32], %y2: Tensor[(2, 6, 4), float32], %y3: Tensor[(2, 7, 4), float32]) {
  %0 = (%y1, %y2, %y3); %1 = nn.batch_matmul(%x, concatenate(%0, axis=1));
  (strided_slice(%1, begin=[0, 0, 0], end=[-1, -1, 5], strides=[1, 1, 1], slice_mode="size"),
   strided_slice(%1, begin=[0, 0, 5], end=[-1, -1, 6], strides=[1, 1, 1], slice_mode="size"),
   strided_slice(%1, begin=[0, 0, 11], end=[-1, -1, 7], strides=[1, 1, 1], slice_mode="size"))
})";
  expect_pass_result("CombineParallelBatchMatmul", kBatchMatmulBefore, after);
  expect_unchanged("CombineParallelBatchMatmul", kBatchMatmulBefore, {{"min_num_branches", 4}});
}

TEST(CombineParallelBatchMatmul, UntransposedYJoinsAlongItsLastAxis) {
  const std::string before = R"(
fn (%x: Tensor[(2, 3, 4), float32], %y1: Tensor[(2, 4, 5), float32], %y2: Tensor[(2, 4, 6), float32]) {
  (nn.batch_matmul(%x, %y1, transpose_b=False), nn.batch_matmul(%x, %y2, transpose_b=False))
})";
  const std::string after = R"(
fn (%x: Tensor[(2, 3, 4), float32], %y1: Tensor[(2, 4, 5), float32], %y2: Tensor[(2, 4, 6), float32]) {
  %0 = (%y1, %y2); %1 = nn.batch_matmul(%x, concatenate(%0, axis=2), transpose_b=False);
  (strided_slice(%1, begin=[0, 0, 0], end=[-1, -1, 5], strides=[1, 1, 1], slice_mode="size"),
   strided_slice(%1, begin=[0, 0, 5], end=[-1, -1, 6], strides=[1, 1, 1], slice_mode="size"))
})";
  expect_result(run_with_options("CombineParallelBatchMatmul", before, kTwoBranches), after);
  // Different transpositions stay apart.
  const std::string mixed = R"(
fn (%x: Tensor[(2, 3, 4), float32], %y1: Tensor[(2, 4, 5), float32], %y2: Tensor[(2, 6, 4), float32]) {
  (nn.batch_matmul(%x, %y1, transpose_b=False), nn.batch_matmul(%x, %y2))
})";
  expect_unchanged("CombineParallelBatchMatmul", mixed, kTwoBranches);
}

// The second batch_matmul's y is the first one's result: joined, the combined call would take
// its own output. The two independent ones are joined, the dependent one reads its slice.
TEST(CombineParallelBatchMatmul, BranchFeedingAnotherStaysOut) {
  const std::string before = R"(
def @main(%x: Tensor[(2, 3, 4), float32], %w1: Tensor[(2, 4, 4), float32], %w3: Tensor[(2, 5, 4), float32]) {
  %0 = nn.batch_matmul(%x, %w1);
  %1 = nn.batch_matmul(%x, %0);
  %2 = nn.batch_matmul(%x, %w3);
  (%1, %2)
})";
  const std::string after = R"(
def @main(%x: Tensor[(2, 3, 4), float32], %w1: Tensor[(2, 4, 4), float32], %w3: Tensor[(2, 5, 4), float32]) {
  %0 = (%w1, %w3); %1 = nn.batch_matmul(%x, concatenate(%0, axis=1));
  %2 = strided_slice(%1, begin=[0, 0, 0], end=[-1, -1, 4], strides=[1, 1, 1], slice_mode="size");
  (nn.batch_matmul(%x, %2), strided_slice(%1, begin=[0, 0, 4], end=[-1, -1, 5], strides=[1, 1, 1], slice_mode="size"))
})";
  expect_result(run_with_options("CombineParallelBatchMatmul", before, kTwoBranches), after);
  // Without the independent one, nothing is left to join.
  const std::string pair_only = R"(
def @main(%x: Tensor[(2, 3, 4), float32], %w1: Tensor[(2, 4, 4), float32]) {
  %0 = nn.batch_matmul(%x, %w1);
  nn.batch_matmul(%x, %0)
})";
  expect_unchanged("CombineParallelBatchMatmul", pair_only, kTwoBranches);
}

// The first branch's add reads the second branch's add (through a relu): joined, the add
// would take its own result. The convolutions are joined, the adds stay on the slices.
TEST(CombineParallelConv2D, FollowOnReadingAnotherBranchIsNotJoined) {
  const std::string params =
      "%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(4, 4, 1, 1), float32], %w2: Tensor[(4, 4, 1, 1), float32], "
      "%z: Tensor[(1, 4, 8, 8), float32]";
  const std::string before = "def @main(" + params + R"() {
  %0 = nn.conv2d(%x, %w1); %1 = nn.conv2d(%x, %w2);
  %2 = add(%1, %z);
  %3 = add(%0, nn.relu(%2));
  (%3, %2)
})";
  const std::string after = "def @main(" + params + R"() {
  %0 = (%w1, %w2); %1 = nn.conv2d(%x, concatenate(%0), channels=8);
  %2 = strided_slice(%1, begin=[0, 0], end=[-1, 4], strides=[1, 1], slice_mode="size");
  %3 = strided_slice(%1, begin=[0, 4], end=[-1, 4], strides=[1, 1], slice_mode="size");
  %4 = add(%3, %z);
  (add(%2, nn.relu(%4)), %4)
})";
  expect_result(run_with_options("CombineParallelConv2D", before, kTwoBranches), after);
}

TEST(CombineParallel, OptionsAreChecked) {
  try {
    run_with_options("CombineParallelConv2D", kConvBefore, {{"min_branches", 2}});
    FAIL() << "an unknown option was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("min_num_branches, found min_branches"), std::string::npos) << e.what();
  }
  try {
    run_with_options("CombineParallelDense", kDenseBefore, {{"min_num_branches", 0}});
    FAIL() << "min_num_branches=0 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("at least 1, found 0"), std::string::npos) << e.what();
  }
}

TEST(CombineParallel, RegisteredAtOptLevel3) {
  register_builtin_passes();
  for (const char* name : {"CombineParallelConv2D", "CombineParallelDense", "CombineParallelBatchMatmul"}) {
    const Pass& pass = PassRegistry::global().get(name);
    EXPECT_EQ(pass.info.opt_level, 3) << name;
    EXPECT_TRUE(pass.info.keeps_types) << name;
  }
}

// In build()'s pipeline at -O 3 the three convolutions on constant weights become one, and
// FoldConstant, running after, joins the weights at build time: no concatenate is left.
TEST(CombineParallel, InTheBuildPipelineTheJoinedWeightsAreFolded) {
  Var x = make_var("x", tensor_type({1, 3, 6, 6}, DType::kFloat32));
  std::vector<Expr> outputs;
  for (int64_t channels : {2, 4, 3}) {
    NDArray w = NDArray::empty({channels, 3, 3, 3}, DType::kFloat32);
    for (int64_t i = 0; i < w.numel(); ++i) w.set(i, static_cast<double>((i * 7 + channels) % 11) / 11 - 0.5);
    Expr conv = call_op("nn.conv2d", {x, make_constant(w)}, {{"padding", std::vector<int64_t>{1, 1, 1, 1}}});
    outputs.push_back(call_op("nn.relu", {conv}));
  }
  IRModule mod;
  mod.add("main", make_function({x}, make_tuple(outputs)));
  NDArray input = NDArray::empty({1, 3, 6, 6}, DType::kFloat32);
  for (int64_t i = 0; i < input.numel(); ++i) input.set(i, static_cast<double>(i % 13) / 13 - 0.4);
  std::vector<NDArray> want = interpret(mod, "main", {Value(input)}).flatten();

  PassContext ctx;
  ctx.opt_level = 3;
  // AVX-512's blocks on every host: AVX2's 8-channel blocks would pad the 9 channels to 16.
  ctx.options["AlterOpLayout"].set("vector_lanes", AttrValue(int64_t{16}));
  IRModule built = optimize(mod, ctx);
  std::string printed = print_module(built);
  EXPECT_EQ(count_calls(built, "concatenate"), 0u) << printed;
  EXPECT_EQ(count_calls(built, "nn.conv2d"), 1u) << printed;
  EXPECT_NE(printed.find("channels=9"), std::string::npos) << printed;
  expect_close_values(want, interpret(built, "main", {Value(input)}).flatten(), "after -O 3");

  ctx.opt_level = 2;
  EXPECT_EQ(count_calls(optimize(mod, ctx), "nn.conv2d"), 3u);
}

// Property: random modules of parallel branches (convolutions, denses or batch_matmuls of one
// input, each followed by a random chain of bias / per-channel / elementwise calls, some sharing
// a weight shape, some not) give the interpreter's results before and after each pass.
class ParallelBranchGenerator {
 public:
  explicit ParallelBranchGenerator(unsigned seed) : gen_(seed) {}

  // kind: 0 conv2d, 1 dense, 2 batch_matmul.
  IRModule make(int kind, std::vector<Value>* args) {
    Shape data_shape = kind == 0 ? Shape{1, 3, 6, 6} : kind == 1 ? Shape{4, 5} : Shape{2, 3, 5};
    Var x = make_var("x", tensor_type(data_shape, DType::kFloat32));
    args->assign({Value(random_array(data_shape))});
    int64_t kernel = pick(2) ? 1 : 3;
    int64_t shared_channels = 2 + pick(3);
    std::vector<Expr> outputs;
    int branches = 2 + pick(3);
    for (int b = 0; b < branches; ++b) {
      int64_t channels = pick(3) == 0 ? 1 + pick(5) : shared_channels;
      if (kind == 0 && pick(5) == 0) kernel = 4 - kernel;  // now and then another kernel size
      Expr y = branch_op(kind, x, channels, kernel);
      int64_t rank = kind == 0 ? 4 : kind == 1 ? 2 : 3;
      int64_t channel_axis = kind == 0 ? 1 : rank - 1;
      int steps = pick(4);
      for (int s = 0; s < steps; ++s) y = follow_on(y, rank, channel_axis, channels);
      outputs.push_back(y);
    }
    IRModule mod;
    mod.add("main", make_function({x}, make_tuple(outputs)));
    return mod;
  }

 private:
  int64_t pick(int64_t n) { return std::uniform_int_distribution<int64_t>(0, n - 1)(gen_); }

  NDArray random_array(const Shape& shape) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    NDArray a = NDArray::empty(shape, DType::kFloat32);
    for (int64_t i = 0; i < a.numel(); ++i) a.set(i, dist(gen_));
    return a;
  }

  Expr branch_op(int kind, const Expr& x, int64_t channels, int64_t kernel) {
    if (kind == 0) {
      Expr w = make_constant(random_array({channels, 3, kernel, kernel}));
      int64_t pad = kernel / 2;
      return call_op("nn.conv2d", {x, w}, {{"padding", std::vector<int64_t>{pad, pad, pad, pad}}});
    }
    if (kind == 1) return call_op("nn.dense", {x, make_constant(random_array({channels, 5}))});
    return call_op("nn.batch_matmul", {x, make_constant(random_array({2, channels, 5}))});
  }

  // A per-channel constant shaped to line up with the channel axis, or a scalar.
  Expr per_channel(int64_t rank, int64_t channel_axis, int64_t channels) {
    Shape shape(static_cast<size_t>(rank - channel_axis), 1);
    shape[0] = channels;
    return make_constant(random_array(pick(4) == 0 ? Shape{} : shape));
  }

  Expr follow_on(const Expr& y, int64_t rank, int64_t channel_axis, int64_t channels) {
    switch (pick(5)) {
      case 0: return call_op("nn.relu", {y});
      case 1: return call_op("add", {y, per_channel(rank, channel_axis, channels)});
      case 2: return call_op("multiply", {per_channel(rank, channel_axis, channels), y});
      case 3:
        return call_op("nn.bias_add", {y, make_constant(random_array({channels}))},
                       {{"axis", channel_axis == rank - 1 ? int64_t{-1} : channel_axis}});
      default: return call_op("tanh", {y});
    }
  }

  std::mt19937 gen_;
};

TEST(CombineParallel, InterpreterAgreesOnRandomModules) {
  const char* passes[] = {"CombineParallelConv2D", "CombineParallelDense", "CombineParallelBatchMatmul"};
  const char* ops[] = {"nn.conv2d", "nn.dense", "nn.batch_matmul"};
  size_t combined = 0, total = 0;
  for (unsigned seed = 0; seed < 60; ++seed) {
    int kind = static_cast<int>(seed % 3);
    ParallelBranchGenerator generator(seed);
    std::vector<Value> args;
    IRModule mod = generator.make(kind, &args);
    std::vector<NDArray> want = interpret(mod, "main", args).flatten();
    std::vector<Attrs> option_sets = {{{"min_num_branches", 2}}};
    if (kind == 1) option_sets.push_back({{"min_num_branches", 2}, {"to_batch", false}});
    for (const Attrs& options : option_sets) {
      std::string what = "seed " + std::to_string(seed) + " " + passes[kind] + " " + options.to_string();
      PassContext ctx;
      ctx.options[passes[kind]] = options;
      IRModule out = run_passes(mod, {passes[kind]}, ctx);
      expect_close_values(want, interpret(out, "main", args).flatten(), what);
      ++total;
      combined += count_calls(out, ops[kind]) < count_calls(mod, ops[kind]) || count_calls(out, ops[kind]) == 0;
    }
  }
  // Most random modules have a group to combine: the property is not vacuous.
  EXPECT_GT(combined, total / 2) << combined << " of " << total;
}

}  // namespace
}  // namespace kiln::testing
