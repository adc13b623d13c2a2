// AlterOpLayout: golden before/after IR for the shapes of graph it must handle (a conv chain
// with one transform in and one out, pools that stay blocked, a residual add, a channel
// concatenation, convolutions it must leave alone, the cost rule), and a property test:
// random small conv modules give the interpreter's results before and after.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kiln/frontend/onnx.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/type_infer.h"
#include "op/numpy_ref.h"
#include "transform/pass_test_util.h"

namespace kiln::testing {
namespace {

IRModule altered(const std::string& before, int lanes, bool force = true) {
  AlterOpLayoutOptions options;
  options.vector_lanes = lanes;
  options.force = force;
  options.depthwise = true;
  return alter_op_layout_pass(parse_module(before), options);
}

void expect_altered(const std::string& before, const std::string& after, int lanes = 8, bool force = true) {
  IRModule got = altered(before, lanes, force);
  IRModule want = infer_types(parse_module(after));
  EXPECT_TRUE(structural_equal(got, want)) << "got:\n" << print_module(got) << "\nwant:\n" << print_module(want);
}

const char* const kL8 = R"(data_layout="NCHW8c", kernel_layout="OIHW8i8o", out_layout="NCHW8c")";

std::string lt(const std::string& x, const std::string& src, const std::string& dst) {
  return "layout_transform(" + x + ", src_layout=\"" + src + "\", dst_layout=\"" + dst + "\")";
}

TEST(AlterOpLayout, ConvReluConvTransformsOnlyAtTheBoundaries) {
  const std::string before = R"(
def @main(%x: Tensor[(1, 16, 8, 8), float32], %w1: Tensor[(32, 16, 3, 3), float32], %w2: Tensor[(16, 32, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1]);
  %1 = nn.relu(%0);
  %2 = nn.conv2d(%1, %w2);
  nn.relu(%2)
})";
  expect_altered(before, R"(
def @main(%x: Tensor[(1, 16, 8, 8), float32], %w1: Tensor[(32, 16, 3, 3), float32], %w2: Tensor[(16, 32, 1, 1), float32]) {
  %0 = )" + lt("%x", "NCHW", "NCHW8c") +
                             R"(;
  %1 = )" + lt("%w1", "OIHW", "OIHW8i8o") +
                             R"(;
  %2 = nn.conv2d(%0, %1, padding=[1, 1], )" +
                             kL8 + R"();
  %3 = nn.relu(%2);
  %4 = )" + lt("%w2", "OIHW", "OIHW8i8o") +
                             R"(;
  %5 = nn.conv2d(%3, %4, )" + kL8 +
                             R"();
  %6 = nn.relu(%5);
  )" + lt("%6", "NCHW8c", "NCHW") +
                             R"(
})");
  // With 16 lanes the blocks are 16 wide where the channels divide.
  expect_altered(before,
                 R"(
def @main(%x: Tensor[(1, 16, 8, 8), float32], %w1: Tensor[(32, 16, 3, 3), float32], %w2: Tensor[(16, 32, 1, 1), float32]) {
  %0 = )" + lt("%x", "NCHW", "NCHW16c") +
                     R"(;
  %1 = )" + lt("%w1", "OIHW", "OIHW16i16o") +
                     R"(;
  %2 = nn.conv2d(%0, %1, padding=[1, 1], data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c");
  %3 = nn.relu(%2);
  %4 = )" + lt("%w2", "OIHW", "OIHW16i16o") +
                     R"(;
  %5 = nn.conv2d(%3, %4, data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c");
  %6 = nn.relu(%5);
  )" + lt("%6", "NCHW16c", "NCHW") +
                     R"(
})",
                 16);
}

TEST(AlterOpLayout, PoolStaysBlockedAndBiasBecomesABlockedAdd) {
  expect_altered(R"(
def @main(%x: Tensor[(1, 8, 8, 8), float32], %w: Tensor[(16, 8, 3, 3), float32], %b: Tensor[(16), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1]);
  %1 = nn.bias_add(%0, %b);
  nn.max_pool2d(%1, pool_size=[2, 2], strides=[2, 2])
})",
                 R"(
def @main(%x: Tensor[(1, 8, 8, 8), float32], %w: Tensor[(16, 8, 3, 3), float32], %b: Tensor[(16), float32]) {
  %0 = )" + lt("%x", "NCHW", "NCHW8c") +
                     R"(;
  %1 = )" + lt("%w", "OIHW", "OIHW8i8o") +
                     R"(;
  %2 = nn.conv2d(%0, %1, padding=[1, 1], )" +
                     kL8 + R"();
  %3 = expand_dims(%b, axis=1, num_newaxis=2);
  %4 = )" + lt("%3", "CHW", "CHW8c") +
                     R"(;
  %5 = add(%2, %4);
  %6 = nn.max_pool2d(%5, pool_size=[2, 2], strides=[2, 2], layout="NCHW8c");
  )" + lt("%6", "NCHW8c", "NCHW") +
                     R"(
})");
}

// ResNet's head: the blocked global pool's (N, C/x, 1, 1, x) result goes back to NCHW for the
// flatten; an average pool between convs and a pool of NCHW data stay as they are.
TEST(AlterOpLayout, GlobalAndAveragePoolsStayBlocked) {
  expect_altered(R"(
def @main(%x: Tensor[(1, 8, 8, 8), float32], %w1: Tensor[(8, 8, 1, 1), float32], %w2: Tensor[(16, 8, 1, 1), float32]) {
  %0 = nn.max_pool2d(%x, pool_size=[2, 2], strides=[1, 1], padding=[1, 1]);
  %1 = nn.conv2d(%0, %w1);
  %2 = nn.avg_pool2d(%1, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], count_include_pad=True);
  %3 = nn.conv2d(%2, %w2);
  %4 = nn.global_avg_pool2d(%3);
  reshape(%4, newshape=[1, 16])
})",
                 R"(
def @main(%x: Tensor[(1, 8, 8, 8), float32], %w1: Tensor[(8, 8, 1, 1), float32], %w2: Tensor[(16, 8, 1, 1), float32]) {
  %0 = nn.max_pool2d(%x, pool_size=[2, 2], strides=[1, 1], padding=[1, 1]);
  %1 = )" + lt("%0", "NCHW", "NCHW8c") +
                     R"(;
  %2 = )" + lt("%w1", "OIHW", "OIHW8i8o") +
                     R"(;
  %3 = nn.conv2d(%1, %2, )" +
                     kL8 + R"();
  %4 = nn.avg_pool2d(%3, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], count_include_pad=True, layout="NCHW8c");
  %5 = )" + lt("%w2", "OIHW", "OIHW8i8o") +
                     R"(;
  %6 = nn.conv2d(%4, %5, )" +
                     kL8 + R"();
  %7 = nn.global_avg_pool2d(%6, layout="NCHW8c");
  %8 = )" + lt("%7", "NCHW8c", "NCHW") +
                     R"(;
  reshape(%8, newshape=[1, 16])
})");
}

TEST(AlterOpLayout, ResidualAddAndPerChannelScaleStayBlocked) {
  // The block input feeds the first conv and the residual add: one transform serves both.
  expect_altered(R"(
def @main(%x: Tensor[(1, 8, 6, 6), float32], %w1: Tensor[(8, 8, 3, 3), float32], %w2: Tensor[(8, 8, 3, 3), float32], %s: Tensor[(8, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1]);
  %1 = multiply(%0, %s);
  %2 = nn.relu(%1);
  %3 = nn.conv2d(%2, %w2, padding=[1, 1]);
  %4 = add(%3, %x);
  nn.relu(%4)
})",
                 R"(
def @main(%x: Tensor[(1, 8, 6, 6), float32], %w1: Tensor[(8, 8, 3, 3), float32], %w2: Tensor[(8, 8, 3, 3), float32], %s: Tensor[(8, 1, 1), float32]) {
  %0 = )" + lt("%x", "NCHW", "NCHW8c") +
                     R"(;
  %1 = )" + lt("%w1", "OIHW", "OIHW8i8o") +
                     R"(;
  %2 = nn.conv2d(%0, %1, padding=[1, 1], )" +
                     kL8 + R"();
  %3 = )" + lt("%s", "CHW", "CHW8c") +
                     R"(;
  %4 = multiply(%2, %3);
  %5 = nn.relu(%4);
  %6 = )" + lt("%w2", "OIHW", "OIHW8i8o") +
                     R"(;
  %7 = nn.conv2d(%5, %6, padding=[1, 1], )" +
                     kL8 + R"();
  %8 = add(%7, %0);
  %9 = nn.relu(%8);
  )" + lt("%9", "NCHW8c", "NCHW") +
                     R"(
})");
}

TEST(AlterOpLayout, SqueezeExciteScaleIsReadBlocked) {
  // The scale (1, C, 1, 1) is a blocked convolution's output: the multiply reads it as it is,
  // not through a transform to NCHW and back.
  expect_altered(R"(
def @main(%x: Tensor[(1, 8, 6, 6), float32], %w1: Tensor[(8, 8, 3, 3), float32], %w2: Tensor[(8, 8, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1]);
  %1 = nn.global_avg_pool2d(%0);
  %2 = nn.conv2d(%1, %w2);
  %3 = sigmoid(%2);
  multiply(%0, %3)
})",
                 R"(
def @main(%x: Tensor[(1, 8, 6, 6), float32], %w1: Tensor[(8, 8, 3, 3), float32], %w2: Tensor[(8, 8, 1, 1), float32]) {
  %0 = )" + lt("%x", "NCHW", "NCHW8c") +
                     R"(;
  %1 = )" + lt("%w1", "OIHW", "OIHW8i8o") +
                     R"(;
  %2 = nn.conv2d(%0, %1, padding=[1, 1], )" +
                     kL8 + R"();
  %3 = nn.global_avg_pool2d(%2, layout="NCHW8c");
  %4 = )" + lt("%w2", "OIHW", "OIHW8i8o") +
                     R"(;
  %5 = nn.conv2d(%3, %4, )" +
                     kL8 + R"();
  %6 = sigmoid(%5);
  %7 = multiply(%2, %6);
  )" + lt("%7", "NCHW8c", "NCHW") +
                     R"(
})");
}

TEST(AlterOpLayout, ConcatenateAlongChannelsStaysBlocked) {
  expect_altered(R"(
def @main(%x: Tensor[(1, 8, 4, 4), float32], %w1: Tensor[(8, 8, 1, 1), float32], %w2: Tensor[(16, 8, 3, 3), float32], %w3: Tensor[(8, 24, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1);
  %1 = nn.conv2d(%x, %w2, padding=[1, 1]);
  %2 = (%0, %1);
  %3 = concatenate(%2, axis=1);
  nn.conv2d(%3, %w3)
})",
                 R"(
def @main(%x: Tensor[(1, 8, 4, 4), float32], %w1: Tensor[(8, 8, 1, 1), float32], %w2: Tensor[(16, 8, 3, 3), float32], %w3: Tensor[(8, 24, 1, 1), float32]) {
  %0 = )" + lt("%x", "NCHW", "NCHW8c") +
                     R"(;
  %1 = )" + lt("%w1", "OIHW", "OIHW8i8o") +
                     R"(;
  %2 = nn.conv2d(%0, %1, )" +
                     kL8 + R"();
  %3 = )" + lt("%w2", "OIHW", "OIHW8i8o") +
                     R"(;
  %4 = nn.conv2d(%0, %3, padding=[1, 1], )" +
                     kL8 + R"();
  %5 = (%2, %4);
  %6 = concatenate(%5, axis=1);
  %7 = )" + lt("%w3", "OIHW", "OIHW8i8o") +
                     R"(;
  %8 = nn.conv2d(%6, %7, )" +
                     kL8 + R"();
  )" + lt("%8", "NCHW8c", "NCHW") +
                     R"(
})");
}

TEST(AlterOpLayout, NarrowInputsReadNchw1cIntoBlockedOutputs) {
  // 3 input channels (the stem) or 24 with 16 lanes: the data is read as NCHW1c, the output blocked.
  const std::string before = R"(
def @main(%x: Tensor[(1, 3, 9, 7), float32], %w1: Tensor[(16, 3, 3, 3), float32], %w2: Tensor[(8, 16, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1], strides=[2, 2]);
  %1 = nn.relu(%0);
  nn.conv2d(%1, %w2)
})";
  expect_altered(before, R"(
def @main(%x: Tensor[(1, 3, 9, 7), float32], %w1: Tensor[(16, 3, 3, 3), float32], %w2: Tensor[(8, 16, 1, 1), float32]) {
  %0 = )" + lt("%x", "NCHW", "NCHW1c") +
                             R"(;
  %1 = )" + lt("%w1", "OIHW", "OIHW1i8o") +
                             R"(;
  %2 = nn.conv2d(%0, %1, padding=[1, 1], strides=[2, 2], data_layout="NCHW1c", kernel_layout="OIHW1i8o", out_layout="NCHW8c");
  %3 = nn.relu(%2);
  %4 = )" + lt("%w2", "OIHW", "OIHW8i8o") +
                             R"(;
  %5 = nn.conv2d(%3, %4, )" + kL8 +
                             R"();
  )" + lt("%5", "NCHW8c", "NCHW") +
                             R"(
})");
  // narrow_inputs=false keeps such a convolution NCHW.
  const char* stem = R"(def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(16, 3, 3, 3), float32]) {
  nn.conv2d(%x, %w, padding=[1, 1]) })";
  AlterOpLayoutOptions options;
  options.vector_lanes = 8;
  options.force = true;
  options.narrow_inputs = false;
  IRModule got = alter_op_layout_pass(parse_module(stem), options);
  EXPECT_TRUE(structural_equal(got, infer_types(parse_module(stem)))) << print_module(got);
}

TEST(AlterOpLayout, LeavesIneligibleConvolutionsAlone) {
  // Fewer output channels than the block, a grouped conv whose groups split blocks and whose
  // weights are not constant (no block-diagonal expansion), float64, a dynamic batch: nothing
  // changes.
  for (const char* text : {
           R"(def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(6, 3, 3, 3), float32]) {
  nn.conv2d(%x, %w, padding=[1, 1]) })",
           R"(def @main(%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(16, 4, 3, 3), float32]) {
  nn.conv2d(%x, %w, padding=[1, 1], groups=4) })",
           R"(def @main(%x: Tensor[(1, 16, 8, 8), float64], %w: Tensor[(16, 16, 3, 3), float64]) {
  nn.conv2d(%x, %w) })",
           R"(def @main(%x: Tensor[(?, 16, 8, 8), float32], %w: Tensor[(16, 16, 3, 3), float32]) {
  nn.conv2d(%x, %w) })",
       }) {
    SCOPED_TRACE(text);
    expect_altered(text, text);
  }
}

std::string channel_pad(const std::string& x, int axis, int rank, int extra) {
  std::string pairs;
  for (int i = 0; i < rank; ++i)
    pairs += std::string(i ? ", " : "") + "[0, " + std::to_string(i == axis ? extra : 0) + "]";
  return "nn.pad(" + x + ", 0f, pad_width=[" + pairs + "], pad_mode=\"constant\")";
}

TEST(AlterOpLayout, ChannelsTheBlockDoesNotDivideArePaddedToWholeBlocks) {
  // 12 channels in blocks of 8: data and weights padded with zeros to 16, the bias too; the
  // value leaves the blocked layout through a slice of its 12 real channels.
  expect_altered(R"(
def @main(%x: Tensor[(1, 12, 4, 4), float32], %w: Tensor[(12, 12, 1, 1), float32], %b: Tensor[(12), float32]) {
  %0 = nn.conv2d(%x, %w);
  %1 = nn.bias_add(%0, %b);
  sigmoid(%1)
})",
                 R"(
def @main(%x: Tensor[(1, 12, 4, 4), float32], %w: Tensor[(12, 12, 1, 1), float32], %b: Tensor[(12), float32]) {
  %0 = )" + lt(channel_pad("%x", 1, 4, 4), "NCHW", "NCHW8c") +
                     R"(;
  %1 = )" + lt(channel_pad(channel_pad("%w", 0, 4, 4), 1, 4, 4), "OIHW", "OIHW8i8o") +
                     R"(;
  %2 = nn.conv2d(%0, %1, )" +
                     kL8 + R"(, channels=16);
  %3 = expand_dims(%b, axis=1, num_newaxis=2);
  %4 = add(%2, )" + lt(channel_pad("%3", 0, 3, 4), "CHW", "CHW8c") +
                     R"();
  %5 = sigmoid(%4);
  %6 = )" + lt("%5", "NCHW8c", "NCHW") +
                     R"(;
  strided_slice(%6, begin=[0, 0], end=[-1, 12], strides=[1, 1], slice_mode="size")
})");
}

TEST(AlterOpLayout, PaddedValuesLeaveBeforeOpsThatCouldMakeTheirPaddingNaN) {
  // The padding lanes of the conv are zeros; a divide by them would be NaN, and NaN times the
  // next convolution's zero weights is NaN: the divide reads the 12 real channels in NCHW.
  expect_altered(R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32], %w: Tensor[(12, 16, 1, 1), float32], %y: Tensor[(1, 12, 4, 4), float32]) {
  %0 = nn.conv2d(%x, %w);
  divide(%y, %0)
})",
                 R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32], %w: Tensor[(12, 16, 1, 1), float32], %y: Tensor[(1, 12, 4, 4), float32]) {
  %0 = )" + lt("%x", "NCHW", "NCHW8c") +
                     R"(;
  %1 = )" + lt(channel_pad("%w", 0, 4, 4), "OIHW", "OIHW8i8o") +
                     R"(;
  %2 = nn.conv2d(%0, %1, )" +
                     kL8 + R"(, channels=16);
  %3 = )" + lt("%2", "NCHW8c", "NCHW") +
                     R"(;
  %4 = strided_slice(%3, begin=[0, 0], end=[-1, 12], strides=[1, 1], slice_mode="size");
  divide(%y, %4)
})");
}

TEST(AlterOpLayout, GroupedConvsGoBlockedAsGroupsOfWholeBlocks) {
  struct Case {
    int64_t channels, groups, lanes, blocked_groups;
  };
  // Groups of one block (8 of 16 channels, lanes 8: weights as they are); groups of 4 channels
  // expanded to block-diagonal 8x8 blocks; 24 channels in groups of 8, lanes 16: padded to 32,
  // two 16-channel groups.
  for (const Case c : {Case{16, 2, 8, 2}, Case{16, 4, 8, 2}, Case{24, 3, 16, 2}}) {
    const std::string ch = std::to_string(c.channels);
    const std::string text =
        "def @main(%x: Tensor[(1, " + ch + ", 6, 6), float32], %w: Tensor[(" + ch + ", " +
        std::to_string(c.channels / c.groups) + ", 3, 3), float32]) {\n" +
        "  %0 = nn.conv2d(%x, %w, padding=[1, 1], strides=[2, 2], groups=" + std::to_string(c.groups) +
        ");\n  nn.relu(%0)\n}";
    SCOPED_TRACE(text);
    IRModule before = infer_types(
        bind_params(parse_module(text), {{"w", sample_tensor({c.channels, c.channels / c.groups, 3, 3}, 3)}}));
    IRModule after = alter_op_layout_pass(before, {.vector_lanes = static_cast<int>(c.lanes), .force = true});
    const std::string printed = print_module(after);
    EXPECT_NE(printed.find("groups=" + std::to_string(c.blocked_groups) + ", data_layout=\"NCHW" +
                           std::to_string(c.lanes) + "c\""),
              std::string::npos)
        << printed;
    const std::vector<Value> args = {Value(sample_tensor({1, c.channels, 6, 6}, 5))};
    const NDArray want = interpret(before, "main", args).flatten().at(0);
    const NDArray got = interpret(after, "main", args).flatten().at(0);
    ASSERT_EQ(want.shape(), got.shape());
    for (int64_t i = 0; i < want.numel(); ++i) ASSERT_NEAR(got.at(i), want.at(i), 1e-5) << i;
  }
}

TEST(AlterOpLayout, DepthwiseConvsGoBlockedWithOneInputChannelPerGroup) {
  expect_altered(R"(
def @main(%x: Tensor[(1, 16, 8, 8), float32], %w1: Tensor[(16, 1, 3, 3), float32], %w2: Tensor[(8, 16, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1], groups=16);
  %1 = clip(%0, a_min=0f, a_max=6f);
  nn.conv2d(%1, %w2)
})",
                 R"(
def @main(%x: Tensor[(1, 16, 8, 8), float32], %w1: Tensor[(16, 1, 3, 3), float32], %w2: Tensor[(8, 16, 1, 1), float32]) {
  %0 = )" + lt("%x", "NCHW", "NCHW8c") +
                     R"(;
  %1 = )" + lt("%w1", "OIHW", "OIHW1i8o") +
                     R"(;
  %2 = nn.conv2d(%0, %1, padding=[1, 1], groups=16, data_layout="NCHW8c", kernel_layout="OIHW1i8o", out_layout="NCHW8c");
  %3 = clip(%2, a_min=0f, a_max=6f);
  %4 = )" + lt("%w2", "OIHW", "OIHW8i8o") +
                     R"(;
  %5 = nn.conv2d(%3, %4, )" +
                     kL8 + R"();
  )" + lt("%5", "NCHW8c", "NCHW") +
                     R"(
})");
}

TEST(AlterOpLayout, DepthwiseCanBeKeptNchw) {
  const char* text = R"(def @main(%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(16, 1, 3, 3), float32]) {
  nn.conv2d(%x, %w, padding=[1, 1], groups=16) })";
  IRModule got = alter_op_layout_pass(parse_module(text), {.vector_lanes = 8, .force = true, .depthwise = false});
  IRModule want = infer_types(parse_module(text));
  EXPECT_TRUE(structural_equal(got, want)) << print_module(got);
}

TEST(AlterOpLayout, OpsWithAxisAttributesGetNchwBack) {
  // nn.prelu broadcasts its alpha along attribute 'axis': it reads the conv in NCHW.
  expect_altered(R"(
def @main(%x: Tensor[(1, 8, 4, 4), float32], %w: Tensor[(8, 8, 1, 1), float32], %a: Tensor[(8), float32]) {
  %0 = nn.conv2d(%x, %w);
  nn.prelu(%0, %a)
})",
                 R"(
def @main(%x: Tensor[(1, 8, 4, 4), float32], %w: Tensor[(8, 8, 1, 1), float32], %a: Tensor[(8), float32]) {
  %0 = )" + lt("%x", "NCHW", "NCHW8c") +
                     R"(;
  %1 = )" + lt("%w", "OIHW", "OIHW8i8o") +
                     R"(;
  %2 = nn.conv2d(%0, %1, )" +
                     kL8 + R"();
  %3 = )" + lt("%2", "NCHW8c", "NCHW") +
                     R"(;
  nn.prelu(%3, %a)
})");
}

TEST(AlterOpLayout, CancelsTransformPairsThatUndoEachOther) {
  expect_altered(R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32]) {
  %0 = )" + lt("%x", "NCHW", "NCHW8c") +
                     R"(;
  %1 = )" + lt("%0", "NCHW8c", "NCHW") +
                     R"(;
  nn.relu(%1)
})",
                 R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32]) {
  nn.relu(%x)
})");
}

// A conv, then a chain of ops that each need NCHW (softmax along the channels): every conv
// would cost two transforms, so without `force` the function stays NCHW.
// Inception's average pool counts its padding: the ONNX export pads first. A pad of H and W
// pads the blocked value ([0, 0] for the block axis); one that pads channels reads NCHW.
TEST(AlterOpLayout, SpatialPadStaysBlocked) {
  expect_altered(R"(
def @main(%x: Tensor[(1, 8, 6, 6), float32], %w: Tensor[(8, 8, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w);
  %1 = nn.pad(%0, 0f, pad_width=[[0, 0], [0, 0], [1, 1], [1, 2]]);
  %2 = nn.avg_pool2d(%1, pool_size=[3, 3]);
  nn.pad(%2, 0f, pad_width=[[0, 0], [1, 0], [0, 0], [0, 0]])
})",
                 R"(
def @main(%x: Tensor[(1, 8, 6, 6), float32], %w: Tensor[(8, 8, 1, 1), float32]) {
  %0 = )" + lt("%x", "NCHW", "NCHW8c") +
                     R"(;
  %1 = )" + lt("%w", "OIHW", "OIHW8i8o") +
                     R"(;
  %2 = nn.conv2d(%0, %1, )" +
                     kL8 + R"();
  %3 = nn.pad(%2, 0f, pad_width=[[0, 0], [0, 0], [1, 1], [1, 2], [0, 0]]);
  %4 = nn.avg_pool2d(%3, pool_size=[3, 3], layout="NCHW8c");
  %5 = )" + lt("%4", "NCHW8c", "NCHW") +
                     R"(;
  nn.pad(%5, 0f, pad_width=[[0, 0], [1, 0], [0, 0], [0, 0]])
})");
}

// U-Net's upsampling resizes the blocked value; CombineParallelConv2D's slices of a joined conv
// stay blocked when they cut whole blocks, and read NCHW when they do not.
TEST(AlterOpLayout, ResizeAndWholeBlockChannelSlicesStayBlocked) {
  expect_altered(R"(
def @main(%x: Tensor[(1, 8, 4, 4), float32], %w: Tensor[(24, 8, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w);
  %1 = strided_slice(%0, begin=[0, 8], end=[-1, 16], strides=[1, 1], slice_mode="size");
  %2 = image.resize2d(%1, size=[8, 8], method="linear");
  %3 = strided_slice(%0, begin=[0, 4], end=[-1, 4], strides=[1, 1], slice_mode="size");
  (%2, %3)
})",
                 R"(
def @main(%x: Tensor[(1, 8, 4, 4), float32], %w: Tensor[(24, 8, 1, 1), float32]) {
  %0 = )" + lt("%x", "NCHW", "NCHW8c") +
                     R"(;
  %1 = )" + lt("%w", "OIHW", "OIHW8i8o") +
                     R"(;
  %2 = nn.conv2d(%0, %1, )" +
                     kL8 + R"();
  %3 = strided_slice(%2, begin=[0, 1], end=[-1, 2], strides=[1, 1], slice_mode="size");
  %4 = image.resize2d(%3, size=[8, 8], method="linear", layout="NCHW8c");
  %5 = )" + lt("%4", "NCHW8c", "NCHW") +
                     R"(;
  %6 = )" + lt("%2", "NCHW8c", "NCHW") +
                     R"(;
  %7 = strided_slice(%6, begin=[0, 4], end=[-1, 4], strides=[1, 1], slice_mode="size");
  (%5, %7)
})");
}

TEST(AlterOpLayout, CostRuleKeepsNchwWhenBoundariesDominate) {
  const std::string before = R"(
def @main(%x: Tensor[(1, 8, 4, 4), float32], %w1: Tensor[(8, 8, 1, 1), float32], %w2: Tensor[(8, 8, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1);
  %1 = nn.softmax(%0, axis=1);
  %2 = nn.conv2d(%1, %w2);
  nn.softmax(%2, axis=1)
})";
  expect_altered(before, before, 8, /*force=*/false);
  IRModule forced = altered(before, 8, /*force=*/true);
  EXPECT_NE(print_module(forced).find("NCHW8c"), std::string::npos);
  // The chain of the first test has two boundaries for two convs: rewritten without force.
  EXPECT_NE(print_module(altered(R"(
def @main(%x: Tensor[(1, 16, 8, 8), float32], %w1: Tensor[(32, 16, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1]);
  nn.relu(%0)
})",
                                 8, false))
                .find("NCHW8c"),
            std::string::npos);
}

// ConvNeXt's block: a depthwise conv, a channels-last layer norm between two transposes, a
// per-channel scale and the residual add. The transpose back to NCHW also gives the blocked value
// (a layout_transform of it, which fuses into the transpose), so the scale, the add and the next
// conv stay blocked. The two transforms at the transposes are free in the cost rule: two convs
// at four boundaries are rewritten without force.
TEST(AlterOpLayout, TransposesFromChannelsLastGiveTheBlockedValue) {
  const std::string params =
      R"((%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(16, 1, 3, 3), float32], %g: Tensor[(16), float32], %b: Tensor[(16), float32], %s: Tensor[(16, 1, 1), float32], %w2: Tensor[(16, 1, 3, 3), float32]))";
  const char* const depthwise = R"(data_layout="NCHW8c", kernel_layout="OIHW1i8o", out_layout="NCHW8c")";
  expect_altered("def @main" + params + R"( {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1], groups=16);
  %1 = transpose(%0, axes=[0, 2, 3, 1]);
  %2 = nn.layer_norm(%1, %g, %b, axis=-1);
  %3 = transpose(%2, axes=[0, 3, 1, 2]);
  %4 = multiply(%s, %3);
  %5 = add(%4, %x);
  nn.conv2d(%5, %w2, padding=[1, 1], groups=16)
})",
                 "def @main" + params + R"( {
  %0 = )" + lt("%x", "NCHW", "NCHW8c") +
                     R"(;
  %1 = )" + lt("%w1", "OIHW", "OIHW1i8o") +
                     R"(;
  %2 = nn.conv2d(%0, %1, padding=[1, 1], groups=16, )" +
                     depthwise + R"();
  %3 = transpose()" + lt("%2", "NCHW8c", "NCHW") +
                     R"(, axes=[0, 2, 3, 1]);
  %4 = nn.layer_norm(%3, %g, %b, axis=-1);
  %5 = transpose(%4, axes=[0, 3, 1, 2]);
  %6 = multiply()" + lt("%s", "CHW", "CHW8c") +
                     ", " + lt("%5", "NCHW", "NCHW8c") + R"();
  %7 = add(%6, %0);
  %8 = )" + lt("%w2", "OIHW", "OIHW1i8o") +
                     R"(;
  %9 = nn.conv2d(%7, %8, padding=[1, 1], groups=16, )" +
                     depthwise + R"();
  )" + lt("%9", "NCHW8c", "NCHW") +
                     R"(
})",
                 8, /*force=*/false);
}

// A transpose's blocked value that only reaches an op needing NCHW (a softmax over channels,
// through a sigmoid) adds a boundary there: with it the two convs would have three, rejected.
// The rewrite without blocked values from transposes keeps the convs blocked.
TEST(AlterOpLayout, CostRuleFallsBackToNoBlockedTransposes) {
  const std::string params =
      R"((%x: Tensor[(1, 4, 4, 16), float32], %w1: Tensor[(16, 16, 1, 1), float32], %w2: Tensor[(16, 16, 1, 1), float32]))";
  expect_altered("def @main" + params + R"( {
  %0 = transpose(%x, axes=[0, 3, 1, 2]);
  %1 = sigmoid(%0);
  %2 = nn.softmax(%1, axis=1);
  %3 = nn.conv2d(%2, %w1);
  nn.conv2d(%3, %w2)
})",
                 "def @main" + params + R"( {
  %0 = transpose(%x, axes=[0, 3, 1, 2]);
  %1 = sigmoid(%0);
  %2 = nn.softmax(%1, axis=1);
  %3 = nn.conv2d()" + lt("%2", "NCHW", "NCHW8c") +
                     ", " + lt("%w1", "OIHW", "OIHW8i8o") + ", " + kL8 + R"();
  %4 = nn.conv2d(%3, )" +
                     lt("%w2", "OIHW", "OIHW8i8o") + ", " + kL8 + R"();
  )" + lt("%4", "NCHW8c", "NCHW") +
                     R"(
})",
                 8, /*force=*/false);
}

TEST(AlterOpLayout, CostRuleFallsBackToUnpaddedBlocks) {
  // Padded, the two 12-channel convs go blocked too and each meets a softmax: four boundaries
  // for three convs, rejected. Without padding only the first conv is blocked, at the two
  // boundaries the rule allows: that rewrite is kept.
  expect_altered(R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(16, 16, 1, 1), float32], %w2: Tensor[(12, 16, 1, 1), float32], %w3: Tensor[(12, 12, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1);
  %1 = nn.conv2d(%0, %w2);
  %2 = nn.softmax(%1, axis=1);
  %3 = nn.conv2d(%2, %w3);
  nn.softmax(%3, axis=1)
})",
                 R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(16, 16, 1, 1), float32], %w2: Tensor[(12, 16, 1, 1), float32], %w3: Tensor[(12, 12, 1, 1), float32]) {
  %0 = )" + lt("%x", "NCHW", "NCHW8c") +
                     R"(;
  %1 = )" + lt("%w1", "OIHW", "OIHW8i8o") +
                     R"(;
  %2 = nn.conv2d(%0, %1, )" +
                     kL8 + R"();
  %3 = nn.conv2d()" + lt("%2", "NCHW8c", "NCHW") +
                     R"(, %w2);
  %4 = nn.softmax(%3, axis=1);
  %5 = nn.conv2d(%4, %w3);
  nn.softmax(%5, axis=1)
})",
                 8, /*force=*/false);
}

// ----- property: random conv modules compute the same values before and after -----

class ConvModuleGenerator {
 public:
  explicit ConvModuleGenerator(unsigned seed) : gen_(seed) {}

  // IR text of a random chain over a (1, C, H, W) input; params and their arrays in `args`.
  std::string make(std::vector<Value>* args) {
    channels_ = pick({8, 16});
    h_ = pick({5, 6, 8});
    add_param("%x", {1, channels_, h_, h_}, args);
    std::string cur = "%x", block_input = "%x";
    int64_t block_channels = channels_, block_h = h_;
    const int steps = 3 + static_cast<int>(gen_() % 5);
    for (int i = 0; i < steps; ++i) {
      switch (gen_() % 9) {
        case 0:
        case 1: cur = conv(cur, args); break;
        case 2: cur = let("nn.relu(" + cur + ")"); break;
        case 3: {
          std::string b = add_param(param_name("b"), {channels_}, args);
          cur = let("nn.bias_add(" + cur + ", " + b + ")");
          break;
        }
        case 4: {
          std::string s = add_param(param_name("s"), {channels_, 1, 1}, args);
          cur = let("multiply(" + cur + ", " + s + ")");
          break;
        }
        case 5:
          if (block_channels == channels_ && block_h == h_ && block_input != cur)
            cur = let("add(" + cur + ", " + block_input + ")");
          break;
        case 6:
          if (const unsigned choice = gen_() % 4; choice == 0) {
            cur = let("image.resize2d(" + cur + ", size=[" + std::to_string(h_ + 3) + ", " + std::to_string(h_ + 3) +
                      "], method=\"linear\")");
            h_ += 3;
          } else if (choice == 1 && channels_ >= 16) {
            cur = let("strided_slice(" + cur + ", begin=[0, 8], end=[-1, 8], strides=[1, 1], slice_mode=\"size\")");
            channels_ = 8;
          } else if (choice == 2) {
            cur = let(gen_() % 2 ? "clip(" + cur + ", a_min=-0.5f, a_max=2f)" : "sigmoid(" + cur + ")");
          } else {
            // Padded by (1, 2) and pooled by (2, 3): the size stays.
            cur = let("nn.pad(" + cur + ", 0.5f, pad_width=[[0, 0], [0, 0], [1, 0], [0, 2]])");
            cur = let("nn.avg_pool2d(" + cur + ", pool_size=[2, 3])");
          }
          break;
        case 7: {
          const int64_t c = channels_;
          std::string other = conv(cur, args, /*same_size=*/true);
          cur = let("concatenate((" + cur + ", " + other + "), axis=1)");
          channels_ += c;
          break;
        }
        default:
          if (gen_() % 2) {
            cur = let("nn.max_pool2d(" + cur + ", pool_size=[2, 2], strides=[2, 2], padding=[1, 1])");
          } else {
            cur = let("nn.avg_pool2d(" + cur + ", pool_size=[3, 3], strides=[2, 2], padding=[1, 1], ceil_mode=True)");
          }
          h_ = h_ / 2 + 1;
          break;
      }
      if (gen_() % 3 == 0) {
        block_input = cur;
        block_channels = channels_;
        block_h = h_;
      }
    }
    cur = conv(cur, args);
    if (gen_() % 2) cur = let(std::string(gen_() % 2 ? "nn.global_avg_pool2d(" : "nn.global_max_pool2d(") + cur + ")");
    std::string text = "def @main(" + params_ + ") {\n" + body_ + "  " + cur + "\n}";
    return text;
  }

 private:
  int64_t pick(std::initializer_list<int64_t> options) {
    return *(options.begin() + static_cast<std::ptrdiff_t>(gen_() % options.size()));
  }
  std::string param_name(const std::string& base) { return "%" + base + std::to_string(counter_++); }
  std::string let(const std::string& value) {
    std::string name = "%" + std::to_string(lets_++);
    body_ += "  " + name + " = " + value + ";\n";
    return name;
  }
  std::string add_param(const std::string& name, const Shape& shape, std::vector<Value>* args) {
    if (!params_.empty()) params_ += ", ";
    std::string dims;
    for (int64_t d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    params_ += name + ": Tensor[(" + dims + "), float32]";
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<float> v(static_cast<size_t>(num_elements(shape)));
    for (float& f : v) f = dist(gen_);
    args->push_back(Value(NDArray::from_vector(shape, v)));
    return name;
  }
  std::string conv(const std::string& data, std::vector<Value>* args, bool same_size = false) {
    if (gen_() % 4 == 0) return depthwise(data, args, same_size);
    const int64_t out = pick({8, 16, 24, 3, 12});
    const int64_t k = pick({1, 3});
    const int64_t stride = same_size ? 1 : pick({1, 1, 2});
    std::string w = add_param(param_name("w"), {out, channels_, k, k}, args);
    std::string attrs = k == 3 ? ", padding=[1, 1]" : "";
    if (stride == 2) attrs += ", strides=[2, 2]";
    h_ = (h_ + (k == 3 ? 2 : 0) - k) / stride + 1;
    channels_ = out;
    return let("nn.conv2d(" + data + ", " + w + attrs + ")");
  }

  std::string depthwise(const std::string& data, std::vector<Value>* args, bool same_size) {
    const int64_t stride = same_size ? 1 : pick({1, 2});
    std::string w = add_param(param_name("w"), {channels_, 1, 3, 3}, args);
    h_ = (h_ - 1) / stride + 1;
    return let("nn.conv2d(" + data + ", " + w + ", padding=[1, 1], strides=[" + std::to_string(stride) + ", " +
               std::to_string(stride) + "], groups=" + std::to_string(channels_) + ")");
  }

  std::mt19937 gen_;
  int64_t channels_ = 8, h_ = 8;
  int counter_ = 0, lets_ = 0;
  std::string params_, body_;
};

TEST(AlterOpLayoutProperty, RandomConvModulesGiveTheSameValues) {
  int rewritten = 0;
  for (unsigned seed = 0; seed < 40; ++seed) {
    ConvModuleGenerator g(seed);
    std::vector<Value> args;
    const std::string text = g.make(&args);
    SCOPED_TRACE("seed " + std::to_string(seed) + ":\n" + text);
    IRModule before = infer_types(parse_module(text));
    for (int lanes : {8, 16}) {
      IRModule after = alter_op_layout_pass(before, {.vector_lanes = lanes, .force = true, .depthwise = true});
      rewritten += print_module(after).find("layout_transform") != std::string::npos;
      std::vector<NDArray> want = interpret(before, "main", args).flatten();
      std::vector<NDArray> got = interpret(after, "main", args).flatten();
      ASSERT_EQ(want.size(), got.size());
      for (size_t o = 0; o < want.size(); ++o) {
        ASSERT_EQ(want[o].shape(), got[o].shape());
        for (int64_t i = 0; i < want[o].numel(); ++i)
          ASSERT_NEAR(got[o].at(i), want[o].at(i), 1e-4 + 1e-4 * std::abs(want[o].at(i))) << "lanes " << lanes;
      }
    }
  }
  EXPECT_GE(rewritten, 30);  // otherwise the property says little
}

}  // namespace
}  // namespace kiln::testing
