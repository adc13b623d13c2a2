// Reading Top MLIR back: what the emitter writes reads into a graph that emits the same text
// (float, quantized, several outputs, escaped names, every op), the files find their weights
// beside them or at an explicit path and run like the graph they came from, the form
// tpu-mlir's model_transform writes (extra attributes, inline locations, func.return) reads,
// and each kind of bad input is one error naming the file, line and op.
#include "kiln/tpulang/read_top.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "kiln/interp/interpreter.h"
#include "kiln/tpulang/emit.h"
#include "kiln/tpulang/ops.h"
#include "kiln/tpulang/to_kiln.h"
#include "runtime/runtime_test_util.h"
#include "test_util.h"
#include "tpulang/tpulang_test_util.h"

namespace kiln::tpulang {
namespace {

using testing::tpulang::every_op_graph;
using testing::tpulang::weights;

// emit -> read -> emit gives the text back, and the weights read are the ones written.
void expect_round_trip(const Graph& g, const std::string& name, const std::vector<Tensor>& inputs,
                       const std::vector<Tensor>& outputs) {
  TopModule first = emit_top(g, name, inputs, outputs);
  TopGraph back = read_top(first.mlir, first.weights, name + "_origin.mlir");
  TopModule second = emit_top(*back.graph, name, back.inputs, back.outputs);
  EXPECT_EQ(second.mlir, first.mlir);
  ASSERT_EQ(second.weights.size(), first.weights.size());
  for (size_t i = 0; i < first.weights.size(); ++i) {
    EXPECT_EQ(second.weights[i].first, first.weights[i].first);
    EXPECT_EQ(second.weights[i].second.to_doubles(), first.weights[i].second.to_doubles());
  }
}

TEST(TpuLangReadTop, SeedConvRoundTrips) {
  Graph g("cpu");
  Tensor x = g.tensor({1, 3, 224, 224}, "input");
  Tensor w = g.tensor({64, 3, 7, 7}, "weight", "float32", weights({64, 3, 7, 7}, 1));
  Tensor b = g.tensor({1, 64, 1, 1}, "bias", "float32", weights({1, 64, 1, 1}, 2));
  Tensor y = conv_v2(x, w, b, {2, 2}, {1, 1}, {3, 2, 3, 2}, 1, {}, {}, "", "conv");
  expect_round_trip(g, "Conv", {x}, {y});
}

TEST(TpuLangReadTop, QuantizedTypesRoundTrip) {
  Graph g("bm1684x");
  Tensor x = g.tensor({1, 3, 8, 8}, "x", "uint8", {}, false, {0.0157}, {128});
  Tensor w = g.tensor({2, 3, 3, 3}, "w", "int8", weights({2, 3, 3, 3}, 3, DType::kInt8), true);
  Tensor y = conv_v2(x, w, {}, {}, {}, {1, 1, 1, 1}, 1, {}, {5, -3}, "", "conv_int");
  Tensor a = g.tensor({1, 2, 8, 8}, "a", "int8");
  Tensor s = add(y, a, {0.5, 0.25, 0.125}, {0, 1, 2}, "int8", "sum");
  expect_round_trip(g, "Quant", {x, a}, {s});

  Graph steps;
  Tensor f = steps.tensor({1, 2, 4, 4}, "f");
  Tensor q = requant_fp_to_int(f, {0.5}, {3}, 0, "int8", "q");
  Tensor r = requant_int(q, {3, 5}, {2, 3}, {1}, 2, "int8", "r", "half_to_even");
  Tensor d = dequant_int(r, {7}, {1}, {0}, 2, 1, "int16", "d");
  Tensor back = dequant_int_to_fp(d, {0.25, 0.125}, {0}, "float32", "back");
  expect_round_trip(steps, "QuantSteps", {f}, {back});
}

TEST(TpuLangReadTop, SeveralOutputsAndEscapedNamesRoundTrip) {
  Graph g;
  Tensor x = g.tensor({2, 4}, "in \"0\"\\");
  expect_round_trip(g, "Two", {x}, {relu(x, "r"), tanh(x, "t")});
}

TEST(TpuLangReadTop, EveryOpRoundTrips) {
  Graph g;
  Tensor x = g.tensor({1, 4, 8, 8}, "x");
  Tensor out = every_op_graph(g, x);
  expect_round_trip(g, "EveryOp", {x}, {out});
}

NDArray run(const TopGraph& top, const NDArray& input) {
  KilnProgram p = to_kiln(*top.graph, top.inputs, top.outputs);
  std::vector<Value> args = {Value(input)};
  for (const auto& [name, array] : p.params) args.emplace_back(array);
  return interpret(p.module, "main", args).tensor();
}

// A conv -> relu -> add block written to files and read back from them runs like the graph.
struct Block {
  TopGraph top;
  Block() {
    top.graph = std::make_unique<Graph>();
    Graph& g = *top.graph;
    Tensor x = g.tensor({1, 2, 5, 6}, "x");
    Tensor c = conv_v2(x, g.tensor({3, 2, 3, 3}, "w", "float32", weights({3, 2, 3, 3}, 11)),
                       g.tensor({1, 3, 1, 1}, "b", "float32", weights({1, 3, 1, 1}, 12)), {1, 2}, {}, {1, 1, 0, 2}, 1,
                       {}, {}, "", "conv");
    top.inputs = {x};
    top.outputs = {add(relu(c, "relu"), c, {}, {}, "", "out")};
  }
};

TEST(TpuLangReadTop, FilesFindTheirWeightsBesideOrExplicitly) {
  Block block;
  runtime_test::TempDir dir;
  CompiledFiles files = compile(*block.top.graph, "Block", block.top.inputs, block.top.outputs, dir.path());
  NDArray input = weights({1, 2, 5, 6}, 13);
  NDArray want = run(block.top, input);

  EXPECT_EQ(run(read_top_file(files.mlir_path), input).to_doubles(), want.to_doubles());

  std::filesystem::create_directories(dir.file("elsewhere"));
  const std::string moved = dir.file("elsewhere/block.npz");
  std::filesystem::rename(files.weight_path, moved);
  EXPECT_NE(error_of([&] { read_top_file(files.mlir_path); }).find("Block_TOP_F32_all_weight.npz, does not exist"),
            std::string::npos);
  EXPECT_EQ(run(read_top_file(files.mlir_path, moved), input).to_doubles(), want.to_doubles());

  // An npz of other weights: the missing one is named.
  write_npz(dir.file("wrong.npz"), {{"w", weights({3, 2, 3, 3}, 11)}});
  EXPECT_NE(error_of([&] {
              read_top_file(files.mlir_path, dir.file("wrong.npz"));
            }).find("op 'top.Weight': line 6:5: weight 'b' is not in " + dir.file("wrong.npz")),
            std::string::npos);
  write_npz(dir.file("shape.npz"), {{"w", weights({3, 2, 3, 3}, 11)}, {"b", weights({3}, 12)}});
  EXPECT_NE(error_of([&] {
              read_top_file(files.mlir_path, dir.file("shape.npz"));
            }).find("weight 'b' has another shape in " + dir.file("shape.npz") + " (expected [1, 3, 1, 1], found [3])"),
            std::string::npos);
}

// What tpu-mlir's model_transform writes: attributes on top.Input, attributes kiln does not
// read, inline and fused locations, comments, func.return in generic form.
TEST(TpuLangReadTop, ReadsTheFormTpuMlirWrites) {
  const std::string text =
      "#loc = loc(unknown)\n"
      "module @Net attributes {module.FLOPs = 64 : i64, module.asymmetric = false, module.chip = \"ALL\", "
      "module.platform = \"ONNX\", module.state = \"TOP_F32\", module.weight_file = \"net_top_f32_all_weight.npz\"} {\n"
      "  func.func @main(%arg0: tensor<1x4xf32> loc(unknown)) -> tensor<1x2xf32> {\n"
      "    // the input\n"
      "    %0 = \"top.None\"() : () -> none loc(#loc)\n"
      "    %1 = \"top.Input\"(%arg0) {channel_format = \"nchw\", pixel_format = \"rgb\", scale = [1.0, 1.0]} : "
      "(tensor<1x4xf32>) -> tensor<1x4xf32> loc(#loc1)\n"
      "    %2 = \"top.Weight\"() : () -> tensor<4x2xf32> loc(#loc2)\n"
      "    %3 = \"top.MatMul\"(%1, %2, %0) {do_relu = false, hdim_is_batch = false, keep_dims = true, left_transpose "
      "= false, output_transpose = false, relu_limit = -1.000000e+00 : f64, right_transpose = false} : "
      "(tensor<1x4xf32>, tensor<4x2xf32>, none) -> tensor<1x2xf32> loc(\"fc\")\n"
      "    %4 = \"top.Softmax\"(%3) {axis = 1 : si32, beta = 1.000000e+00 : f64, log = false} : (tensor<1x2xf32>) -> "
      "tensor<1x2xf32> loc(#loc3)\n"
      "    \"func.return\"(%4) : (tensor<1x2xf32>) -> () loc(#loc)\n"
      "  } loc(#loc)\n"
      "} loc(#loc)\n"
      "#loc1 = loc(\"input\")\n"
      "#loc2 = loc(\"fc_w\")\n"
      "#loc3 = loc(fused[#loc4, #loc5])\n"
      "#loc4 = loc(\"prob\")\n"
      "#loc5 = loc(\"prob_extra\")\n";
  EXPECT_EQ(top_weight_file(text), "net_top_f32_all_weight.npz");
  NDArray w = weights({4, 2}, 21);
  TopGraph top = read_top(text, {{"fc_w", w}});
  ASSERT_EQ(top.inputs.size(), 1u);
  EXPECT_EQ(top.inputs[0].name(), "input");
  ASSERT_EQ(top.outputs.size(), 1u);
  EXPECT_EQ(top.outputs[0].name(), "prob");
  ASSERT_EQ(top.graph->operators().size(), 2u);
  const Operator& matmul = top.graph->operators()[0];
  EXPECT_EQ(matmul.outputs[0].name(), "fc");
  EXPECT_FALSE(matmul.inputs[2].defined());
  ASSERT_NE(matmul.attr("relu_limit"), nullptr);
  EXPECT_EQ(matmul.attr("relu_limit")->f, -1.0);

  NDArray x = weights({1, 4}, 22);
  NDArray got = run(top, x);
  double logits[2] = {0, 0}, total = 0;
  for (int j = 0; j < 2; ++j) {
    for (int k = 0; k < 4; ++k) logits[j] += x.at(k) * w.at(k * 2 + j);
    total += std::exp(logits[j]);
  }
  for (int j = 0; j < 2; ++j) EXPECT_NEAR(got.at(j), std::exp(logits[j]) / total, 1e-6);
}

// Earlier tpu-mlir releases: names in `name` attributes, the weight file in top.weight_file,
// no locations, attributes with Top's defaults left out.
TEST(TpuLangReadTop, ReadsEarlierTpuMlirNames) {
  const std::string text =
      "module attributes {top.weight_file = \"gemm_top_weight.npz\"} {\n"
      "  func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x4xf32> {\n"
      "    %0 = \"top.None\"() : () -> none\n"
      "    %1 = \"top.Input\"(%arg0) {name = \"a\"} : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
      "    %2 = \"top.Weight\"() {name = \"b\"} : () -> tensor<3x4xf32>\n"
      "    %3 = \"top.MatMul\"(%1, %2, %0) {do_relu = false, name = \"z_Gemm\"} : (tensor<2x3xf32>, "
      "tensor<3x4xf32>, none) -> tensor<2x4xf32>\n"
      "    %4 = \"top.Relu\"(%3) {name = \"1_Relu\"} : (tensor<2x4xf32>) -> tensor<2x4xf32>\n"
      "    return %4 : tensor<2x4xf32>\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(top_weight_file(text), "gemm_top_weight.npz");
  TopGraph top = read_top(text, {{"b", weights({3, 4}, 23)}});
  EXPECT_EQ(top.inputs[0].name(), "a");
  EXPECT_EQ(top.outputs[0].name(), "1_Relu");
  const Operator& matmul = top.graph->operators()[0];
  EXPECT_EQ(matmul.outputs[0].name(), "z_Gemm");
  EXPECT_EQ(matmul.attr("name"), nullptr);
  ASSERT_NE(matmul.attr("right_transpose"), nullptr);
  EXPECT_FALSE(matmul.attr("right_transpose")->b);
  NDArray x = weights({2, 3}, 24);
  EXPECT_EQ(run(top, x).shape(), (Shape{2, 4}));
}

std::string read_error(const std::string& body, const NamedArrays& weights = {}) {
  const std::string text =
      "module attributes {module.chip = \"ALL\"} {\n"
      "  func.func @main(%arg0: tensor<1x4xf32> loc(unknown)) -> tensor<1x4xf32> {\n"
      "    %0 = \"top.Input\"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc(\"x\")\n" +
      body + "  }\n}\n";
  return error_of([&] { read_top(text, weights, "m.mlir"); });
}

TEST(TpuLangReadTop, OneClearErrorEach) {
  EXPECT_EQ(read_error("    %1 = \"top.Erf\"(%0) : (tensor<1x4xf32>) -> tensor<1x4xf32>\n    return %1 : "
                       "tensor<1x4xf32>\n"),
            "m.mlir: op 'top.Erf': line 4:5: unknown Top op; kiln reads the Top ops it writes");
  EXPECT_EQ(read_error("    %1 = \"top.Weight\"() : () -> tensor<4xf32> loc(\"w\")\n    return %1 : tensor<4xf32>\n"),
            "m.mlir: op 'top.Weight': line 4:5: weight 'w' is not in the weights");
  EXPECT_EQ(read_error("    %1 = \"top.Weight\"() : () -> tensor<4xf32> loc(\"w\")\n    return %1 : tensor<4xf32>\n",
                       {{"w", weights({2, 2}, 1)}}),
            "m.mlir: op 'top.Weight': line 4:5: weight 'w' has another shape in the weights (expected [4], found [2, "
            "2])");
  EXPECT_EQ(read_error("    %1 = \"top.Relu\"(%0 : (tensor<1x4xf32>) -> tensor<1x4xf32>\n"),
            "m.mlir: line 4:24: expected ')' closing the operands of top.Relu, found ':'");
  EXPECT_EQ(read_error("    %1 = \"top.Relu\"(%7) : (tensor<1x4xf32>) -> tensor<1x4xf32>\n    return %1 : "
                       "tensor<1x4xf32>\n"),
            "m.mlir: op 'top.Relu': line 4:5: operand %7 is not defined before its use");
  EXPECT_EQ(read_error("    %1 = \"top.Relu\"(%0) : (tensor<1x8xf32>) -> tensor<1x8xf32>\n    return %1 : "
                       "tensor<1x8xf32>\n"),
            "m.mlir: op 'top.Relu': line 4:5: operand 0 (%0) is typed tensor<1x8xf32> here but [1, 4] float32 where "
            "it is defined");
  EXPECT_EQ(read_error("    %1 = \"top.LeakyRelu\"(%0) {alpha = \"big\"} : (tensor<1x4xf32>) -> tensor<1x4xf32>\n"
                       "    return %1 : tensor<1x4xf32>\n"),
            "m.mlir: op 'top.LeakyRelu': line 4:5: attribute 'alpha' at line 4:39 is not an f64 number (expected an "
            "f64 number, found \"big\")");
  EXPECT_EQ(read_error("    %1 = \"top.Softmax\"(%0) : (tensor<1x4xf32>) -> tensor<1x4xf32>\n    return %1 : "
                       "tensor<1x4xf32>\n"),
            "m.mlir: op 'top.Softmax': line 4:5: attribute 'axis' is missing");
  EXPECT_EQ(read_error("    %1 = \"top.Relu\"(%0) : (tensor<1x4xf32>) -> tensor<1x4xi64>\n    return %1 : "
                       "tensor<1x4xi64>\n"),
            "m.mlir: op 'top.Relu': line 4:5: element type i64 has no TpuLang dtype (float32, float16 or 8/16/32-bit "
            "integers)");
  EXPECT_EQ(read_error("    %1 = \"top.Relu\"(%0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc(#loc9)\n"
                       "    return %1 : tensor<1x4xf32>\n"),
            "m.mlir: line 4:5: location alias #loc9 is not defined");
  EXPECT_EQ(read_error("    %1 = \"top.Relu\"(%0) : (tensor<1x4xf32>) -> tensor<1x4xf32>\n"),
            "m.mlir: line 2:3: @main does not end with a return");
  EXPECT_EQ(error_of([] { read_top("func.func @main() {}", {}, "m.mlir"); }),
            "m.mlir: line 1:1: expected `module` or a location alias");
}

// Attribute arrays nest by recursion; a file nesting them thousands deep (found by the
// top_mlir fuzz target, fuzz/regressions/top_mlir/) is an error, not a stack overflow.
TEST(TpuLangReadTop, DeeplyNestedArraysAreAnError) {
  const std::string text = "module attributes {m.pads = " + std::string(3000, '[') + "}\n";
  const std::string message = error_of([&] { read_top(text, {}, "m.mlir"); });
  EXPECT_NE(message.find("attribute arrays nest 257 deep, above the limit of 256"), std::string::npos) << message;
}

}  // namespace
}  // namespace kiln::tpulang
