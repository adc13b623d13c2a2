// TpuLang graphs in kiln: a builder-made conv -> relu -> add block run by kiln's interpreter
// equals numpy's result, the same block compiled by build() equals the interpreter, and every
// op converts with the shapes TpuLang inferred.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/backend/build.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/printer.h"
#include "kiln/runtime/graph_executor.h"
#include "kiln/tpulang/ops.h"
#include "kiln/tpulang/to_kiln.h"
#include "op/numpy_eval.h"
#include "runtime/runtime_test_util.h"
#include "test_util.h"
#include "tpulang/tpulang_test_util.h"

namespace kiln::tpulang {
namespace {

using testing::tpulang::weights;

std::vector<Value> arguments(const std::vector<NDArray>& inputs, const KilnProgram& p) {
  std::vector<Value> args(inputs.begin(), inputs.end());
  for (const auto& [name, array] : p.params) args.emplace_back(array);
  return args;
}

std::string numpy_array(const NDArray& a) { return testing::numpy::array(a.shape(), a.to_doubles()); }

struct ConvBlock {
  Graph g;
  Tensor x, skip, out;
  NDArray w, b;
  ConvBlock() {
    x = g.tensor({1, 2, 5, 6}, "x");
    skip = g.tensor({1, 3, 5, 3}, "skip");
    w = weights({3, 2, 3, 3}, 11);
    b = weights({1, 3, 1, 1}, 12);
    // pad [top, bottom, left, right] = [1, 1, 0, 2], stride [1, 2]: oh = 5, ow = (6 + 2 - 3) / 2 + 1 = 3.
    Tensor c = conv_v2(x, g.tensor({3, 2, 3, 3}, "w", "float32", w), g.tensor({1, 3, 1, 1}, "b", "float32", b), {1, 2},
                       {}, {1, 1, 0, 2}, 1, {}, {}, "", "conv");
    out = add(relu(c, "relu"), skip, {}, {}, "", "out");
  }
};

TEST(TpuLangToKiln, ConvReluAddMatchesNumpy) {
  ConvBlock block;
  KilnProgram p = to_kiln(block.g, {block.x, block.skip}, {block.out});
  ASSERT_EQ(p.params.size(), 2u);
  EXPECT_EQ(p.params[0].first, "w");
  EXPECT_EQ(p.params[1].first, "b");
  const std::string printed = print_module(p.module);
  EXPECT_NE(printed.find("nn.conv2d"), std::string::npos) << printed;
  EXPECT_NE(printed.find("padding=[1, 0, 1, 2]"), std::string::npos) << printed;

  NDArray x = weights({1, 2, 5, 6}, 13), skip = weights({1, 3, 5, 3}, 14);
  NDArray got = interpret(p.module, "main", arguments({x, skip}, p)).tensor();
  ASSERT_EQ(got.shape(), (Shape{1, 3, 5, 3}));
  // numpy: pad, then sum over channels and taps of the strided windows.
  const std::string setup = "x = " + numpy_array(x) + "\nw = " + numpy_array(block.w) +
                            "\nb = " + numpy_array(block.b) + "\nskip = " + numpy_array(skip) +
                            "\np = np.pad(x, ((0, 0), (0, 0), (1, 1), (0, 2)))\n"
                            "y = np.zeros((1, 3, 5, 3), dtype=np.float64)\n"
                            "for i in range(5):\n"
                            "  for j in range(3):\n"
                            "    win = p[0, :, i:i + 3, 2 * j:2 * j + 3].astype(np.float64)\n"
                            "    y[0, :, i, j] = np.einsum('chw,ochw->o', win, w.astype(np.float64))\n"
                            "y = np.maximum(y + b, 0) + skip\n";
  std::vector<double> want = testing::numpy::eval("y", setup);
  ASSERT_EQ(want.size(), static_cast<size_t>(got.numel()));
  for (int64_t i = 0; i < got.numel(); ++i) EXPECT_NEAR(got.at(i), want[i], 1e-5) << i;
}

TEST(TpuLangToKiln, ConvReluAddCompiles) {
  ConvBlock block;
  KilnProgram p = to_kiln(block.g, {block.x, block.skip}, {block.out});
  NDArray x = weights({1, 2, 5, 6}, 15), skip = weights({1, 3, 5, 3}, 16);
  NDArray want = interpret(p.module, "main", arguments({x, skip}, p)).tensor();
  BuiltModel built = build(p.module, p.params, {"x", "skip"}, {"out"});
  runtime_test::TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  GraphExecutor executor(Artifact::load(dir.file("m.kiln")));
  executor.set_input("x", x);
  executor.set_input("skip", skip);
  executor.run();
  NDArray got = executor.get_output(0);
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < want.numel(); ++i) EXPECT_NEAR(got.at(i), want.at(i), 1e-5) << i;
}

// Every converted op runs, and kiln's type relations agree with TpuLang's shape inference.
TEST(TpuLangToKiln, EveryOpRunsWithTheInferredShapes) {
  Graph g;
  Tensor x = g.tensor({1, 4, 8, 8}, "x");
  std::vector<Tensor> outs;
  Tensor c =
      conv(x, g.tensor({4, 1, 3, 3}, "dw", "float32", weights({4, 1, 3, 3}, 4)), {}, {}, {2, 2}, {2, 2, 2, 2}, 4);
  Tensor d = deconv(c, g.tensor({4, 2, 2, 2}, "up", "float32", weights({4, 2, 2, 2}, 5)),
                    g.tensor({2}, "up_b", "float32", weights({2}, 6)), {2, 2}, {}, {1, 0, 1, 0}, {1, 1});
  outs.push_back(d);
  Tensor p = maxpool(c, {3, 3}, {2, 2}, {1, 0, 1, 0}, true);
  Tensor q = avgpool(c, {3, 3}, {1, 1}, {1, 1, 1, 1}, false, true);
  outs.push_back(p);
  outs.push_back(maxpool(c, {2, 2}, {2, 2}, {0, 1, 0, 1}, true));  // the 5th window would start in the padding
  Tensor act = gelu(sigmoid(leaky_relu(clamp(relu(q), 0, 0.5), 0.1)));
  Tensor pr = prelu(act, g.tensor({4}, "slope", "float32", weights({4}, 7)));
  Tensor cat2 = concat({pr, tanh(pr)}, 1);
  Tensor arith = div(mul(sub(add(cat2, cat2), g.tensor({8, 1, 1}, "shift", "float32", weights({8, 1, 1}, 13))), cat2),
                     add(sigmoid(cat2), cat2));
  Tensor flat = reshape(arith, {1, 8, -1});
  Tensor m = matmul(flat, g.tensor({5, 64}, "fc", "float32", weights({5, 64}, 8)),
                    g.tensor({5}, "fc_bias", "float32", weights({5}, 9)), true);
  Tensor ln = layer_norm(reshape(m, {1, 2, 4, 5}), g.tensor({4, 5}, "gamma", "float32", weights({4, 5}, 10)),
                         g.tensor({4, 5}, "beta", "float32", weights({4, 5}, 11)), 1e-5, 2);
  Tensor sm = softmax(permute(ln, {0, 3, 1, 2}), 1);
  outs.push_back(squeeze(unsqueeze(sm, {0, 2}), {0}));
  outs.push_back(slice(sm, {0, 1}, {1, 5}, {1, 2}, {0, 1}));
  KilnProgram prog = to_kiln(g, {x}, outs);
  Value result = interpret(prog.module, "main", arguments({weights({1, 4, 8, 8}, 12)}, prog));
  std::vector<NDArray> got = result.flatten();
  ASSERT_EQ(got.size(), outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    EXPECT_EQ(got[i].shape(), outs[i].shape()) << outs[i].name();
    for (int64_t k = 0; k < got[i].numel(); ++k) ASSERT_TRUE(std::isfinite(got[i].at(k))) << outs[i].name();
  }
  // softmax along the channel axis sums to one.
  const NDArray& s = got[3];
  for (int64_t pos = 0; pos < 2 * 4; ++pos) {
    double sum = 0;
    for (int64_t ch = 0; ch < 5; ++ch) sum += s.at(ch * 8 + pos);
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

// Quantized tensors bind as their storage type (tpulang_quantized_test.cc converts their ops).
TEST(TpuLangToKiln, QuantizedInputsBindAsTheirStorage) {
  Graph g;
  Tensor x = g.tensor({1, 2}, "x", "uint8", {}, false, {0.5}, {3});
  KilnProgram p = to_kiln(g, {x}, {x});
  EXPECT_NE(print_module(p.module).find("%x: Tensor[(1, 2), uint8]"), std::string::npos) << print_module(p.module);
}

}  // namespace
}  // namespace kiln::tpulang
