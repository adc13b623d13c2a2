#include "kiln/ir/printer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/text_test_util.h"
#include "kiln/ir/module.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/structural.h"

namespace kiln {
namespace {

using testing::squash;

Type f32(Shape shape) { return tensor_type(std::move(shape), DType::kFloat32); }

template <class T>
NDArray scalar_of(DType dtype, T value) {
  NDArray a = NDArray::empty({}, dtype);
  std::memcpy(a.raw(), &value, sizeof(T));
  return a;
}

TEST(Printer, BindsEveryCallAndLeavesTheResultInline) {
  Var x = make_var("x", f32({10, 20}));
  Expr a = call_op("add", {x, x});
  Expr b = call_op("add", {a, a});
  Function f = make_function({x}, call_op("exp", {b}));
  EXPECT_EQ(print_expr(f),
            "fn (%x: Tensor[(10, 20), float32]) {\n"
            "  %0 = add(%x, %x);\n"
            "  %1 = add(%0, %0);\n"
            "  exp(%1)\n"
            "}");
}

TEST(Printer, ModuleDefsInOrderWithAttrsAndBlankLines) {
  IRModule mod;
  Var x1 = make_var("x1", f32({1, 10}));
  mod.add("g1", make_function({x1}, x1, nullptr, Attrs{{"Inline", 1}}));
  Var p0 = make_var("p0", f32({1, 10}));
  Expr c1 = make_call(make_global_var("g1"), {p0});
  mod.add("main", make_function({p0}, call_op("add", {c1, p0})));
  EXPECT_EQ(print_module(mod),
            "def @g1(%x1: Tensor[(1, 10), float32], Inline=1) {\n"
            "  %x1\n"
            "}\n"
            "\n"
            "def @main(%p0: Tensor[(1, 10), float32]) {\n"
            "  %0 = @g1(%p0);\n"
            "  add(%0, %p0)\n"
            "}\n");
}

TEST(Printer, TypeCommentsOnCallsAndConstantsAndCheckedReturnType) {
  Var b = make_var("b", f32({10}));
  Expr eps = make_constant(NDArray::scalar(DType::kFloat32, 1e-5));
  Expr sum = call_op("add", {b, eps});
  Function f = make_function({b}, call_op("sqrt", {sum}));
  eps->set_checked_type(f32({}));
  sum->set_checked_type(f32({10}));
  f->body->set_checked_type(f32({10}));
  f->set_checked_type(func_type({f32({10})}, f32({10})));
  EXPECT_EQ(print_expr(f),
            "fn (%b: Tensor[(10), float32]) -> Tensor[(10), float32] {\n"
            "  %0 = add(%b, 1e-05f /* ty=float32 */) /* ty=Tensor[(10), float32] */;\n"
            "  sqrt(%0) /* ty=Tensor[(10), float32] */\n"
            "}");
  PrintOptions no_types;
  no_types.show_types = false;
  EXPECT_EQ(squash(print_expr(f, no_types)), "fn (%b: Tensor[(10), float32]) { %0 = add(%b, 1e-05f); sqrt(%0) }");
}

TEST(Printer, TuplesAndTypesOfAllKinds) {
  Var t = make_var("t", tuple_type({f32({2}), tensor_type({-1, 3}, DType::kInt64)}));
  Var s = make_var("s", tensor_type({}, DType::kBool));
  Expr one = make_tuple({make_tuple_get_item(t, 1)});
  Function f = make_function({t, s}, make_tuple({one, make_tuple({}), s}));
  EXPECT_EQ(squash(print_expr(f)),
            "fn (%t: (Tensor[(2), float32], Tensor[(?, 3), int64]), %s: bool) { %0 = %t.1; %1 = (%0,); %2 = (); "
            "(%1, %2, %s) }");
}

TEST(Printer, TupleFieldOfADottedNameIsParenthesised) {
  Var t = make_var("input.1", tuple_type({f32({2}), f32({2})}));
  Var u = make_var("u", tuple_type({f32({2}), f32({2})}));
  Var clash = make_var("u.0", f32({2}));
  Function f = make_function({t, u, clash}, make_tuple({make_tuple_get_item(t, 0), make_tuple_get_item(u, 0), clash}));
  std::string text = print_expr(f);
  EXPECT_NE(text.find("%0 = (%input.1).0;"), std::string::npos) << text;
  EXPECT_NE(text.find("%1 = (%u).0;"), std::string::npos) << text;
  EXPECT_TRUE(structural_equal(parse_expr(text), f)) << text;
}

TEST(Printer, DistinctVariablesWithOneNameGetSuffixes) {
  Var a = make_var("x", f32({2}));
  Var b = make_var("x", f32({2}));
  Var c = make_var("x1", f32({2}));
  Function f = make_function({a, b, c}, make_tuple({a, b, c}));
  EXPECT_EQ(squash(print_expr(f)),
            "fn (%x: Tensor[(2), float32], %x1: Tensor[(2), float32], %x11: Tensor[(2), float32]) { (%x, %x1, %x11) }");
}

TEST(Printer, NamesThatAreNotIdentifiersAreQuoted) {
  std::vector<std::pair<std::string, std::string>> cases = {
      {"input.1", "%input.1"},           {"onnx::Conv_3", "%onnx::Conv_3"},
      {"weird name", "%\"weird name\""}, {"0abc", "%\"0abc\""},
      {"a\"b", "%\"a\\\"b\""},           {"", "%v"},
      {"trailing.", "%\"trailing.\""},   {"a:b", "%\"a:b\""},
  };
  for (const auto& [name, printed] : cases) {
    Var v = make_var(name, f32({1}));
    std::string text = print_expr(make_function({v}, v));
    EXPECT_EQ(squash(text), "fn (" + printed + ": Tensor[(1), float32]) { " + printed + " }") << name;
    Function back = as_function(parse_expr(text));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->params[0]->name, name.empty() ? "v" : name);
  }
}

TEST(Printer, ScalarLiterals) {
  std::vector<std::pair<NDArray, std::string>> cases = {
      {NDArray::scalar(DType::kFloat32, 1), "1f"},
      {NDArray::scalar(DType::kFloat32, 1e-5), "1e-05f"},
      {NDArray::scalar(DType::kFloat32, -0.5), "-0.5f"},
      {NDArray::scalar(DType::kFloat32, 0.1), "0.1f"},
      {NDArray::scalar(DType::kFloat64, 1), "1f64"},
      {NDArray::scalar(DType::kFloat64, 0.1), "0.1f64"},
      {NDArray::scalar(DType::kFloat16, 1), "1f16"},
      {NDArray::scalar(DType::kFloat16, 0.1), "0.099975586f16"},
      {NDArray::scalar(DType::kInt32, 3), "3"},
      {NDArray::scalar(DType::kInt32, -7), "-7"},
      {NDArray::scalar(DType::kInt64, 3), "3i64"},
      {NDArray::scalar(DType::kInt8, -3), "-3i8"},
      {NDArray::scalar(DType::kUInt8, 200), "200u8"},
      {scalar_of<uint64_t>(DType::kUInt64, 18446744073709551615ULL), "18446744073709551615u64"},
      {NDArray::scalar(DType::kBool, 1), "True"},
      {NDArray::scalar(DType::kBool, 0), "False"},
      {scalar_of<float>(DType::kFloat32, std::numeric_limits<float>::quiet_NaN()), "nanf"},
      {scalar_of<float>(DType::kFloat32, std::numeric_limits<float>::infinity()), "inff"},
      {scalar_of<double>(DType::kFloat64, -std::numeric_limits<double>::infinity()), "-inff64"},
      {scalar_of<float>(DType::kFloat32, 1e-45f), "1e-45f"},
  };
  Var x = make_var("x", f32({1}));
  for (const auto& [value, literal] : cases) {
    Function f = make_function({x}, call_op("add", {x, make_constant(value)}));
    std::string text = print_expr(f);
    EXPECT_EQ(squash(text), "fn (%x: Tensor[(1), float32]) { add(%x, " + literal + ") }") << literal;
    EXPECT_TRUE(structural_equal(parse_expr(text), f)) << text;
  }
}

TEST(Printer, NonScalarConstantsGoToMetadataInOrderOfAppearance) {
  Var x = make_var("x", f32({2}));
  Expr w = make_constant(NDArray::from_vector<float>({2}, {1.5f, -2}));
  Expr v = make_constant(NDArray::from_vector<int32_t>({1}, {7}));
  Function f = make_function({x}, call_op("add", {call_op("multiply", {x, w}), call_op("add", {w, v})}));
  std::string text = print_expr(f);
  EXPECT_NE(text.find("%0 = multiply(%x, meta[relay.Constant][0]);"), std::string::npos) << text;
  EXPECT_NE(text.find("%1 = add(meta[relay.Constant][0], meta[relay.Constant][1]);"), std::string::npos) << text;
  // 1.5f = 0x3fc00000, -2f = 0xc0000000, little-endian; 7 as int32.
  EXPECT_NE(text.find("#[metadata]"), std::string::npos) << text;
  EXPECT_NE(text.find(R"({"dtype":"float32","shape":[2],"data":"AADAPwAAAMA="})"), std::string::npos) << text;
  EXPECT_NE(text.find(R"({"dtype":"int32","shape":[1],"data":"BwAAAA=="})"), std::string::npos) << text;
  EXPECT_TRUE(structural_equal(parse_expr(text), f));

  PrintOptions bare;
  bare.show_metadata = false;
  std::string without = print_expr(f, bare);
  EXPECT_EQ(without.find("#[metadata]"), std::string::npos);
  EXPECT_NE(without.find("meta[relay.Constant][1]"), std::string::npos);
}

TEST(Printer, NestedFunctionBindingsAreNumberedFirstAndIndented) {
  Var p0 = make_var("p0", f32({10, 20}));
  Expr a = call_op("add", {p0, p0});
  Expr b = call_op("add", {a, a});
  Function inner = make_function({p0}, call_op("exp", {b}), nullptr, Attrs{{"Primitive", 1}});
  Var x = make_var("x", f32({10, 20}));
  Function outer = make_function({x}, make_call(inner, {x}));
  EXPECT_EQ(print_expr(outer),
            "fn (%x: Tensor[(10, 20), float32]) {\n"
            "  %2 = fn (%p0: Tensor[(10, 20), float32], Primitive=1) {\n"
            "    %0 = add(%p0, %p0);\n"
            "    %1 = add(%0, %0);\n"
            "    exp(%1)\n"
            "  };\n"
            "  %2(%x)\n"
            "}");
}

TEST(Printer, LetAndIf) {
  Var c = make_var("c", tensor_type({}, DType::kBool));
  Var x = make_var("x", f32({2}));
  Var y = make_var("y");
  Expr body = make_let(y, call_op("add", {x, x}), make_if(c, call_op("exp", {y}), y));
  Function f = make_function({c, x}, body);
  EXPECT_EQ(print_expr(f),
            "fn (%c: bool, %x: Tensor[(2), float32]) {\n"
            "  let %y = add(%x, %x);\n"
            "  if (%c) {\n"
            "    exp(%y)\n"
            "  } else {\n"
            "    %y\n"
            "  }\n"
            "}");
}

TEST(Printer, NodeSharedByBothBranchesIsBoundBeforeTheIf) {
  Var c = make_var("c", tensor_type({}, DType::kBool));
  Var x = make_var("x", f32({2}));
  Expr shared = call_op("exp", {x});
  Expr cond_if = make_if(c, call_op("add", {shared, shared}), shared);
  Function f = make_function({c, x}, call_op("nn.relu", {cond_if}));
  EXPECT_EQ(squash(print_expr(f)),
            "fn (%c: bool, %x: Tensor[(2), float32]) { %0 = exp(%x); %1 = if (%c) { add(%0, %0) } else { %0 }; "
            "nn.relu(%1) }");
}

TEST(Printer, LetOutsideTailPositionIsABlock) {
  Var x = make_var("x", f32({2}));
  Var y = make_var("y", f32({2}));
  Expr block = make_let(y, call_op("exp", {x}), call_op("add", {y, y}));
  Function f = make_function({x}, make_tuple({block, x}));
  std::string text = print_expr(f);
  EXPECT_EQ(squash(text),
            "fn (%x: Tensor[(2), float32]) { %0 = { let %y: Tensor[(2), float32] = exp(%x); add(%y, %y) }; (%0, %x) }");
  EXPECT_TRUE(structural_equal(parse_expr(text), f)) << text;
}

TEST(Printer, SharedResultOfALetIsBound) {
  // let %y = f(g); g  -- g is used by the value and is the result, so it needs a name.
  Var x = make_var("x", f32({2}));
  Var y = make_var("y");
  Expr g = call_op("exp", {x});
  Function f = make_function({x}, make_let(y, call_op("nn.relu", {g}), g));
  std::string text = print_expr(f);
  EXPECT_EQ(squash(text), "fn (%x: Tensor[(2), float32]) { %0 = exp(%x); let %y = nn.relu(%0); %0 }");
  EXPECT_TRUE(structural_equal(parse_expr(text), f)) << text;
}

TEST(Printer, CallsOfLocalFunctionsAndGlobals) {
  Var fvar = make_var("f", func_type({f32({2})}, f32({2})));
  Var x = make_var("x", f32({2}));
  Expr e = make_call(fvar, {make_call(make_global_var("helper"), {x})});
  EXPECT_EQ(squash(print_expr(make_function({fvar, x}, e))),
            "fn (%f: fn (Tensor[(2), float32]) -> Tensor[(2), float32], %x: Tensor[(2), float32]) { %0 = @helper(%x); "
            "%f(%0) }");
}

TEST(Printer, CallAttributesAsStored) {
  Var x = make_var("x", f32({1, 3, 8, 8}));
  Var w = make_var("w", f32({4, 3, 3, 3}));
  Attrs attrs{{"strides", AttrValue(std::vector<int64_t>{2, 2})},
              {"padding", AttrValue(std::vector<int64_t>{1, 1, 1, 1})},
              {"data_layout", "NCHW"},
              {"out_dtype", AttrValue()},
              {"scale", 0.5},
              {"flag", true}};
  Expr conv = call_op("nn.conv2d", {x, w}, attrs);
  EXPECT_EQ(squash(print_expr(make_function({x, w}, conv))),
            "fn (%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) { nn.conv2d(%x, %w, "
            "strides=[2, 2], padding=[1, 1, 1, 1], data_layout=\"NCHW\", out_dtype=None, scale=0.5f, flag=True) }");
}

TEST(Printer, ExpressionWithFreeVariables) {
  Var x = make_var("x", f32({2}));
  Expr a = call_op("exp", {x});
  Expr e = call_op("add", {a, a});
  EXPECT_EQ(print_expr(e), "%0 = exp(%x);\nadd(%0, %0)");
  Expr back = parse_expr(print_expr(e));
  EXPECT_EQ(print_expr(back), print_expr(e));
}

TEST(Printer, LongChainDoesNotOverflowTheStack) {
  Function f = testing::add_chain(50000);
  std::string text = print_expr(f);
  EXPECT_NE(text.find("  %49998 = add(%49997, %49997);\n  add(%49998, %49998)\n}"), std::string::npos);
  PrintOptions opts;
  EXPECT_EQ(print_module(IRModule::from_function(f), opts).substr(0, 42),
            "def @main(%x: Tensor[(2), float32]) {\n  %0");
}

}  // namespace
}  // namespace kiln
