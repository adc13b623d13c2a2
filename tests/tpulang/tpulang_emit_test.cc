// Top MLIR and weight files written from TpuLang graphs: the seed notes' single-conv model as a
// golden text, quantized element types, several outputs, every op, and the global graph.
// tests/cli/tpulang_mlir_parses.sh runs these tests with KILN_TPULANG_MLIR_DIR set and has
// mlir-opt-16 parse (and print back unchanged) every file they write.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "kiln/tpulang/emit.h"
#include "kiln/tpulang/ops.h"
#include "op/numpy_eval.h"
#include "test_util.h"
#include "tpulang/tpulang_test_util.h"

namespace kiln::tpulang {
namespace {

using testing::tpulang::emit_dir;
using testing::tpulang::every_op_graph;
using testing::tpulang::weights;

std::string read_text(const std::string& path) {
  std::ifstream is(path);
  std::stringstream ss;
  ss << is.rdbuf();
  return ss.str();
}

// The seed notes' example: one conv_v2 on a 224x224 image (pad [top, bottom, left, right] =
// [3, 2, 3, 2], which Top writes as pads [top, left, bottom, right] = [3, 3, 2, 2]).
TEST(TpuLangEmit, SeedSingleConvGolden) {
  Graph g("cpu");
  Tensor x = g.tensor({1, 3, 224, 224}, "input");
  Tensor w = g.tensor({64, 3, 7, 7}, "weight", "float32", weights({64, 3, 7, 7}, 1));
  Tensor b = g.tensor({1, 64, 1, 1}, "bias", "float32", weights({1, 64, 1, 1}, 2));
  Tensor y = conv_v2(x, w, b, {2, 2}, {1, 1}, {3, 2, 3, 2}, 1, {}, {}, "", "conv");
  EXPECT_EQ(y.shape(), (Shape{1, 64, 112, 112}));

  CompiledFiles files = compile(g, "Conv", {x}, {y}, emit_dir());
  EXPECT_EQ(std::filesystem::path(files.mlir_path).filename(), "Conv_origin.mlir");
  EXPECT_EQ(std::filesystem::path(files.weight_path).filename(), "Conv_TOP_F32_all_weight.npz");
  const std::string expected =
      "#loc = loc(unknown)\n"
      "module attributes {module.chip = \"ALL\", module.name = \"Conv\", module.platform = \"TPULANG\", "
      "module.state = \"TOP_F32\", module.weight_file = \"Conv_TOP_F32_all_weight.npz\"} {\n"
      "  func.func @main(%arg0: tensor<1x3x224x224xf32> loc(unknown)) -> tensor<1x64x112x112xf32> {\n"
      "    %0 = \"top.Input\"(%arg0) : (tensor<1x3x224x224xf32>) -> tensor<1x3x224x224xf32> loc(#loc1)\n"
      "    %1 = \"top.Weight\"() : () -> tensor<64x3x7x7xf32> loc(#loc2)\n"
      "    %2 = \"top.Weight\"() : () -> tensor<1x64x1x1xf32> loc(#loc3)\n"
      "    %3 = \"top.Conv\"(%0, %1, %2) {dilations = [1, 1], do_relu = false, group = 1 : i64, kernel_shape = [7, "
      "7], pads = [3, 3, 2, 2], strides = [2, 2]} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, "
      "tensor<1x64x1x1xf32>) -> tensor<1x64x112x112xf32> loc(#loc4)\n"
      "    return %3 : tensor<1x64x112x112xf32> loc(#loc)\n"
      "  } loc(#loc)\n"
      "} loc(#loc)\n"
      "#loc1 = loc(\"input\")\n"
      "#loc2 = loc(\"weight\")\n"
      "#loc3 = loc(\"bias\")\n"
      "#loc4 = loc(\"conv\")\n";
  EXPECT_EQ(read_text(files.mlir_path), expected);

  // numpy reads the archive: one entry per top.Weight, under its name, with its values.
  auto got = testing::numpy::eval_many(
      {"sorted(d.keys()) == ['bias', 'weight']", "d['weight'].shape", "d['bias'].shape",
       "d['weight'].dtype == np.float32", "d['weight'].ravel()[:3]", "d['bias'].ravel()[-2:]"},
      "d = np.load('" + files.weight_path + "')");
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[0], (std::vector<double>{1}));
  EXPECT_EQ(got[1], (std::vector<double>{64, 3, 7, 7}));
  EXPECT_EQ(got[2], (std::vector<double>{1, 64, 1, 1}));
  EXPECT_EQ(got[3], (std::vector<double>{1}));
  EXPECT_EQ(got[4], (std::vector<double>{w.data().at(0), w.data().at(1), w.data().at(2)}));
  EXPECT_EQ(got[5], (std::vector<double>{b.data().at(62), b.data().at(63)}));
}

TEST(TpuLangEmit, QuantizedElementTypes) {
  Graph g("bm1684x");
  Tensor x = g.tensor({1, 3, 8, 8}, "x", "uint8", {}, false, {0.0157}, {128});
  Tensor w = g.tensor({2, 3, 3, 3}, "w", "int8", weights({2, 3, 3, 3}, 3, DType::kInt8), true);
  Tensor y = conv_v2(x, w, {}, {}, {}, {1, 1, 1, 1}, 1, {}, {5, -3}, "", "conv_int");
  EXPECT_EQ(y.dtype(), "int32");
  Tensor a = g.tensor({1, 2, 8, 8}, "a", "int8");
  Tensor s = add(y, a, {0.5, 0.25, 0.125}, {0, 1, 2}, "int8", "sum");
  const std::string text = emit_top(g, "Quant", {x, a}, {s}).mlir;
  EXPECT_NE(text.find("module.chip = \"BM1684X\""), std::string::npos) << text;
  EXPECT_NE(text.find("tensor<1x3x8x8x!quant.uniform<u8:f32, 1.570000e-02:128>>"), std::string::npos) << text;
  EXPECT_NE(text.find("tensor<2x3x3x3x!quant.uniform<i8:f32:0, {1.000000e+00:5,1.000000e+00:-3}>>"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\"top.None\"() : () -> none loc(#loc)"), std::string::npos) << text;
  EXPECT_NE(text.find("-> tensor<1x2x8x8x!quant.uniform<i32:f32, 5.000000e-01>>"), std::string::npos) << text;
  EXPECT_NE(text.find("tensor<1x2x8x8x!quant.uniform<i8:f32, 1.250000e-01:2>>"), std::string::npos) << text;
  compile(g, "Quant", {x, a}, {s}, emit_dir());
}

TEST(TpuLangEmit, QuantizationSteps) {
  Graph g;
  Tensor x = g.tensor({1, 2, 4, 4}, "x");
  Tensor q = requant_fp_to_int(x, {0.5}, {3}, 0, "int8", "q");
  Tensor r = requant_int(q, {3, 5}, {2, 3}, {1}, 2, "int8", "r", "half_to_even");
  Tensor d = dequant_int(r, {7}, {1}, {0}, 2, 1, "int16", "d");
  Tensor f = dequant_int_to_fp(d, {0.25, 0.125}, {0}, "float32", "f");
  EXPECT_EQ(f.shape(), x.shape());
  const std::string text = emit_top(g, "QuantSteps", {x}, {f}).mlir;
  EXPECT_NE(text.find("\"top.Cast\"(%0) {round_mode = \"HalfAwayFromZero\"} : (tensor<1x2x4x4xf32>) -> "
                      "tensor<1x2x4x4x!quant.uniform<i8:f32, 5.000000e-01:3>>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("{multiplier = [3, 5], quant_mode = \"MultiplierShift\", round_mode = \"HalfToEven\", rshift = "
                      "[-2, -3]}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("{lshift = 2 : i64, multiplier = [7], quant_mode = \"TFLite\", round_mode = \"HalfUp\", "
                      "shift = [1]}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("tensor<1x2x4x4x!quant.uniform<i16:f32:1, {2.500000e-01,1.250000e-01}>>"), std::string::npos)
      << text;
  compile(g, "QuantSteps", {x}, {f}, emit_dir());
}

TEST(TpuLangEmit, SeveralOutputsAndEscapedNames) {
  Graph g;
  Tensor x = g.tensor({2, 4}, "in \"0\"");
  Tensor r = relu(x, "r");
  Tensor t = tanh(x, "t");
  const std::string text = emit_top(g, "Two", {x}, {r, t}).mlir;
  EXPECT_NE(text.find("-> (tensor<2x4xf32>, tensor<2x4xf32>) {"), std::string::npos) << text;
  EXPECT_NE(text.find("return %1, %2 : tensor<2x4xf32>, tensor<2x4xf32> loc(#loc)"), std::string::npos) << text;
  EXPECT_NE(text.find("#loc1 = loc(\"in \\220\\22\")"), std::string::npos) << text;
  compile(g, "Two", {x}, {r, t}, emit_dir());
}

TEST(TpuLangEmit, FloatsAsMlirPrintsThem) {
  EXPECT_EQ(mlir_float(-1.0), "-1.000000e+00");
  EXPECT_EQ(mlir_float(0.0157), "1.570000e-02");
  EXPECT_EQ(mlir_float(1.0 / 3.0), "0.33333333333333331");
  EXPECT_EQ(mlir_float(123456789.0), "123456789.0");
}

// One graph using every op function, written for mlir-opt to parse.
TEST(TpuLangEmit, EveryOp) {
  Graph g;
  Tensor x = g.tensor({1, 4, 8, 8}, "x");
  Tensor out = every_op_graph(g, x);
  EXPECT_EQ(out.shape(), (Shape{1, 5, 2}));
  const std::string text = emit_top(g, "EveryOp", {x}, {out}).mlir;
  for (const char* op :
       {"top.Conv",      "top.Deconv",  "top.MaxPool", "top.AvgPool", "top.Relu",      "top.LeakyRelu", "top.Sigmoid",
        "top.GELU",      "top.Clip",    "top.PRelu",   "top.Tanh",    "top.Concat",    "top.Add",       "top.Sub",
        "top.Mul",       "top.Div",     "top.Reshape", "top.MatMul",  "top.LayerNorm", "top.Permute",   "top.Softmax",
        "top.Unsqueeze", "top.Squeeze", "top.Slice",   "top.None"})
    EXPECT_NE(text.find(std::string("\"") + op + "\""), std::string::npos) << op;
  EXPECT_NE(text.find("{alpha = 1.000000e-01 : f64}"), std::string::npos) << text;
  EXPECT_NE(text.find("{axis = 1 : si32}"), std::string::npos) << text;
  CompiledFiles files = compile(g, "EveryOp", {x}, {out}, emit_dir());
  auto keys = testing::numpy::eval("len(d.keys())", "d = np.load('" + files.weight_path + "')");
  EXPECT_EQ(keys, (std::vector<double>{6}));
}

TEST(TpuLangEmit, GlobalGraph) {
  init("cpu");
  Tensor x({1, 2, 4, 4}, "x");
  Tensor w({3, 2, 1, 1}, "w", "float32", weights({3, 2, 1, 1}, 10));
  Tensor y = relu(conv(x, w), "y");
  CompiledFiles files = compile("GlobalConv", {x}, {y}, emit_dir());
  EXPECT_TRUE(std::filesystem::exists(files.mlir_path));
  deinit();
  EXPECT_NE(error_of([&] { relu(y); }).find("belongs to a graph that was released"), std::string::npos);
  EXPECT_NE(error_of([&] { Tensor({1}); }).find("call tpulang::init(device) first"), std::string::npos);
}

TEST(TpuLangEmit, CompileErrors) {
  Graph g;
  Tensor x = g.tensor({1, 4}, "x");
  Tensor y = relu(x);
  Tensor orphan = g.tensor({1, 4}, "orphan");
  Tensor z = add(y, orphan);
  EXPECT_NE(error_of([&] { emit_top(g, "M", {x}, {z}); }).find("'orphan', which is neither a graph input"),
            std::string::npos);
  EXPECT_NE(error_of([&] { emit_top(g, "M", {y}, {z}); }).find("not a graph input"), std::string::npos);
  EXPECT_NE(error_of([&] { emit_top(g, "M", {x}, {}); }).find("at least one output"), std::string::npos);
  Graph other;
  Tensor foreign = other.tensor({1}, "f");
  EXPECT_NE(error_of([&] { emit_top(g, "M", {x}, {foreign}); }).find("belongs to another graph"), std::string::npos);
}

}  // namespace
}  // namespace kiln::tpulang
