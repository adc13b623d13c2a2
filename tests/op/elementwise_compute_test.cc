// Compute definitions of the element-wise, broadcast, reduction and normalisation ops: each
// case is lowered, compiled and run, and compared with the interpreter's reference kernels.
#include <gtest/gtest.h>

#include "kiln/op/strategy.h"
#include "op/compute_test_util.h"

namespace kiln {
namespace {

using testing::CompareOptions;
using testing::expect_compiled_matches_interpreter;

std::string unary_fn(const std::string& call, const std::string& shape, const std::string& dtype) {
  return "fn (%x: Tensor[(" + shape + "), " + dtype + "], Primitive=1) { " + call + " }";
}

std::string binary_fn(const std::string& op, const std::string& lhs, const std::string& rhs, const std::string& dtype) {
  return "fn (%a: Tensor[(" + lhs + "), " + dtype + "], %b: Tensor[(" + rhs + "), " + dtype + "], Primitive=1) { " +
         op + "(%a, %b) }";
}

CompareOptions positive_inputs() { return testing::inputs_in(0.5, 3); }
CompareOptions wide_inputs() { return testing::inputs_in(-300, 300); }

TEST(ElementwiseCompute, FloatMath) {
  for (const char* op : {"sigmoid", "tanh", "exp", "erf", "sin", "cos", "tan", "atan", "floor", "ceil", "round",
                         "trunc", "abs", "negative"})
    for (const char* dtype : {"float32", "float64"}) {
      SCOPED_TRACE(std::string(op) + " " + dtype);
      expect_compiled_matches_interpreter(unary_fn(std::string(op) + "(%x)", "3, 17", dtype));
    }
  for (const char* op : {"log", "sqrt", "rsqrt"})
    expect_compiled_matches_interpreter(unary_fn(std::string(op) + "(%x)", "5, 9", "float32"), positive_inputs());
}

TEST(ElementwiseCompute, IntegerAbsNegativeWrap) {
  for (const char* dtype : {"int8", "int32", "int64", "uint8", "uint32"})
    for (const char* op : {"abs", "negative"}) {
      SCOPED_TRACE(std::string(op) + " " + dtype);
      expect_compiled_matches_interpreter(unary_fn(std::string(op) + "(%x)", "4, 33", dtype), wide_inputs());
    }
}

TEST(ElementwiseCompute, ClipBoundsPerDtype) {
  expect_compiled_matches_interpreter(unary_fn("clip(%x, a_min=-0.5f, a_max=1.25f)", "40", "float32"));
  expect_compiled_matches_interpreter(unary_fn("clip(%x, a_min=1f, a_max=-1f)", "40", "float64"));
  expect_compiled_matches_interpreter(unary_fn("clip(%x, a_min=-1e40f, a_max=1e40f)", "40", "float32"));
  // Integer bounds round inward and saturate at the dtype's range.
  expect_compiled_matches_interpreter(unary_fn("clip(%x, a_min=-100.5f, a_max=99.5f)", "50", "int8"), wide_inputs());
  expect_compiled_matches_interpreter(unary_fn("clip(%x, a_min=-1e30f, a_max=7.9f)", "50", "int32"), wide_inputs());
  expect_compiled_matches_interpreter(unary_fn("clip(%x, a_min=3.2f, a_max=1e30f)", "50", "uint16"), wide_inputs());
}

TEST(ElementwiseCompute, CastSaturatesAndWraps) {
  for (const char* to : {"int8", "uint8", "int32", "int64", "uint32", "float64", "bool"}) {
    SCOPED_TRACE(to);
    expect_compiled_matches_interpreter(unary_fn(std::string("cast(%x, dtype=\"") + to + "\")", "64", "float32"),
                                        wide_inputs());
  }
  expect_compiled_matches_interpreter(unary_fn("cast(%x, dtype=\"int8\")", "64", "int32"), wide_inputs());
  expect_compiled_matches_interpreter(unary_fn("cast(%x, dtype=\"float32\")", "64", "int64"), wide_inputs());
  expect_compiled_matches_interpreter(unary_fn("cast(%x, dtype=\"int32\")", "64", "bool"));
}

TEST(ElementwiseCompute, CastLeavesUnsupportedDtypesToReferenceKernels) {
  Expr parsed = parse_expr(unary_fn("cast(%x, dtype=\"uint64\")", "4", "float32"));
  infer_expr_type(parsed);
  EXPECT_NE(backend::compile_obstacle(*as_function(parsed)).find("uint64"), std::string::npos);
}

TEST(ElementwiseCompute, BinaryBroadcasting) {
  for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power"}) {
    SCOPED_TRACE(op);
    expect_compiled_matches_interpreter(binary_fn(op, "2, 3, 4", "3, 1", "float32"), positive_inputs());
    expect_compiled_matches_interpreter(binary_fn(op, "1, 5", "4, 1", "float64"), positive_inputs());
  }
  for (const char* op : {"add", "subtract", "multiply", "maximum", "minimum"})
    for (const char* dtype : {"int8", "int32", "uint16", "int64"}) {
      SCOPED_TRACE(std::string(op) + " " + dtype);
      expect_compiled_matches_interpreter(binary_fn(op, "3, 40", "40", dtype), wide_inputs());
    }
}

// Rows of a large element-wise stage are split into tasks of a size that divides their count
// (43904 rows of 16: 224 per task rather than 256), so no bounds test sits inside a task's rows.
TEST(ElementwiseCompute, ParallelTasksDivideTheRows) {
  const std::string source =
      expect_compiled_matches_interpreter("fn (%x: Tensor[(1, 14, 56, 56, 16), float32], Primitive=1) { exp(%x) }");
  EXPECT_NE(source.find("parallel_for(196,"), std::string::npos) << source;
  EXPECT_EQ(source.find("< 43904"), std::string::npos) << source;
}

// A blocked tensor's rows of 16 channels take the W axis as a loop of their own: the (N, C/16, H)
// index is divided once per W x 16 elements, not once per vector (EfficientNet's squeeze-excite
// multiply spent more on those divisions than on the products).
TEST(ElementwiseCompute, BlockedRowsLoopOverWidth) {
  const std::string source = expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(1, 2, 112, 112, 16), float32], %s: Tensor[(1, 2, 1, 1, 16), float32], Primitive=1) "
      "{ multiply(%x, %s) }");
  EXPECT_NE(source.find("< 112; ++"), std::string::npos) << source;
  EXPECT_EQ(source.find("% 112"), std::string::npos) << source;
}

TEST(ElementwiseCompute, FloatRemainders) {
  for (const char* op : {"mod", "floor_mod"})
    for (const char* dtype : {"float32", "float64"}) {
      SCOPED_TRACE(std::string(op) + " " + dtype);
      expect_compiled_matches_interpreter(binary_fn(op, "4, 9", "9", dtype), testing::inputs_in(-7, 7));
    }
}

TEST(ElementwiseCompute, Comparisons) {
  CompareOptions small_ints;
  small_ints.low = -2;
  small_ints.high = 2;  // many ties
  for (const char* op : {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}) {
    SCOPED_TRACE(op);
    expect_compiled_matches_interpreter(binary_fn(op, "3, 7", "7", "int32"), small_ints);
    expect_compiled_matches_interpreter(binary_fn(op, "3, 7", "3, 1", "float32"));
    expect_compiled_matches_interpreter(binary_fn(op, "6", "6", "bool"));
  }
}

TEST(ElementwiseCompute, WhereBroadcastsAllThree) {
  expect_compiled_matches_interpreter(
      "fn (%c: Tensor[(3, 1), bool], %x: Tensor[(4), float32], %y: Tensor[(2, 1, 1), float32], Primitive=1) "
      "{ where(%c, %x, %y) }");
  expect_compiled_matches_interpreter(
      "fn (%a: Tensor[(5, 6), int64], %b: Tensor[(5, 6), int64], Primitive=1) "
      "{ %0 = less(%a, %b); where(%0, %a, %b) }",
      wide_inputs());
}

TEST(ElementwiseCompute, IntegerDivideAndPowerStayOnReferenceKernels) {
  for (const char* op : {"divide", "power"}) {
    Expr parsed = parse_expr(binary_fn(op, "4", "4", "int32"));
    infer_expr_type(parsed);
    EXPECT_NE(backend::compile_obstacle(*as_function(parsed)).find("float data only"), std::string::npos) << op;
  }
}

TEST(ElementwiseCompute, Reductions) {
  CompareOptions o;
  o.rtol = 1e-5;
  o.atol = 1e-5;
  for (const char* op : {"sum", "mean", "max", "min", "prod"}) {
    SCOPED_TRACE(op);
    const std::string call = std::string(op) + "(%x";
    expect_compiled_matches_interpreter(unary_fn(call + ", axis=[1])", "3, 5, 4", "float32"), o);
    expect_compiled_matches_interpreter(unary_fn(call + ", axis=[0, 2], keepdims=True)", "3, 5, 4", "float64"), o);
    expect_compiled_matches_interpreter(unary_fn(call + ", axis=[-1], exclude=True)", "3, 5, 4", "float32"), o);
    expect_compiled_matches_interpreter(unary_fn(call + ")", "6, 7", "float32"), o);
    expect_compiled_matches_interpreter(unary_fn(call + ", axis=[1])", "4, 9", "int32"), wide_inputs());
    expect_compiled_matches_interpreter(unary_fn(call + ", axis=[0])", "5, 3", "uint8"), wide_inputs());
  }
}

TEST(ElementwiseCompute, ArgReductionsWithTies) {
  const CompareOptions ties = testing::inputs_in(-2, 2);  // integers from five values: many ties
  for (const char* op : {"argmax", "argmin"})
    for (const char* last : {"False", "True"}) {
      SCOPED_TRACE(std::string(op) + " select_last_index=" + last);
      const std::string call = std::string(op) + "(%x, select_last_index=" + last;
      expect_compiled_matches_interpreter(unary_fn(call + ", axis=[1])", "4, 9, 3", "int32"), ties);
      expect_compiled_matches_interpreter(unary_fn(call + ", axis=[0, 2], keepdims=True)", "4, 9, 3", "int64"), ties);
      expect_compiled_matches_interpreter(unary_fn(call + ")", "6, 5", "float32"));
      expect_compiled_matches_interpreter(unary_fn(call + ", axis=[-1])", "3, 17", "uint8"), wide_inputs());
    }
}

TEST(ElementwiseCompute, ReductionFusedAfterElementwise) {
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(4, 64, 33), float32], Primitive=1) { %0 = multiply(%x, %x); mean(%0, axis=[2]) }");
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(8, 300), float32], Primitive=1) { %0 = exp(%x); max(%0, axis=[1], keepdims=True) }");
}

TEST(ElementwiseCompute, SoftmaxAlongEveryAxis) {
  CompareOptions o;
  o.low = -20;
  o.high = 20;
  for (const char* op : {"nn.softmax", "nn.log_softmax"})
    for (int axis : {-1, 0, 1}) {
      SCOPED_TRACE(std::string(op) + " axis " + std::to_string(axis));
      expect_compiled_matches_interpreter(
          unary_fn(std::string(op) + "(%x, axis=" + std::to_string(axis) + ")", "3, 17, 5", "float32"), o);
    }
  expect_compiled_matches_interpreter(unary_fn("nn.softmax(%x)", "2, 4, 128, 128", "float64"), o);
}

TEST(ElementwiseCompute, LayerNorm) {
  const std::string params = "%g: Tensor[(48), float32], %b: Tensor[(48), float32]";
  expect_compiled_matches_interpreter("fn (%x: Tensor[(2, 10, 48), float32], " + params +
                                      ", Primitive=1) { nn.layer_norm(%x, %g, %b) }");
  expect_compiled_matches_interpreter("fn (%x: Tensor[(3, 48, 7), float32], " + params +
                                      ", Primitive=1) { nn.layer_norm(%x, %g, %b, axis=1, epsilon=0.1f, "
                                      "center=False, scale=False) }");
}

TEST(ElementwiseCompute, SwishIsOneDivisionInFloat32) {
  // x * sigmoid(x) in either order; float64 keeps the product.
  for (const char* body : {"%0 = add(%x, %x); %1 = sigmoid(%0); multiply(%0, %1)",
                           "%0 = add(%x, %x); %1 = sigmoid(%0); multiply(%1, %0)"}) {
    SCOPED_TRACE(body);
    const std::string c = expect_compiled_matches_interpreter(unary_fn(body, "3, 37", "float32"), wide_inputs());
    EXPECT_NE(c.find("kiln_swishf("), std::string::npos) << c;
    EXPECT_EQ(c.find("kiln_sigmoidf("), std::string::npos) << c;
    const std::string c64 = expect_compiled_matches_interpreter(unary_fn(body, "3, 37", "float64"), wide_inputs());
    EXPECT_EQ(c64.find("kiln_swishf("), std::string::npos) << c64;
  }
  // sigmoid of another value stays a sigmoid.
  const std::string other =
      expect_compiled_matches_interpreter(unary_fn("%0 = sigmoid(%x); multiply(add(%x, %x), %0)", "3, 37", "float32"));
  EXPECT_EQ(other.find("kiln_swishf("), std::string::npos) << other;
  EXPECT_NE(other.find("kiln_sigmoidf("), std::string::npos) << other;
}

TEST(ElementwiseCompute, BiasAddActivations) {
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(2, 6, 5, 5), float32], %b: Tensor[(6), float32], Primitive=1) "
      "{ %0 = nn.bias_add(%x, %b); %1 = nn.leaky_relu(%0, alpha=0.2f); sigmoid(%1) }");
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(3, 7), int32], %b: Tensor[(3), int32], Primitive=1) { nn.bias_add(%x, %b, axis=0) }",
      wide_inputs());
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(2, 5, 4), float64], %a: Tensor[(4), float64], Primitive=1) { nn.prelu(%x, %a, axis=-1) }");
}

}  // namespace
}  // namespace kiln
