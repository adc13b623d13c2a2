// QnnLegalize: before/after IR text for each qnn op (per tensor and per channel), a property
// test (random quantized modules interpret to identical integers and bits before and after),
// and compiled-vs-reference: build() leaves no qnn op on a reference kernel and its outputs
// equal the interpreter's on the unlegalized module.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kiln/backend/build.h"
#include "kiln/interp/interpreter.h"
#include "kiln/runtime/graph_executor.h"
#include "runtime/runtime_test_util.h"
#include "transform/pass_test_util.h"

namespace kiln {
namespace {

using testing::expect_pass_result;
using testing::run_pass;

// ----- golden before/after -----

TEST(QnnLegalize, QuantizePerTensorDividesRoundsAndCasts) {
  expect_pass_result("QnnLegalize", R"(
def @main(%x: Tensor[(2, 3), float32], %s: Tensor[(), float32], %z: Tensor[(), uint8]) {
  qnn.quantize(%x, %s, %z, out_dtype="uint8")
})",
                     R"(
def @main(%x: Tensor[(2, 3), float32], %s: Tensor[(), float32], %z: Tensor[(), uint8]) {
  %0 = divide(%x, %s);
  %1 = round(%0);
  %2 = cast(%z, dtype="float32");
  %3 = add(%1, %2);
  cast(%3, dtype="uint8")
})");
}

TEST(QnnLegalize, QuantizePerChannelToInt32AddsInDouble) {
  expect_pass_result("QnnLegalize", R"(
def @main(%x: Tensor[(2, 3, 4), float32], %s: Tensor[(3), float32], %z: Tensor[(3), int32]) {
  qnn.quantize(%x, %s, %z, axis=1, out_dtype="int32")
})",
                     R"(
def @main(%x: Tensor[(2, 3, 4), float32], %s: Tensor[(3), float32], %z: Tensor[(3), int32]) {
  %0 = expand_dims(%s, axis=1, num_newaxis=1);
  %1 = divide(%x, %0);
  %2 = round(%1);
  %3 = cast(%2, dtype="float64");
  %4 = expand_dims(%z, axis=1, num_newaxis=1);
  %5 = cast(%4, dtype="float64");
  %6 = add(%3, %5);
  cast(%6, dtype="int32")
})");
}

TEST(QnnLegalize, DequantizeEightBitsInFloat32) {
  expect_pass_result("QnnLegalize", R"(
def @main(%x: Tensor[(4), uint8], %s: Tensor[(1), float32], %z: Tensor[(1), uint8]) {
  qnn.dequantize(%x, %s, %z)
})",
                     R"(
def @main(%x: Tensor[(4), uint8], %s: Tensor[(1), float32], %z: Tensor[(1), uint8]) {
  %0 = cast(%x, dtype="int32");
  %1 = reshape(%z, newshape=[]);
  %2 = cast(%1, dtype="int32");
  %3 = subtract(%0, %2);
  %4 = cast(%3, dtype="float32");
  %5 = reshape(%s, newshape=[]);
  multiply(%4, %5)
})");
}

TEST(QnnLegalize, DequantizeInt32PerChannelInDouble) {
  expect_pass_result("QnnLegalize", R"(
def @main(%x: Tensor[(2, 3), int32], %s: Tensor[(2), float32], %z: Tensor[(2), int32]) {
  qnn.dequantize(%x, %s, %z, axis=0)
})",
                     R"(
def @main(%x: Tensor[(2, 3), int32], %s: Tensor[(2), float32], %z: Tensor[(2), int32]) {
  %0 = cast(%x, dtype="int64");
  %1 = expand_dims(%z, axis=1, num_newaxis=1);
  %2 = cast(%1, dtype="int64");
  %3 = subtract(%0, %2);
  %4 = cast(%3, dtype="float64");
  %5 = expand_dims(%s, axis=1, num_newaxis=1);
  %6 = cast(%5, dtype="float64");
  %7 = multiply(%4, %6);
  cast(%7, dtype="float32")
})");
}

// QLinearConv's requantize: the accumulator's zero point is the constant 0.
TEST(QnnLegalize, RequantizeHalfToEvenPerChannel) {
  expect_pass_result("QnnLegalize", R"(
def @main(%x: Tensor[(1, 4, 2, 2), int32], %si: Tensor[(4), float32], %so: Tensor[(), float32], %zo: Tensor[(), uint8]) {
  qnn.requantize(%x, %si, 0, %so, %zo, axis=1, rounding="HALF_TO_EVEN", out_dtype="uint8")
})",
                     R"(
def @main(%x: Tensor[(1, 4, 2, 2), int32], %si: Tensor[(4), float32], %so: Tensor[(), float32], %zo: Tensor[(), uint8]) {
  %0 = cast(%x, dtype="float64");
  %1 = expand_dims(%si, axis=1, num_newaxis=2);
  %2 = cast(%1, dtype="float64");
  %3 = multiply(%0, %2);
  %4 = cast(%so, dtype="float64");
  %5 = divide(%3, %4);
  %6 = round(%5);
  %7 = cast(%zo, dtype="float64");
  %8 = add(%6, %7);
  cast(%8, dtype="uint8")
})");
}

TEST(QnnLegalize, RequantizeUpwardAndToNearest) {
  const std::string params = "%x: Tensor[(5), int32], %z: Tensor[(), int32]";
  expect_pass_result("QnnLegalize", "def @main(" + params + ") { qnn.requantize(%x, 1f, %z, 2f, 0i8) }",
                     "def @main(" + params +
                         R"() {
  %0 = cast(%x, dtype="float64");
  %1 = cast(%z, dtype="float64");
  %2 = subtract(%0, %1);
  %3 = cast(1f, dtype="float64");
  %4 = multiply(%2, %3);
  %5 = cast(2f, dtype="float64");
  %6 = divide(%4, %5);
  %7 = add(%6, 0.5f64);
  %8 = floor(%7);
  cast(%8, dtype="int8")
})");
  expect_pass_result("QnnLegalize",
                     "def @main(" + params + ") { qnn.requantize(%x, 1f, %z, 2f, 0i8, rounding=\"TONEAREST\") }",
                     "def @main(" + params +
                         R"() {
  %0 = cast(%x, dtype="float64");
  %1 = cast(%z, dtype="float64");
  %2 = subtract(%0, %1);
  %3 = cast(1f, dtype="float64");
  %4 = multiply(%2, %3);
  %5 = cast(2f, dtype="float64");
  %6 = divide(%4, %5);
  %7 = trunc(%6);
  %8 = subtract(%6, %7);
  %9 = abs(%8);
  %10 = greater_equal(%9, 0.5f64);
  %11 = less(%6, 0f64);
  %12 = subtract(%7, 1f64);
  %13 = add(%7, 1f64);
  %14 = where(%11, %12, %13);
  %15 = where(%10, %14, %7);
  cast(%15, dtype="int8")
})");
}

TEST(QnnLegalize, Conv2dShiftsOperandsIntoInt16) {
  expect_pass_result("QnnLegalize", R"(
def @main(%x: Tensor[(1, 3, 5, 5), uint8], %w: Tensor[(4, 3, 3, 3), int8], %xz: Tensor[(), uint8], %wz: Tensor[(4), int8]) {
  qnn.conv2d(%x, %w, %xz, %wz, 1f, 1f, padding=[1, 1, 1, 1])
})",
                     R"(
def @main(%x: Tensor[(1, 3, 5, 5), uint8], %w: Tensor[(4, 3, 3, 3), int8], %xz: Tensor[(), uint8], %wz: Tensor[(4), int8]) {
  %0 = cast(%x, dtype="int16");
  %1 = cast(%xz, dtype="int16");
  %2 = subtract(%0, %1);
  %3 = cast(%w, dtype="int16");
  %4 = expand_dims(%wz, axis=1, num_newaxis=3);
  %5 = cast(%4, dtype="int16");
  %6 = subtract(%3, %5);
  nn.conv2d(%2, %6, padding=[1, 1, 1, 1], out_dtype="int32")
})");
}

TEST(QnnLegalize, Conv2dToInt8SaturatesWhenTheSumFitsInt32) {
  expect_pass_result("QnnLegalize", R"(
def @main(%x: Tensor[(1, 2, 3, 3), int8], %w: Tensor[(2, 2, 1, 1), int8]) {
  qnn.conv2d(%x, %w, 0i8, 0i8, 1f, 1f, out_dtype="int8")
})",
                     R"(
def @main(%x: Tensor[(1, 2, 3, 3), int8], %w: Tensor[(2, 2, 1, 1), int8]) {
  %0 = cast(%x, dtype="int16");
  %1 = cast(%w, dtype="int16");
  %2 = nn.conv2d(%0, %1, out_dtype="int32");
  %3 = clip(%2, a_min=-128f, a_max=127f);
  cast(%3, dtype="int8")
})");
}

TEST(QnnLegalize, MatmulShiftsRowsOfAAndColumnsOfB) {
  expect_pass_result("QnnLegalize", R"(
def @main(%a: Tensor[(2, 3, 4), uint8], %b: Tensor[(4, 5), int8], %az: Tensor[(3), uint8], %bz: Tensor[(5), int8]) {
  qnn.matmul(%a, %b, %az, %bz, 1f, 1f)
})",
                     R"(
def @main(%a: Tensor[(2, 3, 4), uint8], %b: Tensor[(4, 5), int8], %az: Tensor[(3), uint8], %bz: Tensor[(5), int8]) {
  %0 = cast(%a, dtype="int16");
  %1 = expand_dims(%az, axis=1, num_newaxis=1);
  %2 = cast(%1, dtype="int16");
  %3 = subtract(%0, %2);
  %4 = cast(%b, dtype="int16");
  %5 = cast(%bz, dtype="int16");
  %6 = subtract(%4, %5);
  nn.matmul(%3, %6, out_dtype="int32")
})");
}

// A zero point of a wide dtype could shift an operand out of int16: the call stays.
TEST(QnnLegalize, KeepsAConvolutionWhoseShiftMayLeaveInt16) {
  const std::string text = R"(
def @main(%x: Tensor[(1, 1, 2, 2), uint8], %w: Tensor[(1, 1, 1, 1), uint8], %xz: Tensor[(), int32]) {
  qnn.conv2d(%x, %w, %xz, 0u8, 1f, 1f)
})";
  expect_pass_result("QnnLegalize", text, text);
}

// ----- property: the interpreter gives identical results before and after -----

NDArray random_values(const Shape& shape, DType dtype, double low, double high, std::mt19937& gen) {
  NDArray a = NDArray::empty(shape, dtype);
  std::uniform_real_distribution<double> real(low, high);
  std::uniform_int_distribution<int64_t> integer(static_cast<int64_t>(low), static_cast<int64_t>(high));
  for (int64_t i = 0; i < a.numel(); ++i) a.set(i, is_float(dtype) ? real(gen) : static_cast<double>(integer(gen)));
  return a;
}

struct QnnCase {
  std::string text;
  std::vector<NDArray> args;
};

std::string shape_text(const Shape& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out;
}

std::string tensor_text(const Shape& s, DType t) {
  return "Tensor[(" + shape_text(s) + "), " + std::string(dtype_name(t)) + "]";
}

// Random modules: each qnn op, 8-bit dtypes of both signs, per tensor or per channel, scales
// that make ties, and quantize inputs beyond the output's range (saturation) and NaN-free.
class QnnCaseGenerator {
 public:
  explicit QnnCaseGenerator(unsigned seed) : gen_(seed) {}

  QnnCase make(int which) {
    switch (which % 5) {
      case 0: return quantize();
      case 1: return dequantize();
      case 2: return requantize();
      case 3: return conv2d();
      default: return matmul();
    }
  }

 private:
  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen_); }
  DType eight_bit() { return pick(0, 1) ? DType::kUInt8 : DType::kInt8; }
  double low_of(DType t) { return t == DType::kUInt8 ? 0 : t == DType::kInt8 ? -128 : -100000; }
  double high_of(DType t) { return t == DType::kUInt8 ? 255 : t == DType::kInt8 ? 127 : 100000; }
  // A scale of 2^-k or a random one: powers of two make exact ties.
  NDArray scales(const Shape& s) {
    NDArray a = random_values(s, DType::kFloat32, 0.01, 0.5, gen_);
    if (pick(0, 1))
      for (int64_t i = 0; i < a.numel(); ++i) a.set(i, std::ldexp(1.0, static_cast<int>(-pick(0, 3))));
    return a;
  }
  NDArray zero_points(const Shape& s, DType t) { return random_values(s, t, low_of(t), high_of(t), gen_); }

  QnnCase quantize() {
    Shape shape{pick(1, 3), pick(1, 4), pick(1, 5)};
    const int64_t axis = pick(0, 2);
    const bool per_channel = pick(0, 1);
    const DType out = pick(0, 2) == 2 ? DType::kInt32 : eight_bit();
    Shape p = per_channel ? Shape{shape[static_cast<size_t>(axis)]} : Shape{};
    QnnCase c;
    c.text = "def @main(%x: " + tensor_text(shape, DType::kFloat32) + ", %s: " + tensor_text(p, DType::kFloat32) +
             ", %z: " + tensor_text(p, out) + ") { qnn.quantize(%x, %s, %z, axis=" + std::to_string(axis) +
             ", out_dtype=\"" + std::string(dtype_name(out)) + "\") }";
    NDArray x = random_values(shape, DType::kFloat32, -80, 80, gen_);
    for (int64_t i = 0; i < x.numel(); i += 3) x.set(i, std::round(x.at(i) * 8) / 8);  // ties
    c.args = {x, scales(p), zero_points(p, out)};
    return c;
  }

  QnnCase dequantize() {
    Shape shape{pick(1, 4), pick(1, 6)};
    const int64_t axis = pick(0, 1);
    const bool per_channel = pick(0, 1);
    const DType in = pick(0, 2) == 2 ? DType::kInt32 : eight_bit();
    Shape p = per_channel ? Shape{shape[static_cast<size_t>(axis)]} : Shape{1};
    QnnCase c;
    c.text = "def @main(%x: " + tensor_text(shape, in) + ", %s: " + tensor_text(p, DType::kFloat32) +
             ", %z: " + tensor_text(p, in) + ") { qnn.dequantize(%x, %s, %z, axis=" + std::to_string(axis) + ") }";
    c.args = {zero_points(shape, in), scales(p), zero_points(p, in)};
    return c;
  }

  QnnCase requantize() {
    Shape shape{pick(1, 2), pick(1, 4), pick(1, 3), pick(1, 3)};
    const bool per_channel = pick(0, 1);
    const DType out = eight_bit();
    const char* rules[] = {"UPWARD", "TONEAREST", "HALF_TO_EVEN"};
    Shape p = per_channel ? Shape{shape[1]} : Shape{};
    QnnCase c;
    c.text = "def @main(%x: " + tensor_text(shape, DType::kInt32) + ", %si: " + tensor_text(p, DType::kFloat32) +
             ", %zi: " + tensor_text(Shape{}, DType::kInt32) + ", %so: " + tensor_text(Shape{}, DType::kFloat32) +
             ", %zo: " + tensor_text(Shape{}, out) + ") { qnn.requantize(%x, %si, %zi, %so, %zo, axis=1, rounding=\"" +
             rules[pick(0, 2)] + "\", out_dtype=\"" + std::string(dtype_name(out)) + "\") }";
    c.args = {random_values(shape, DType::kInt32, -3000, 3000, gen_), scales(p),
              random_values({}, DType::kInt32, -50, 50, gen_), scales({}), zero_points({}, out)};
    return c;
  }

  QnnCase conv2d() {
    const int64_t groups = pick(1, 2), icg = pick(1, 3), ocg = pick(1, 3), k = pick(1, 3);
    Shape xs{pick(1, 2), groups * icg, pick(k, 6), pick(k, 6)}, ws{groups * ocg, icg, k, k};
    const DType xt = eight_bit(), wt = eight_bit();
    const bool per_channel = pick(0, 1);
    Shape wzs = per_channel ? Shape{ws[0]} : Shape{};
    const int64_t pad = pick(0, 1), stride = pick(1, 2);
    QnnCase c;
    c.text = "def @main(%x: " + tensor_text(xs, xt) + ", %w: " + tensor_text(ws, wt) +
             ", %xz: " + tensor_text(Shape{}, xt) + ", %wz: " + tensor_text(wzs, wt) +
             ") { qnn.conv2d(%x, %w, %xz, %wz, 1f, 1f, groups=" + std::to_string(groups) + ", strides=[" +
             std::to_string(stride) + ", " + std::to_string(stride) + "], padding=[" + std::to_string(pad) + ", " +
             std::to_string(pad) + ", " + std::to_string(pad) + ", " + std::to_string(pad) + "]) }";
    c.args = {zero_points(xs, xt), zero_points(ws, wt), zero_points({}, xt), zero_points(wzs, wt)};
    return c;
  }

  QnnCase matmul() {
    const int64_t m = pick(1, 4), k = pick(1, 6), n = pick(1, 5);
    Shape as{pick(1, 2), m, k}, bs{k, n};
    const DType at = eight_bit(), bt = eight_bit();
    Shape azs = pick(0, 1) ? Shape{m} : Shape{}, bzs = pick(0, 1) ? Shape{n} : Shape{};
    QnnCase c;
    c.text = "def @main(%a: " + tensor_text(as, at) + ", %b: " + tensor_text(bs, bt) +
             ", %az: " + tensor_text(azs, at) + ", %bz: " + tensor_text(bzs, bt) +
             ") { qnn.matmul(%a, %b, %az, %bz, 1f, 1f) }";
    c.args = {zero_points(as, at), zero_points(bs, bt), zero_points(azs, at), zero_points(bzs, bt)};
    return c;
  }

  std::mt19937 gen_;
};

std::vector<Value> values_of(const std::vector<NDArray>& arrays) { return {arrays.begin(), arrays.end()}; }

bool has_qnn_call(const IRModule& mod) { return print_module(mod).find("qnn.") != std::string::npos; }

TEST(QnnLegalizeProperty, RandomQuantizedModulesInterpretIdentically) {
  for (unsigned seed = 0; seed < 100; ++seed) {
    QnnCaseGenerator generator(seed);
    QnnCase c = generator.make(static_cast<int>(seed));
    SCOPED_TRACE(c.text);
    IRModule before = parse_module(c.text);
    IRModule after = run_pass("QnnLegalize", c.text);
    EXPECT_FALSE(has_qnn_call(after)) << print_module(after);
    NDArray want = interpret(before, "main", values_of(c.args)).tensor();
    NDArray got = interpret(after, "main", values_of(c.args)).tensor();
    EXPECT_TRUE(want.same_as(got)) << "seed " << seed;
  }
}

// ----- compiled vs reference -----

// build() at `opt_level` leaves no fallback and gives the interpreter's values on `c`.
void expect_builds_exactly(const QnnCase& c, int opt_level) {
  IRModule mod = parse_module(c.text);
  std::vector<std::string> inputs;
  for (const Var& p : mod.lookup("main")->params) inputs.push_back(p->name);
  BuildOptions options;
  options.passes.opt_level = opt_level;
  BuiltModel built = build(mod, {}, inputs, {"y"}, options);
  EXPECT_TRUE(built.fallbacks.empty()) << built.fallbacks.front();
  runtime_test::TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  GraphExecutor executor(Artifact::load(dir.file("m.kiln")));
  for (size_t i = 0; i < inputs.size(); ++i) executor.set_input(inputs[i], c.args[i]);
  executor.run();
  NDArray want = interpret(mod, "main", values_of(c.args)).tensor();
  EXPECT_TRUE(want.same_as(executor.get_output(0))) << "opt level " << opt_level;
}

TEST(QnnLegalizeCompiled, EveryQnnOpBuildsWithoutFallbackAndMatchesTheInterpreter) {
  for (unsigned seed = 0; seed < 10; ++seed) {
    QnnCaseGenerator generator(1000 + seed);
    QnnCase c = generator.make(static_cast<int>(seed));
    SCOPED_TRACE(c.text);
    expect_builds_exactly(c, seed % 2 ? 3 : 0);
  }
}

// QLinearConv as the ONNX frontend writes it, large enough for the integer micro-kernel.
TEST(QnnLegalizeCompiled, QLinearConvChainTakesTheIntegerMicroKernel) {
  std::mt19937 gen(5);
  QnnCase c;
  c.text = R"(
def @main(%x: Tensor[(1, 16, 10, 10), uint8], %w: Tensor[(32, 16, 3, 3), int8], %b: Tensor[(32), int32],
          %ws: Tensor[(32), float32], %wz: Tensor[(32), int8]) {
  %0 = qnn.conv2d(%x, %w, 128u8, %wz, 0.02f, %ws, padding=[1, 1, 1, 1]);
  %1 = nn.bias_add(%0, %b);
  %2 = multiply(0.02f, %ws);
  qnn.requantize(%1, %2, 0, 0.1f, 7u8, axis=1, rounding="HALF_TO_EVEN", out_dtype="uint8")
})";
  c.args = {random_values({1, 16, 10, 10}, DType::kUInt8, 0, 255, gen),
            random_values({32, 16, 3, 3}, DType::kInt8, -128, 127, gen),
            random_values({32}, DType::kInt32, -5000, 5000, gen),
            random_values({32}, DType::kFloat32, 0.001, 0.01, gen), random_values({32}, DType::kInt8, -3, 3, gen)};
  expect_builds_exactly(c, 3);
  IRModule mod = parse_module(c.text);
  BuiltModel built = build(mod, {}, {"x", "w", "b", "ws", "wz"}, {"y"});
  EXPECT_NE(built.kernels_c.find("kiln_igemm_nn_s16_"), std::string::npos);
}

}  // namespace
}  // namespace kiln
