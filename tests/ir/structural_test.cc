#include "kiln/ir/structural.h"

#include <gtest/gtest.h>

#include "ir/text_test_util.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/type_infer.h"

namespace kiln {
namespace {

Type f32(Shape shape) { return tensor_type(std::move(shape), DType::kFloat32); }

Expr parse(std::string_view text) { return parse_expr(text); }

void expect_equal(const Expr& a, const Expr& b) {
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_TRUE(structural_equal(b, a));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
}

void expect_different(const Expr& a, const Expr& b) {
  EXPECT_FALSE(structural_equal(a, b));
  EXPECT_FALSE(structural_equal(b, a));
  EXPECT_NE(structural_hash(a), structural_hash(b));
}

TEST(Structural, BoundVariablesCorrespondByPositionNotName) {
  expect_equal(parse("fn (%a: Tensor[(2), float32]) { add(%a, %a) }"),
               parse("fn (%b: Tensor[(2), float32]) { add(%b, %b) }"));
  expect_different(parse("fn (%a: Tensor[(2), float32], %b: Tensor[(2), float32]) { add(%a, %b) }"),
                   parse("fn (%a: Tensor[(2), float32], %b: Tensor[(2), float32]) { add(%b, %a) }"));
  expect_equal(parse("fn (%x: Tensor[(2), float32]) { let %y = exp(%x); add(%y, %x) }"),
               parse("fn (%u: Tensor[(2), float32]) { let %v = exp(%u); add(%v, %u) }"));
  expect_different(parse("fn (%x: Tensor[(2), float32]) { let %y = exp(%x); add(%y, %x) }"),
                   parse("fn (%u: Tensor[(2), float32]) { let %v = exp(%u); add(%u, %v) }"));
}

TEST(Structural, FreeVariablesByIdentity) {
  Var x = make_var("x", f32({2}));
  Var other_x = make_var("x", f32({2}));
  EXPECT_TRUE(structural_equal(call_op("exp", {x}), call_op("exp", {x})));
  EXPECT_FALSE(structural_equal(call_op("exp", {x}), call_op("exp", {other_x})));
  // A bound variable never equals a free one.
  Function bound = make_function({x}, call_op("exp", {x}));
  Function uses_free = make_function({other_x}, call_op("exp", {x}));
  EXPECT_FALSE(structural_equal(bound, uses_free));
}

TEST(Structural, AttrsShapesOpsAndFunctionAttrsMatter) {
  Expr base = parse(
      "fn (%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) "
      "{ nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1]) }");
  expect_equal(base, parse("fn (%a: Tensor[(1, 3, 8, 8), float32], %b: Tensor[(4, 3, 3, 3), float32]) "
                           "{ nn.conv2d(%a, %b, strides=[2, 2], padding=[1, 1, 1, 1]) }"));
  expect_different(base, parse("fn (%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) "
                               "{ nn.conv2d(%x, %w, strides=[1, 1], padding=[1, 1, 1, 1]) }"));
  expect_different(base, parse("fn (%x: Tensor[(1, 3, 9, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) "
                               "{ nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1]) }"));
  expect_different(base, parse("fn (%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float16]) "
                               "{ nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1]) }"));
  expect_different(parse("fn (%x: Tensor[(2), float32]) { exp(%x) }"),
                   parse("fn (%x: Tensor[(2), float32]) { nn.relu(%x) }"));
  expect_different(parse("fn (%x: Tensor[(2), float32]) { exp(%x) }"),
                   parse("fn (%x: Tensor[(2), float32], Primitive=1) { exp(%x) }"));
  EXPECT_FALSE(structural_equal(parse("fn (%x: Tensor[(2), float32]) -> Tensor[(?), float32] { exp(%x) }"),
                                parse("fn (%x: Tensor[(2), float32]) -> Tensor[(2), float32] { exp(%x) }")));
  expect_different(parse("fn (%x: (Tensor[(2), float32], Tensor[(2), float32])) { %x.0 }"),
                   parse("fn (%x: (Tensor[(2), float32], Tensor[(2), float32])) { %x.1 }"));
}

TEST(Structural, ReturnTypesAreComparedWhenBothAreKnown) {
  // A function equals itself before and after InferType, and its annotated reading.
  Expr bare = parse("fn (%x: Tensor[(2), float32]) { exp(%x) }");
  Expr typed = parse("fn (%x: Tensor[(2), float32]) { exp(%x) }");
  infer_expr_type(typed);
  expect_equal(bare, typed);
  expect_equal(typed, parse("fn (%x: Tensor[(2), float32]) -> Tensor[(2), float32] { exp(%x) }"));
  EXPECT_FALSE(structural_equal(typed, parse("fn (%x: Tensor[(2), float32]) -> Tensor[(?), float32] { exp(%x) }")));
}

TEST(Structural, ConstantsByContents) {
  auto constant = [](std::vector<float> values) {
    return make_constant(NDArray::from_vector<float>({static_cast<int64_t>(values.size())}, values));
  };
  Var x = make_var("x", f32({2}));
  expect_equal(make_function({x}, call_op("add", {x, constant({1, 2})})),
               make_function({x}, call_op("add", {x, constant({1, 2})})));
  expect_different(make_function({x}, call_op("add", {x, constant({1, 2})})),
                   make_function({x}, call_op("add", {x, constant({1, 3})})));
  expect_different(parse("add(1f, 2f)"), parse("add(1f, 2f64)"));
}

TEST(Structural, SharingDoesNotMatter) {
  Var x = make_var("x", f32({2}));
  Expr shared = call_op("exp", {x});
  Function dag = make_function({x}, call_op("add", {shared, shared}));
  Function tree = make_function({x}, call_op("add", {call_op("exp", {x}), call_op("exp", {x})}));
  expect_equal(dag, tree);
}

TEST(Structural, ModulesCompareFunctionsByName) {
  IRModule a = parse_module(
      "def @f(%x: Tensor[(2), float32]) { exp(%x) }\n"
      "def @main(%y: Tensor[(2), float32]) { @f(%y) }");
  IRModule reordered = parse_module(
      "def @main(%z: Tensor[(2), float32]) { @f(%z) }\n"
      "def @f(%w: Tensor[(2), float32]) { exp(%w) }");
  EXPECT_TRUE(structural_equal(a, reordered));
  IRModule renamed = parse_module(
      "def @g(%x: Tensor[(2), float32]) { exp(%x) }\n"
      "def @main(%y: Tensor[(2), float32]) { @g(%y) }");
  EXPECT_FALSE(structural_equal(a, renamed));
  IRModule missing = parse_module("def @main(%y: Tensor[(2), float32]) { exp(%y) }");
  EXPECT_FALSE(structural_equal(a, missing));
  EXPECT_FALSE(structural_equal(missing, a));
}

TEST(Structural, LongChainsCompareAndHashIteratively) {
  Function a = testing::add_chain(50000);
  Function b = testing::add_chain(50000);
  Function c = testing::add_chain(49999);
  expect_equal(a, b);
  EXPECT_FALSE(structural_equal(a, c));
}

}  // namespace
}  // namespace kiln
