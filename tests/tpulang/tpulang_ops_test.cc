// TpuLang op functions: the output shape each one infers, the Top operator and attributes it
// records, and one clear error (naming op and argument) for each kind of bad call.
#include <gtest/gtest.h>

#include "kiln/tpulang/ops.h"
#include "test_util.h"
#include "tpulang/tpulang_test_util.h"

namespace kiln::tpulang {
namespace {

using testing::tpulang::weights;

Tensor weight(Graph& g, Shape shape, const std::string& name) {
  return g.tensor(shape, name, "float32", weights(shape));
}

const Operator& last_op(const Graph& g) { return g.operators().back(); }

TEST(TpuLangShapes, ConvFollowsTheSeedRule) {
  Graph g;
  Tensor x = g.tensor({2, 6, 20, 17});
  // kh_ext = 2 * (3 - 1) + 1 = 5, oh = (20 + 1 + 2 - 5) / 3 + 1 = 7; kw_ext = 1 * (5 - 1) + 1 = 5,
  // ow = (17 + 0 + 4 - 5) / 2 + 1 = 9.
  Tensor y = conv_v2(x, weight(g, {8, 3, 3, 5}, "w"), weight(g, {1, 8, 1, 1}, "b"), {3, 2}, {2, 1}, {1, 2, 0, 4}, 2);
  EXPECT_EQ(y.shape(), (Shape{2, 8, 7, 9}));
  const Operator& op = last_op(g);
  EXPECT_EQ(op.type, "top.Conv");
  EXPECT_EQ(op.attr("kernel_shape")->ints, (Ints{3, 5}));
  EXPECT_EQ(op.attr("pads")->ints, (Ints{1, 0, 2, 4}));  // Top: [top, left, bottom, right]
  EXPECT_EQ(op.attr("strides")->ints, (Ints{3, 2}));
  EXPECT_EQ(op.attr("dilations")->ints, (Ints{2, 1}));
  EXPECT_EQ(op.attr("group")->i, 2);
  EXPECT_FALSE(op.attr("do_relu")->b);
  EXPECT_EQ(conv(x, weight(g, {4, 6, 1, 1}, "w1")).shape(), (Shape{2, 4, 20, 17}));
}

TEST(TpuLangShapes, EveryOtherOp) {
  Graph g;
  Tensor x = g.tensor({1, 4, 9, 9}, "x");
  EXPECT_EQ(deconv(x, weight(g, {4, 3, 3, 3}, "dw"), {}, {2, 2}, {}, {1, 1, 1, 1}, {1, 1}).shape(),
            (Shape{1, 3, 18, 18}));  // (9 - 1) * 2 - 2 + 3 + 1
  EXPECT_EQ(maxpool(x, {3, 3}, {2, 2}).shape(), (Shape{1, 4, 4, 4}));
  EXPECT_EQ(maxpool(x, {2, 2}, {2, 2}, {}, true).shape(), (Shape{1, 4, 5, 5}));
  // ceil mode: a window would start at 10 in the end padding of 9 + 2 rows; it is dropped.
  EXPECT_EQ(maxpool(x, {2, 2}, {2, 2}, {0, 2, 0, 2}, true).shape(), (Shape{1, 4, 5, 5}));
  EXPECT_EQ(avgpool(x, {3, 3}, {1, 1}, {1, 1, 1, 1}).shape(), (Shape{1, 4, 9, 9}));
  Tensor a = g.tensor({2, 1, 5}, "a");
  Tensor b = g.tensor({3, 1}, "b");
  for (auto fn : {&add, &sub, &mul}) EXPECT_EQ(fn(a, b, {}, {}, "", "").shape(), (Shape{2, 3, 5}));
  EXPECT_EQ(div(a, b).shape(), (Shape{2, 3, 5}));
  EXPECT_EQ(matmul(g.tensor({2, 1, 4, 6}), g.tensor({3, 6, 5})).shape(), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(matmul(g.tensor({6, 4}), g.tensor({5, 6}), {}, true, true).shape(), (Shape{4, 5}));
  for (auto fn : {&relu, &sigmoid, &tanh, &gelu}) EXPECT_EQ(fn(x, "").shape(), x.shape());
  EXPECT_EQ(leaky_relu(x, 0.2).shape(), x.shape());
  EXPECT_EQ(last_op(g).attr("alpha")->f, 0.2);
  EXPECT_EQ(prelu(x, weight(g, {4}, "slope")).shape(), x.shape());
  EXPECT_EQ(clamp(x, 0, 6).shape(), x.shape());
  EXPECT_EQ(last_op(g).attr("max")->f, 6.0);
  EXPECT_EQ(softmax(x, -1).shape(), x.shape());
  EXPECT_EQ(last_op(g).attr("axis")->i, 3);
  EXPECT_EQ(layer_norm(x, weight(g, {9, 9}, "gamma"), {}, 1e-6, 2).shape(), x.shape());
  EXPECT_EQ(last_op(g).attr("normalized_shape")->ints, (Ints{9, 9}));
  EXPECT_EQ(concat({x, x, g.tensor({1, 2, 9, 9})}, 1).shape(), (Shape{1, 10, 9, 9}));
  EXPECT_EQ(reshape(x, {0, -1, 3}).shape(), (Shape{1, 108, 3}));
  EXPECT_EQ(permute(x, {0, 2, 3, 1}).shape(), (Shape{1, 9, 9, 4}));
  EXPECT_EQ(squeeze(x, {0}).shape(), (Shape{4, 9, 9}));
  EXPECT_EQ(squeeze(g.tensor({1, 3, 1}), {}).shape(), (Shape{3}));
  EXPECT_EQ(unsqueeze(x, {0, -1}).shape(), (Shape{1, 1, 4, 9, 9, 1}));
  EXPECT_EQ(last_op(g).attr("axes")->ints, (Ints{0, 5}));
  EXPECT_EQ(slice(x, {1, -4}, {3, 100}, {1, 3}, {1, 3}).shape(), (Shape{1, 2, 9, 2}));
  EXPECT_EQ(last_op(g).attr("offset")->ints, (Ints{0, 1, 0, 5}));
  EXPECT_EQ(last_op(g).attr("ends")->ints, (Ints{1, 3, 9, 9}));
}

TEST(TpuLangShapes, OutputNamesAndDtypes) {
  Graph g;
  Tensor x = g.tensor({1, 2, 4, 4}, "", "int8");
  Tensor w = g.tensor({2, 2, 1, 1}, "", "int8", weights({2, 2, 1, 1}, 1, DType::kInt8));
  EXPECT_EQ(x.name(), "tensor_0");
  EXPECT_EQ(w.name(), "weight_1");
  Tensor y = conv_v2(x, w, {}, {}, {}, {}, 1, {3}, {0, 1});
  EXPECT_EQ(y.dtype(), "int32");
  EXPECT_EQ(y.name(), "conv_v2_2");
  EXPECT_EQ(x.zero_point(), (Ints{3}));
  EXPECT_EQ(w.zero_point(), (Ints{0, 1}));
  EXPECT_EQ(conv_v2(x, w, {}, {}, {}, {}, 1, {}, {}, "uint32", "named").name(), "named");
}

// Each bad call gives one error naming the op and the argument.
TEST(TpuLangErrors, OneClearErrorEach) {
  Graph g;
  Tensor x = g.tensor({1, 3, 8, 8}, "x");
  Tensor w = weight(g, {4, 3, 3, 3}, "w");
  auto expect = [](auto fn, const std::string& text) {
    const std::string message = error_of(fn);
    EXPECT_NE(message.find(text), std::string::npos) << "got: " << message;
  };
  // rank mismatch
  expect(
      [&] {
        conv_v2(g.tensor({3, 8, 8}), w);
      },
      "op 'tpulang.conv_v2': argument 'tensor_i': tensor 'tensor_0' must be NCHW (expected rank 4, found rank 3");
  expect([&] { conv(x, weight(g, {4, 3, 3}, "w3")); }, "op 'tpulang.conv': argument 'weight'");
  expect([&] { maxpool(g.tensor({8, 8}), {2, 2}); }, "op 'tpulang.maxpool': argument 'input'");
  // pad of the wrong length
  expect(
      [&] {
        conv_v2(x, w, {}, {}, {}, {1, 1});
      },
      "op 'tpulang.conv_v2': argument 'pad': lists [top, bottom, left, right] (expected 4 values, found [1, 1])");
  expect([&] { avgpool(x, {2, 2}, {}, {1, 1, 1}); }, "op 'tpulang.avgpool': argument 'pad'");
  expect([&] { conv(x, w, {}, {1, 1, 1}); }, "op 'tpulang.conv': argument 'stride'");
  // zero-point list of the wrong length
  Tensor xi = g.tensor({1, 3, 8, 8}, "xi", "uint8");
  Tensor wi = g.tensor({4, 3, 3, 3}, "wi", "int8", weights({4, 3, 3, 3}, 2, DType::kInt8));
  expect(
      [&] {
        conv_v2(xi, wi, {}, {}, {}, {}, 1, {1, 2});
      },
      "op 'tpulang.conv_v2': argument 'input_zp': takes one value or one per input channel (expected 1 or 3 "
      "values, found 2)");
  expect(
      [&] {
        conv_v2(xi, wi, {}, {}, {}, {}, 1, {}, {1, 2, 3});
      },
      "argument 'weight_zp': takes one value or one per output channel (expected 1 or 4 values");
  expect(
      [&] {
        g.tensor({1, 3, 2, 2}, "zp", "uint8", {}, false, {}, {1, 2});
      },
      "zero_point of tensor 'zp' has one value per channel of axis 1 (expected 1 or 3 values, found 2)");
  expect([&] { conv_v2(x, w, {}, {}, {}, {}, 1, {3}); }, "argument 'input_zp': zero points need integer tensors");
  // unknown dtype
  expect([&] { g.tensor({1}, "q", "float64"); }, "tpulang.Tensor: unknown dtype 'float64'");
  expect([&] { conv_v2(x, w, {}, {}, {}, {}, 1, {}, {}, "int3"); },
         "op 'tpulang.conv_v2': argument 'out_dtype': unknown dtype 'int3'");
  expect([&] { conv_v2(x, w, {}, {}, {}, {}, 1, {}, {}, "int32"); },
         "argument 'out_dtype': does not fit a float32 input");
  // a tensor from another graph
  Graph other;
  Tensor foreign = weight(other, {4, 3, 3, 3}, "fw");
  expect([&] { conv_v2(x, foreign); }, "op 'tpulang.conv_v2': argument 'weight': tensor 'fw' belongs to another graph");
  expect([&] { add(x, other.tensor({1})); }, "op 'tpulang.add': argument 'tensor_i1'");
  expect([&] { concat({x, other.tensor({1, 3, 8, 8})}); }, "argument 'inputs[1]'");
  // others
  expect([&] { conv_v2(x, weight(g, {4, 2, 3, 3}, "w2")); }, "argument 'weight': tensor 'w2' has 2 input channels");
  expect([&] { conv_v2(x, w, {}, {}, {}, {}, 2); }, "argument 'group': must divide");
  expect([&] { conv_v2(x, w, weight(g, {4, 1}, "b")); }, "argument 'bias'");
  expect([&] { conv_v2(g.tensor({1, 3, 2, 2}), w); }, "the dilated kernel is larger than the padded input");
  expect([&] { add(x, g.tensor({1, 2, 8, 8})); }, "argument 'tensor_i1': shape [1, 2, 8, 8] does not broadcast");
  expect([&] { add(x, g.tensor({1}, "i", "int32")); }, "argument 'tensor_i1': must have the dtype of tensor_i0");
  expect([&] { add(x, x, {0.5, 0.5, 0.5}); }, "op 'tpulang.add': argument 'scale': quantizes integer tensors only");
  expect([&] { matmul(g.tensor({2, 3}), g.tensor({4, 5})); }, "op 'tpulang.matmul': argument 'right'");
  expect([&] { softmax(x, 4); }, "op 'tpulang.softmax': argument 'axis': out of range");
  expect([&] { reshape(x, {5, -1}); }, "op 'tpulang.reshape': argument 'new_shape'");
  expect([&] { permute(x, {0, 1, 1, 2}); }, "argument 'order': names a dim twice");
  expect([&] { squeeze(x, {1}); }, "argument 'axis': dim 1 is not 1");
  expect([&] { clamp(x, 1, 0); }, "op 'tpulang.clamp': argument 'max': must not be below min");
  expect([&] { maxpool(x, {}); }, "argument 'kernel': is required");
  expect([&] { relu(Tensor{}); }, "op 'tpulang.relu': needs at least one tensor argument");
  expect([&] { g.tensor({1}, "x"); }, "name 'x' is already used in this graph");
  expect([&] { Graph bad("tpu9"); }, "unknown device 'tpu9'");
  expect([&] { requant_int(xi, {1}, {0}, {0}, 1, "int8", "", "nearest"); },
         "op 'tpulang.requant_int': argument 'round_mode': unknown round mode 'nearest'");
  expect([&] { requant_int(xi, {1}, {0}, {0}, 3); }, "argument 'requant_mode': out of range");
  expect(
      [&] {
        requant_int(xi, {1, 2}, {0}, {0}, 1);
      },
      "argument 'mul': takes one value or one per channel (expected 1 or 3 values, found 2)");
  expect([&] { requant_fp_to_int(xi, {1.0}, {0}, 0, "int8"); }, "argument 'tensor_i': must be float32 or float16");
  expect([&] { dequant_int_to_fp(xi, {1.0}, {0}, "int8"); }, "argument 'out_dtype': must be float32 or float16");
}

}  // namespace
}  // namespace kiln::tpulang
