// Quantized TpuLang graphs in kiln: requant_fp_to_int -> integer conv_v2 -> requant_int ->
// dequant_int_to_fp becomes qnn.quantize / qnn.conv2d / qnn.requantize / qnn.dequantize and
// gives what the same arithmetic computes by hand, interpreted, compiled and read back from
// Top MLIR; quantized adds
// go through float; what has no conversion yet is named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "kiln/backend/build.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/printer.h"
#include "kiln/runtime/graph_executor.h"
#include "kiln/tpulang/emit.h"
#include "kiln/tpulang/ops.h"
#include "kiln/tpulang/read_top.h"
#include "kiln/tpulang/to_kiln.h"
#include "runtime/runtime_test_util.h"
#include "test_util.h"
#include "tpulang/tpulang_test_util.h"

namespace kiln::tpulang {
namespace {

using testing::tpulang::weights;

NDArray run(const KilnProgram& p, const std::vector<NDArray>& inputs) {
  std::vector<Value> args(inputs.begin(), inputs.end());
  for (const auto& [name, array] : p.params) args.emplace_back(array);
  return interpret(p.module, "main", args).tensor();
}

double saturate(double v, double lo, double hi) { return std::clamp(v, lo, hi); }

struct QuantConv {
  Graph g;
  Tensor x, out;
  NDArray w = NDArray::empty({3, 2, 3, 3}, DType::kInt8);
  NDArray b = NDArray::empty({3}, DType::kInt32);
  const std::vector<int64_t> weight_zp = {1, -2, 0};
  const std::vector<int64_t> mul = {3, 5, 7};

  QuantConv() {
    for (int64_t i = 0; i < w.numel(); ++i) w.set(i, static_cast<double>((i * 37) % 41 - 20));
    for (int64_t o = 0; o < 3; ++o) b.set(o, static_cast<double>(o * 50 - 40));
    x = g.tensor({1, 2, 5, 5}, "x");
    Tensor q = requant_fp_to_int(x, {0.05}, {3}, 0, "int8", "q", "half_to_even");
    Tensor c = conv_v2(q, g.tensor({3, 2, 3, 3}, "w", "int8", w), g.tensor({3}, "b", "int32", b), {}, {}, {1, 1, 1, 1},
                       1, {}, weight_zp, "", "acc");
    Tensor r = requant_int(c, mul, {-8}, {2}, 2, "int8", "r", "half_away_from_zero");
    out = dequant_int_to_fp(r, {0.1}, {2}, "float32", "out");
  }

  // The same arithmetic in plain C++: quantize, integer conv (padding holds the zero point),
  // multiply and shift right by 8, dequantize.
  std::vector<double> by_hand(const NDArray& input) const {
    std::vector<double> qx(static_cast<size_t>(input.numel()));
    for (int64_t i = 0; i < input.numel(); ++i)
      qx[i] = saturate(std::nearbyint(static_cast<float>(input.at(i)) / 0.05f) + 3, -128, 127);
    std::vector<double> y;
    for (int64_t o = 0; o < 3; ++o)
      for (int64_t h = 0; h < 5; ++h)
        for (int64_t v = 0; v < 5; ++v) {
          double acc = b.at(o);
          for (int64_t c = 0; c < 2; ++c)
            for (int64_t kh = 0; kh < 3; ++kh)
              for (int64_t kw = 0; kw < 3; ++kw) {
                const int64_t ih = h + kh - 1, iw = v + kw - 1;
                if (ih < 0 || ih >= 5 || iw < 0 || iw >= 5) continue;
                acc += (qx[(c * 5 + ih) * 5 + iw] - 3) * (w.at(((o * 2 + c) * 3 + kh) * 3 + kw) - weight_zp[o]);
              }
          const double r = saturate(std::round(acc * mul[o] / 256.0) + 2, -128, 127);
          y.push_back((r - 2) * 0.1);
        }
    return y;
  }
};

TEST(TpuLangQuantized, ConvChainMatchesTheArithmeticByHand) {
  QuantConv m;
  KilnProgram p = to_kiln(m.g, {m.x}, {m.out});
  const std::string printed = print_module(p.module);
  for (const char* op : {"qnn.quantize", "qnn.conv2d", "qnn.requantize", "qnn.dequantize"})
    EXPECT_NE(printed.find(op), std::string::npos) << op << "\n" << printed;
  NDArray x = weights({1, 2, 5, 5}, 31);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, x.at(i) * 4);  // spans the int8 range at scale 0.05
  NDArray got = run(p, {x});
  std::vector<double> want = m.by_hand(x);
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.size());
  // Not saturated: the values spread over many levels of the int8 output.
  EXPECT_GT(std::set<double>(want.begin(), want.end()).size(), 20u);
  for (int64_t i = 0; i < got.numel(); ++i) EXPECT_NEAR(got.at(i), want[i], 1e-6) << i;
}

TEST(TpuLangQuantized, ConvChainCompiles) {
  QuantConv m;
  KilnProgram p = to_kiln(m.g, {m.x}, {m.out});
  NDArray x = weights({1, 2, 5, 5}, 32);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, x.at(i) * 4);
  BuiltModel built = build(p.module, p.params, {"x"}, {"out"});
  runtime_test::TempDir dir;
  write_artifact(built, dir.file("q.kiln"));
  GraphExecutor executor(Artifact::load(dir.file("q.kiln")));
  executor.set_input("x", x);
  executor.run();
  NDArray got = executor.get_output(0);
  std::vector<double> want = m.by_hand(x);
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.size());
  for (int64_t i = 0; i < got.numel(); ++i) EXPECT_NEAR(got.at(i), want[i], 1e-6) << i;
}

// The quantized types and attributes survive Top MLIR: the graph read back computes the same.
TEST(TpuLangQuantized, ConvChainReadBackFromTopMlir) {
  QuantConv m;
  TopModule text = emit_top(m.g, "QuantConv", {m.x}, {m.out});
  TopGraph back = read_top(text.mlir, text.weights);
  KilnProgram p = to_kiln(*back.graph, back.inputs, back.outputs);
  NDArray x = weights({1, 2, 5, 5}, 33);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, x.at(i) * 4);
  NDArray got = run(p, {x});
  std::vector<double> want = m.by_hand(x);
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.size());
  for (int64_t i = 0; i < got.numel(); ++i) EXPECT_NEAR(got.at(i), want[i], 1e-6) << i;
}

// add with scale/zero_point [a, b, out]: real values added, the sum quantized.
TEST(TpuLangQuantized, AddDequantizesAddsAndQuantizes) {
  Graph g;
  Tensor a = g.tensor({1, 4}, "a", "int8");
  Tensor b = g.tensor({1, 4}, "b", "uint8");
  Tensor s = add(a, b, {0.5, 0.25, 0.125}, {1, 128, -3}, "int8", "s");
  KilnProgram p = to_kiln(g, {a, b}, {s});
  NDArray qa = NDArray::from_doubles({1, 4}, DType::kInt8, std::vector<double>{-7, 0, 5, 20});
  NDArray qb = NDArray::from_doubles({1, 4}, DType::kUInt8, std::vector<double>{130, 100, 255, 0});
  NDArray got = run(p, {qa, qb});
  for (int64_t i = 0; i < 4; ++i) {
    const double real = (qa.at(i) - 1) * 0.5 + (qb.at(i) - 128) * 0.25;
    EXPECT_EQ(got.at(i), saturate(std::nearbyint(real / 0.125) - 3, -128, 127)) << i;
  }
}

TEST(TpuLangQuantized, UnconvertedOpsAreNamed) {
  Graph g;
  Tensor x = g.tensor({1, 2}, "x", "int32");
  Tensor d = dequant_int(x, {3}, {1}, {0}, 0, 0, "int8", "d");
  EXPECT_NE(error_of([&] { to_kiln(g, {x}, {d}); })
                .find("node 'd': op 'tpulang.to_kiln': no kiln conversion for top.DequantInt on integer or quantized "
                      "tensors yet"),
            std::string::npos)
      << error_of([&] { to_kiln(g, {x}, {d}); });
  Graph tflite;
  Tensor y = tflite.tensor({1, 2}, "y", "int32");
  Tensor r = requant_int(y, {3}, {-1}, {0}, 0, "int8", "r");
  EXPECT_NE(error_of([&] { to_kiln(tflite, {y}, {r}); }).find("quant_mode TFLite_LShift does not convert yet"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::tpulang
