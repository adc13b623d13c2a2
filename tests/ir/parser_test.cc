#include "kiln/ir/parser.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/text_test_util.h"
#include "kiln/ir/op.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/structural.h"
#include "kiln/support/error.h"

namespace kiln {
namespace {

using testing::squash;

Type f32(Shape shape) { return tensor_type(std::move(shape), DType::kFloat32); }

std::string parse_error(std::string_view text) {
  try {
    parse_module(text, "model.relay");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Parser, DefWithTypesCallsAndAttrs) {
  IRModule mod = parse_module(
      "def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) -> Tensor[(1, 4, 4, 4), "
      "float32] {\n"
      "  %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1]) /* ty=Tensor[(1, 4, 4, 4), float32] */;\n"
      "  nn.relu(%0)\n"
      "}\n");
  ASSERT_EQ(mod.names(), std::vector<std::string>{"main"});
  const Function& f = mod.lookup("main");
  ASSERT_EQ(f->params.size(), 2u);
  EXPECT_EQ(f->params[0]->name, "x");
  EXPECT_TRUE(type_equal(f->params[1]->type_annotation, f32({4, 3, 3, 3})));
  EXPECT_TRUE(type_equal(f->ret_type, f32({1, 4, 4, 4})));
  const auto* relu = as<CallNode>(f->body);
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->op()->name, "nn.relu");
  const auto* conv = as<CallNode>(relu->args[0]);
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->op()->name, "nn.conv2d");
  EXPECT_EQ(conv->args[0], f->params[0]);
  EXPECT_EQ(conv->attrs.get_ints("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(conv->attrs.get_ints("padding"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_FALSE(f->body->checked_type());  // types in comments are not read
}

TEST(Parser, AttributeValuesOfAllKinds) {
  Expr e = parse_expr(
      "nn.relu(%x, a=[[1, 2], [3], []], b=1.5f, c=True, d=\"s \\\"q\\\"\", e=None, f=-2, g=nanf, h=-inff, "
      "i=1e-05f, j=(4, 5), k=3i64, l=2.5, m=False)");
  const auto* call = as<CallNode>(e);
  ASSERT_NE(call, nullptr);
  const Attrs& a = call->attrs;
  ASSERT_EQ(a.size(), 13u);
  const auto& nested = a.get("a").as_list();
  ASSERT_EQ(nested.size(), 3u);
  EXPECT_EQ(nested[0].as_ints(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(nested[1].as_ints(), (std::vector<int64_t>{3}));
  EXPECT_TRUE(nested[2].as_list().empty());
  EXPECT_TRUE(a.get("b").is_float());
  EXPECT_EQ(a.get_double("b"), 1.5);
  EXPECT_EQ(a.get("c"), AttrValue(true));
  EXPECT_EQ(a.get_string("d"), "s \"q\"");
  EXPECT_TRUE(a.get("e").is_none());
  EXPECT_EQ(a.get("f"), AttrValue(int64_t{-2}));
  EXPECT_TRUE(std::isnan(a.get_double("g")));
  EXPECT_EQ(a.get_double("h"), -INFINITY);
  EXPECT_EQ(a.get_double("i"), 1e-05);
  EXPECT_EQ(a.get_ints("j"), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(a.get("k"), AttrValue(int64_t{3}));
  EXPECT_EQ(a.get("l"), AttrValue(2.5));
  EXPECT_EQ(a.get("m"), AttrValue(false));
}

TEST(Parser, CommentsVersionHeaderAndBareFunction) {
  IRModule mod = parse_module(
      "#[version = \"0.0.5\"]\n"
      "// a line comment\n"
      "fn (%x /* inline */: Tensor[(2), float32]) /* ty=fn */ {\n"
      "  nn.relu(%x) // trailing\n"
      "}\n");
  ASSERT_EQ(mod.names(), std::vector<std::string>{"main"});
  EXPECT_EQ(squash(print_module(mod)), "def @main(%x: Tensor[(2), float32]) { nn.relu(%x) }");
}

TEST(Parser, GlobalsMayBeUsedBeforeTheirDefinition) {
  IRModule mod = parse_module(
      "def @main(%z: Tensor[(2), float32]) { %0 = @fn1(%z); add(%z, %0) }\n"
      "def @fn1(%x: Tensor[(2), float32]) { %x }");
  EXPECT_EQ(mod.names(), (std::vector<std::string>{"main", "fn1"}));
  const auto* call = as<CallNode>(as<CallNode>(mod.lookup("main")->body)->args[1]);
  ASSERT_NE(call, nullptr);
  ASSERT_TRUE(as_global_var(call->callee));
  EXPECT_EQ(as_global_var(call->callee)->name, "fn1");
}

TEST(Parser, ScalarLiterals) {
  struct Case {
    const char* text;
    DType dtype;
    double value;
  };
  std::vector<Case> cases = {
      {"1f", DType::kFloat32, 1},
      {"1e-05f", DType::kFloat32, double(1e-05f)},
      {"-0.5f", DType::kFloat32, -0.5},
      {"2.5", DType::kFloat32, 2.5},
      {"1f64", DType::kFloat64, 1},
      {"0.1f64", DType::kFloat64, 0.1},
      {"1f16", DType::kFloat16, 1},
      {"3", DType::kInt32, 3},
      {"-3", DType::kInt32, -3},
      {"3i64", DType::kInt64, 3},
      {"-128i8", DType::kInt8, -128},
      {"255u8", DType::kUInt8, 255},
      {"True", DType::kBool, 1},
      {"False", DType::kBool, 0},
      {"-inff", DType::kFloat32, -INFINITY},
  };
  for (const auto& c : cases) {
    Expr e = parse_expr(c.text);
    const auto* k = as<ConstantNode>(e);
    ASSERT_NE(k, nullptr) << c.text;
    EXPECT_EQ(k->data.ndim(), 0) << c.text;
    EXPECT_EQ(k->data.dtype(), c.dtype) << c.text;
    EXPECT_EQ(k->data.at(0), c.value) << c.text;
  }
  Expr nan_expr = parse_expr("nanf64");
  const auto* nan = as<ConstantNode>(nan_expr);
  ASSERT_NE(nan, nullptr);
  EXPECT_EQ(nan->data.dtype(), DType::kFloat64);
  EXPECT_TRUE(std::isnan(nan->data.at(0)));
}

TEST(Parser, VariableNamesPlainDottedAndQuoted) {
  Function f = as_function(parse_expr(
      "fn (%input.1: Tensor[(2), float32], %onnx::Conv_3: Tensor[(2), float32], %\"weird name\": Tensor[(2), "
      "float32]) { (%input.1, %onnx::Conv_3, %\"weird name\") }"));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->params[0]->name, "input.1");
  EXPECT_EQ(f->params[1]->name, "onnx::Conv_3");
  EXPECT_EQ(f->params[2]->name, "weird name");
  const auto* t = as<TupleNode>(f->body);
  ASSERT_NE(t, nullptr);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(t->fields[i], f->params[i]);
}

TEST(Parser, TupleFieldOfAVariableWrittenWithADot) {
  Function f = as_function(parse_expr(
      "fn (%p0: (Tensor[(2), float32], (Tensor[(3), float32], Tensor[(4), float32]))) { %0 = %p0.1.0; %1 = %0; "
      "(%p0.0, %1) }"));
  ASSERT_TRUE(f);
  const auto* t = as<TupleNode>(f->body);
  ASSERT_NE(t, nullptr);
  const auto* first = as<TupleGetItemNode>(t->fields[0]);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->index, 0);
  EXPECT_EQ(first->tuple, f->params[0]);
  const auto* outer = as<TupleGetItemNode>(t->fields[1]);
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->index, 0);
  const auto* inner = as<TupleGetItemNode>(outer->tuple);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->index, 1);
  EXPECT_EQ(inner->tuple, f->params[0]);
}

TEST(Parser, FreeVarDeclarations) {
  Expr e = parse_expr("free_var %x: Tensor[(2), float32];\n%0 = exp(%x);\nadd(%0, %x)");
  const auto* add = as<CallNode>(e);
  ASSERT_NE(add, nullptr);
  Var x = as_var(add->args[1]);
  ASSERT_TRUE(x);
  EXPECT_TRUE(type_equal(x->type_annotation, f32({2})));
  EXPECT_EQ(as<CallNode>(add->args[0])->args[0], x);
}

TEST(Parser, SharedBindingIsOneNode) {
  Function f = as_function(parse_expr("fn (%x: Tensor[(2), float32]) { %0 = exp(%x); add(%0, %0) }"));
  const auto* add = as<CallNode>(f->body);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->args[0], add->args[1]);
}

TEST(Parser, LetIfAndNestedFunctions) {
  Function f =
      as_function(parse_expr("fn (%c: bool, %x: Tensor[(2), float32]) {\n"
                             "  let %y: Tensor[(2), float32] = add(%x, %x);\n"
                             "  %1 = fn (%p: Tensor[(2), float32]) { %0 = exp(%p); %0 };\n"
                             "  if (%c) { %1(%y) } else { %y }\n"
                             "}"));
  ASSERT_TRUE(f);
  const auto* let = as<LetNode>(f->body);
  ASSERT_NE(let, nullptr);
  EXPECT_EQ(let->var->name, "y");
  EXPECT_TRUE(type_equal(let->var->type_annotation, f32({2})));
  const auto* branch = as<IfNode>(let->body);
  ASSERT_NE(branch, nullptr);
  EXPECT_EQ(branch->cond, f->params[0]);
  EXPECT_EQ(branch->else_branch, let->var);
  const auto* call = as<CallNode>(branch->then_branch);
  ASSERT_NE(call, nullptr);
  ASSERT_TRUE(as_function(call->callee));
  EXPECT_EQ(call->args[0], let->var);
}

TEST(Parser, MetadataConstants) {
  IRModule mod = parse_module(
      "def @main(%x: Tensor[(2), float32]) {\n"
      "  %0 = multiply(%x, meta[relay.Constant][0]);\n"
      "  add(%0, meta[relay.Constant][0])\n"
      "}\n"
      "#[metadata]\n"
      R"({"relay.Constant": [{"dtype": "float32", "shape": [2], "data": "AADAPwAAAMA="}]})");
  const auto* add = as<CallNode>(mod.lookup("main")->body);
  ASSERT_NE(add, nullptr);
  const auto* c = as<ConstantNode>(add->args[1]);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->data.shape(), Shape{2});
  EXPECT_EQ(c->data.to_doubles(), (std::vector<double>{1.5, -2}));
  EXPECT_EQ(as<CallNode>(add->args[0])->args[1], add->args[1]);  // one node per index
}

TEST(Parser, ErrorsNameLineColumnAndExpectation) {
  struct Case {
    std::string text;
    std::string message;
  };
  std::vector<Case> cases = {
      {"def @main(%x: Tensor[(2), float32]) { nn.relu(%x }",
       "model.relay:1:50: expected ',' or ')' in the argument list, found '}'"},
      {"def @main(%x: Tensor[(2), float32]) {\n  nn.frobnicate(%x)\n}", "model.relay:2:3: unknown op 'nn.frobnicate'"},
      {"def @main(%x: Tensor[(2), float32]) {\n  %0 = exp(%x);\n  add(%0, %y)\n}",
       "model.relay:3:11: undefined variable %y"},
      {"def @main(%x: Tensor[(2), float32]) { add(%x, %3) }", "model.relay:1:47: %3 is used before it is bound"},
      {"def @main(%x: Tensor[(2), float32]) { @nowhere(%x) }", "model.relay:1:39: call of undefined function @nowhere"},
      {"def @main(%x: Tensor[(2), float32]) { add(%x, 3q) }",
       "model.relay:1:47: bad literal '3q': unknown literal suffix 'q'"},
      {"def @main(%x: Tensor[(2), float32]) { add(%x, 300i8) }",
       "model.relay:1:47: bad literal '300i8': integer literal out of range for int8"},
      {"def @main(%x: Tensor[(2), flot32]) { %x }",
       "model.relay:1:27: expected a dtype such as float32, found 'flot32'"},
      {"def @main(%x: Tensor[(2), float32]) { %x } /* never closed", "model.relay:1:44: unterminated comment"},
      {"def @main(%x: Tensor[(2), float32]) { nn.relu(%x, axis=) }",
       "model.relay:1:56: expected an attribute value, found ')'"},
      {"def @main(%x: Tensor[(2), float32]) { meta[relay.Constant][0] }",
       "model.relay:1:39: meta[relay.Constant] used but the text has no #[metadata] section"},
      {"def @main(%x: Tensor[(2), float32]) { %x }\ndef @main(%y: Tensor[(2), float32]) { %y }",
       "model.relay:2:1: function @main is defined twice"},
      {"@main(%x) { %x }", "model.relay:1:1: expected 'def' or 'fn', found '@main'"},
      {"def @main(%x: Tensor[(2), float32]) { %0 = exp(%x) %0 }",
       "model.relay:1:52: expected ';' after a binding, found '%0'"},
      {"def @main(%x: Tensor[(2), float32]) { $ }", "model.relay:1:39: unexpected character '$'"},
      {"def @main(%x: Tensor[(2), float32]) {", "model.relay:1:38: expected an expression, found end of input"},
  };
  for (const auto& c : cases) {
    std::string message = parse_error(c.text);
    EXPECT_EQ(message.substr(0, c.message.size()), c.message) << c.text;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(Parser, MalformedMetadataIsAnError) {
  std::string text = "def @main(%x: Tensor[(2), float32]) { add(%x, meta[relay.Constant][0]) }\n#[metadata]\n";
  EXPECT_NE(parse_error(text + "{not json").find("model.relay:2: malformed #[metadata] section"), std::string::npos);
  EXPECT_NE(parse_error(text + R"({"relay.Constant": [{"dtype": "float32", "shape": [3], "data": "AADAPwAAAMA="}]})")
                .find("constant 0 has 8 bytes of data, expected 12"),
            std::string::npos);
  EXPECT_NE(parse_error(text + R"({"relay.Constant": []})").find("meta[relay.Constant][0] is out of range"),
            std::string::npos);
}

TEST(Parser, DeepNestingIsACleanError) {
  std::string text = "def @main(%x: Tensor[(2), float32]) { ";
  for (int i = 0; i < 5000; ++i) text += "nn.relu(";
  text += "%x";
  for (int i = 0; i < 5000; ++i) text += ")";
  text += " }";
  EXPECT_NE(parse_error(text).find("nesting deeper than"), std::string::npos);

  std::string nested_list =
      "def @main(%x: Tensor[(2), float32]) { nn.relu(%x, a=" + std::string(5000, '[') + std::string(5000, ']') + ") }";
  EXPECT_NE(parse_error(nested_list).find("nesting deeper than"), std::string::npos);
}

TEST(Parser, ModerateNestingIsFine) {
  std::string text = "fn (%x: Tensor[(2), float32]) { ";
  for (int i = 0; i < 200; ++i) text += "nn.relu(";
  text += "%x";
  for (int i = 0; i < 200; ++i) text += ")";
  text += " }";
  Function f = as_function(parse_expr(text));
  ASSERT_TRUE(f);
  // Printing binds every call: 199 bindings and the last call inline.
  EXPECT_NE(print_expr(f).find("%198 = nn.relu(%197);\n  nn.relu(%198)"), std::string::npos);
}

TEST(Parser, FiftyThousandBindings) {
  std::string text = "def @main(%x: Tensor[(2), float32]) {\n  %0 = add(%x, %x);\n";
  for (int i = 1; i < 49999; ++i) text += "  %" + std::to_string(i) + " = add(%" + std::to_string(i - 1) + ", %x);\n";
  text += "  add(%49998, %x)\n}\n";
  IRModule mod = parse_module(text);
  Expr e = mod.lookup("main")->body;
  int depth = 0;
  while (const auto* c = as<CallNode>(e)) {
    e = c->args[0];
    ++depth;
  }
  EXPECT_EQ(depth, 50000);
  EXPECT_EQ(squash(print_module(mod)), squash(text));
}

}  // namespace
}  // namespace kiln
