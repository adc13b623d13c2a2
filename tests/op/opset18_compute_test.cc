// Compute definitions of the ops of ONNX opsets 18-20 (nn.mish, nn.gelu, nn.group_norm and the
// bitwise ops): lowered, compiled and run, and compared with the interpreter's reference kernels.
#include <gtest/gtest.h>

#include "op/compute_test_util.h"

namespace kiln {
namespace {

using testing::CompareOptions;
using testing::expect_compiled_matches_interpreter;
using testing::inputs_in;

std::string unary_fn(const std::string& call, const std::string& shape, const std::string& dtype) {
  return "fn (%x: Tensor[(" + shape + "), " + dtype + "], Primitive=1) { " + call + " }";
}

TEST(Opset18Compute, Mish) {
  for (const char* dtype : {"float32", "float64"})
    expect_compiled_matches_interpreter(unary_fn("nn.mish(%x)", "3, 41", dtype), inputs_in(-30, 30));
}

TEST(Opset18Compute, GeluBothForms) {
  for (const char* dtype : {"float32", "float64"}) {
    SCOPED_TRACE(dtype);
    expect_compiled_matches_interpreter(unary_fn("nn.gelu(%x)", "2, 5, 13", dtype), inputs_in(-6, 6));
    expect_compiled_matches_interpreter(unary_fn("nn.gelu(%x, approximate=\"tanh\")", "2, 5, 13", dtype),
                                        inputs_in(-6, 6));
  }
}

TEST(Opset18Compute, GeluFusedWithBiasAdd) {
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(4, 33), float32], %b: Tensor[(33), float32], Primitive=1) "
      "{ %0 = add(%x, %b); nn.gelu(%0, approximate=\"tanh\") }");
}

std::string group_norm_fn(const std::string& shape, int64_t channels, const std::string& attrs,
                          const std::string& dtype = "float32") {
  const std::string param = "Tensor[(" + std::to_string(channels) + "), " + dtype + "]";
  return "fn (%x: Tensor[(" + shape + "), " + dtype + "], %g: " + param + ", %b: " + param +
         ", Primitive=1) { nn.group_norm(%x, %g, %b, " + attrs + ") }";
}

TEST(Opset18Compute, GroupNorm) {
  CompareOptions o;
  o.rtol = 1e-5;
  o.atol = 1e-5;
  expect_compiled_matches_interpreter(group_norm_fn("2, 6, 5, 7", 6, "num_groups=3"), o);
  expect_compiled_matches_interpreter(group_norm_fn("3, 8", 8, "num_groups=4, epsilon=0.1f"), o);
  expect_compiled_matches_interpreter(group_norm_fn("1, 4, 3, 2, 5", 4, "num_groups=1"), o);
  expect_compiled_matches_interpreter(group_norm_fn("2, 6, 9", 6, "num_groups=6", "float64"), o);
}

std::string binary_fn(const std::string& op, const std::string& lhs, const std::string& rhs, const std::string& dtype) {
  return "fn (%a: Tensor[(" + lhs + "), " + dtype + "], %b: Tensor[(" + rhs + "), " + dtype + "], Primitive=1) { " +
         op + "(%a, %b) }";
}

TEST(Opset18Compute, BitwiseOpsOnEveryIntegerWidth) {
  for (const char* dtype : {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"}) {
    SCOPED_TRACE(dtype);
    const CompareOptions o = inputs_in(dtype[0] == 'u' ? 0 : -120, 120);
    for (const char* op : {"bitwise_and", "bitwise_or", "bitwise_xor"})
      expect_compiled_matches_interpreter(binary_fn(op, "2, 3, 17", "3, 1", dtype), o);
    expect_compiled_matches_interpreter(unary_fn("bitwise_not(%x)", "5, 19", dtype), o);
  }
}

TEST(Opset18Compute, BitwiseFusedChain) {
  expect_compiled_matches_interpreter(
      "fn (%a: Tensor[(4, 9), int32], %b: Tensor[(9), int32], Primitive=1) "
      "{ %0 = bitwise_xor(%a, %b); %1 = bitwise_not(%0); bitwise_and(%1, %a) }",
      inputs_in(-1000, 1000));
}

}  // namespace
}  // namespace kiln
