// Compute definitions of the qnn ops (src/op/qnn/): every case is lowered, compiled, run and
// compared exactly with the interpreter's reference kernels. qnn.conv2d's cases cover each path
// of nn.conv2d's plan (direct 1x1, padded rows, im2col, depthwise, generic) with uint8 and int8
// operands, scalar, 1-element and per-channel zero points, strides, padding, dilation and groups.
#include <gtest/gtest.h>

#include "op/compute_test_util.h"

namespace kiln {
namespace {

using testing::CompareOptions;
using testing::expect_compiled_matches_interpreter;

std::pair<double, double> range_of(const std::string& dtype) {
  return dtype == "uint8" ? std::pair{0.0, 255.0} : std::pair{-128.0, 127.0};
}

// Integer outputs must agree exactly.
CompareOptions exact(std::vector<std::pair<double, double>> ranges) {
  CompareOptions o;
  o.rtol = o.atol = 0;
  o.ranges = std::move(ranges);
  return o;
}

struct QConv {
  std::string data, weight, attrs;
  std::string x_dtype = "uint8", w_dtype = "int8";
  std::string w_zero_shape = "";  // "" scalar, "1" or the output channels
};

std::string qconv_fn(const QConv& c) {
  return "fn (%x: Tensor[(" + c.data + "), " + c.x_dtype + "], %w: Tensor[(" + c.weight + "), " + c.w_dtype +
         "], %xz: Tensor[(), " + c.x_dtype + "], %wz: Tensor[(" + c.w_zero_shape + "), " + c.w_dtype +
         "], Primitive=1) { qnn.conv2d(%x, %w, %xz, %wz, 1f, 1f" + (c.attrs.empty() ? "" : ", " + c.attrs) + ") }";
}

std::string expect_qconv(const QConv& c) {
  SCOPED_TRACE(c.data + " * " + c.weight + " " + c.attrs + " " + c.x_dtype + "/" + c.w_dtype);
  auto x = range_of(c.x_dtype), w = range_of(c.w_dtype);
  return expect_compiled_matches_interpreter(qconv_fn(c), exact({x, w, x, w}));
}

TEST(QnnCompute, Conv2dDirect1x1UsesTheIntegerMicroKernel) {
  std::string source = expect_qconv({"1, 16, 16, 16", "32, 16, 1, 1", ""});
  EXPECT_NE(source.find("kiln_igemm_nn_s16_8x32("), std::string::npos) << source;
  expect_qconv({"2, 7, 9, 7", "12, 7, 1, 1", "", "uint8", "uint8"});  // odd channels, partial tile
  expect_qconv({"1, 20, 10, 10", "24, 20, 1, 1", "", "int8", "int8", "24"});
}

TEST(QnnCompute, Conv2dPaddedRows) {
  std::string source = expect_qconv({"1, 8, 10, 11", "16, 8, 3, 3", "padding=[1, 1, 1, 1]"});
  EXPECT_NE(source.find("kiln_igemm_nn_s16_8x32("), std::string::npos) << source;
  expect_qconv({"2, 5, 12, 9", "12, 5, 3, 2", "padding=[1, 0, 2, 1], dilation=[2, 1]", "uint8", "uint8", "1"});
  expect_qconv({"1, 3, 9, 10", "4, 3, 1, 5", "padding=[0, 2, 0, 2]", "int8", "uint8", "4"});
}

TEST(QnnCompute, Conv2dStridedIm2col) {
  expect_qconv({"1, 3, 17, 15", "16, 3, 3, 3", "strides=[2, 2], padding=[1, 1, 1, 1]"});
  expect_qconv({"1, 6, 11, 12", "8, 6, 3, 3", "strides=[2, 1], padding=[0, 1, 2, 1]", "uint8", "uint8", "8"});
  expect_qconv({"2, 4, 9, 9", "6, 4, 3, 3", "strides=[2, 2], dilation=[2, 2], padding=[2, 2, 2, 2]"});
}

TEST(QnnCompute, Conv2dGroupsAndDepthwise) {
  expect_qconv({"1, 8, 8, 8", "4, 4, 3, 3", "groups=2, padding=[1, 1, 1, 1]", "uint8", "uint8", "4"});
  expect_qconv({"1, 16, 12, 12", "16, 1, 3, 3", "groups=16, padding=[1, 1, 1, 1]"});
  expect_qconv(
      {"1, 12, 13, 13", "12, 1, 5, 5", "groups=12, strides=[2, 2], padding=[2, 2, 2, 2]", "uint8", "int8", "12"});
  expect_qconv({"1, 8, 9, 9", "8, 1, 5, 5", "groups=8, dilation=[2, 2], padding=[4, 4, 4, 4]", "uint8", "uint8"});
}

TEST(QnnCompute, Conv2dSinglePositionAndWholeWindow) {
  expect_qconv({"1, 40, 1, 1", "24, 40, 1, 1", "", "uint8", "int8", "24"});
  expect_qconv({"1, 3, 5, 5", "4, 3, 5, 5", ""});
}

// Fused as quantize_dynamic writes it: ConvInteger, Cast, Mul by the scales, bias, activation.
TEST(QnnCompute, Conv2dWithTheDequantizingTail) {
  std::string fn =
      "fn (%x: Tensor[(1, 16, 12, 12), uint8], %w: Tensor[(24, 16, 1, 1), int8], %xz: Tensor[(), uint8], "
      "%wz: Tensor[(), int8], %s: Tensor[(), float32], %b: Tensor[(1, 24, 1, 1), float32], Primitive=1) {\n"
      "  %0 = qnn.conv2d(%x, %w, %xz, %wz, 1f, 1f);\n"
      "  %1 = cast(%0, dtype=\"float32\");\n"
      "  %2 = multiply(%1, %s);\n"
      "  %3 = add(%2, %b);\n"
      "  nn.relu(%3)\n"
      "}";
  CompareOptions o = exact({{0, 255}, {-128, 127}, {0, 255}, {-128, 127}, {0.001, 0.01}, {-1, 1}});
  o.rtol = 1e-6;
  expect_compiled_matches_interpreter(fn, o);
}

std::string quantize_fn(const std::string& shape, const std::string& param_shape, const std::string& out,
                        const std::string& attrs) {
  return "fn (%x: Tensor[(" + shape + "), float32], %s: Tensor[(" + param_shape + "), float32], %z: Tensor[(" +
         param_shape + "), " + out + "], Primitive=1) { qnn.quantize(%x, %s, %z, out_dtype=\"" + out + "\"" + attrs +
         ") }";
}

TEST(QnnCompute, QuantizeRoundsHalfToEvenAndSaturates) {
  // Inputs beyond both bounds of every output dtype.
  for (const char* out : {"uint8", "int8", "int32"}) {
    SCOPED_TRACE(out);
    auto z = range_of(out == std::string("int32") ? "int8" : out);
    expect_compiled_matches_interpreter(quantize_fn("4, 33", "", out, ""), exact({{-300, 300}, {0.5, 0.5}, z}));
    expect_compiled_matches_interpreter(quantize_fn("3, 5, 7", "5", out, ", axis=1"),
                                        exact({{-40, 40}, {0.05, 0.5}, z}));
  }
  // Multiples of 1/8 divided by 1/4: every odd multiple is a tie.
  std::string ties =
      "fn (%k: Tensor[(64), int32], %z: Tensor[(), uint8], Primitive=1) {\n"
      "  %0 = cast(%k, dtype=\"float32\");\n"
      "  %1 = multiply(%0, 0.125f);\n"
      "  qnn.quantize(%1, 0.25f, %z, out_dtype=\"uint8\")\n"
      "}";
  expect_compiled_matches_interpreter(ties, exact({{-100, 100}, {0, 255}}));
}

TEST(QnnCompute, Dequantize) {
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(4, 33), uint8], %s: Tensor[(), float32], %z: Tensor[(), uint8], Primitive=1) { "
      "qnn.dequantize(%x, %s, %z) }",
      exact({{0, 255}, {0.001, 2}, {0, 255}}));
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(2, 6, 5), int32], %s: Tensor[(6), float32], %z: Tensor[(6), int32], Primitive=1) { "
      "qnn.dequantize(%x, %s, %z, axis=1, out_dtype=\"float64\") }",
      exact({{-2e9, 2e9}, {1e-5, 1}, {-1000, 1000}}));
}

TEST(QnnCompute, RequantizeEveryRoundingRule) {
  for (const char* rule : {"UPWARD", "TONEAREST", "HALF_TO_EVEN"}) {
    SCOPED_TRACE(rule);
    // Scales 1 and 2 make (data - zero point) / 2 land on ties.
    std::string fn = std::string(
                         "fn (%x: Tensor[(5, 40), int32], %z: Tensor[(), int32], %oz: Tensor[(5), int8], "
                         "Primitive=1) { qnn.requantize(%x, 1f, %z, 2f, %oz, axis=0, rounding=\"") +
                     rule + "\") }";
    expect_compiled_matches_interpreter(fn, exact({{-600, 600}, {-5, 5}, {-128, 127}}));
  }
}

}  // namespace
}  // namespace kiln
