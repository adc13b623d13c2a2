// The ONNX importer: loading, graph conversion order, inputs and params, errors, folding.
#include <gtest/gtest.h>

#include "frontend/onnx_test_util.h"
#include "ir/text_test_util.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/visit.h"

namespace kiln::testing {
namespace {

OnnxModel import(const OnnxModelBuilder& b, OnnxImportOptions options = {}) {
  return from_onnx_bytes(b.bytes(), options, "test.onnx");
}

// x (2, 3) -> Relu -> y
OnnxModelBuilder relu_model() {
  OnnxModelBuilder b;
  b.input("x", {2, 3}).output("y", {2, 3});
  b.node("Relu", {"x"}, {"y"}, "relu1");
  return b;
}

std::vector<std::string> op_names_in(const Expr& e) {
  std::vector<std::string> names;
  post_order_visit(e, [&](const Expr& n) {
    if (const auto* call = as<CallNode>(n))
      if (call->op()) names.push_back(call->op()->name);
  });
  return names;
}

TEST(OnnxImport, ConvertsASimpleModel) {
  OnnxModel m = import(relu_model());
  EXPECT_EQ(m.input_names, std::vector<std::string>{"x"});
  EXPECT_EQ(m.output_names, std::vector<std::string>{"y"});
  EXPECT_TRUE(m.params.empty());
  const Function& main = m.module.lookup("main");
  EXPECT_EQ(type_str(main->checked_type()), "fn (Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32]");
  Value out = interpret(m.module, "main", {Value(tensor({2, 3}, {-1, 2, -3, 4, 0, -6}))});
  expect_close(out.tensor(), {0, 2, 0, 4, 0, 0});
}

TEST(OnnxImport, EmptyTruncatedAndNonOnnxBytesFailClearly) {
  std::string good = relu_model().bytes();
  EXPECT_TRUE(
      contains(error_of([&] { from_onnx_bytes("", {}, "m.onnx"); }), "m.onnx: not an ONNX model: the file is empty"));
  std::string truncated = error_of([&] { from_onnx_bytes(good.substr(0, good.size() - 7), {}, "m.onnx"); });
  EXPECT_TRUE(contains(truncated, "m.onnx: not a valid ONNX model"));
  EXPECT_TRUE(contains(truncated, "truncated, corrupt or not ONNX"));
  EXPECT_TRUE(contains(error_of([&] { from_onnx_bytes("def @main() { 1 }\n", {}, "m.onnx"); }), "m.onnx: not"));
  // Valid protobuf that is not a model: an empty message parses, but has no graph.
  onnx::ModelProto no_graph;
  no_graph.set_ir_version(8);
  EXPECT_TRUE(contains(error_of([&] { from_onnx_bytes(no_graph.SerializeAsString(), {}, "m.onnx"); }),
                       "parses as protobuf but has no graph"));
}

TEST(OnnxImport, MissingFileIsNamed) {
  EXPECT_TRUE(
      contains(error_of([] { from_onnx_file("/no/such/dir/model.onnx"); }), "/no/such/dir/model.onnx: cannot open"));
}

TEST(OnnxImport, CheckerComplaintsAreOneLineAndCanBeSkipped) {
  OnnxModelBuilder b = relu_model();
  b.graph().mutable_node(0)->set_input(0, "");  // Relu without its required input
  std::string message = error_of([&] { import(b); });
  EXPECT_TRUE(contains(message, "test.onnx: the ONNX checker rejects the model"));
  EXPECT_TRUE(contains(message, "--no-check"));
  EXPECT_EQ(message.find('\n'), std::string::npos);
  OnnxImportOptions no_check;
  no_check.run_checker = false;
  EXPECT_TRUE(contains(error_of([&] { import(b, no_check); }), "input 0 is required but empty"));
}

TEST(OnnxImport, DanglingInputNameIsAnError) {
  OnnxModelBuilder b;
  b.input("x", {2}).output("y", {2});
  b.node("Add", {"x", "nowhere"}, {"y"}, "add1");
  OnnxImportOptions no_check;
  no_check.run_checker = false;
  std::string message = error_of([&] { import(b, no_check); });
  EXPECT_TRUE(contains(message, "node 'add1'"));
  EXPECT_TRUE(contains(message, "input 'nowhere' is not produced by any node, initializer or graph input"));
}

TEST(OnnxImport, CycleIsAnErrorNamingNodes) {
  OnnxModelBuilder b;
  b.input("x", {2}).output("y", {2});
  b.node("Add", {"x", "b"}, {"a"}, "first");
  b.node("Relu", {"a"}, {"b"}, "second");
  b.node("Relu", {"a"}, {"y"}, "third");
  OnnxImportOptions no_check;
  no_check.run_checker = false;
  for (const std::string& message : {error_of([&] { import(b, no_check); }), error_of([&] { import(b); })}) {
    EXPECT_TRUE(contains(message, "has a cycle")) << message;
    EXPECT_TRUE(contains(message, "'first'")) << message;
    EXPECT_TRUE(contains(message, "'second'")) << message;
    EXPECT_FALSE(contains(message, "'third'")) << message;
  }
}

// ONNX's checker rejects unsorted graphs; kiln orders the nodes and still runs the checker
// on everything else, in subgraphs too.
TEST(OnnxImport, UnsortedGraphPassesTheChecker) {
  OnnxModelBuilder b;
  b.input("x", {2}).output("y", {2});
  b.node("Neg", {"a"}, {"y"}, "second");
  b.node("Relu", {"x"}, {"a"}, "first");
  OnnxModel m = import(b);
  expect_close(interpret(m.module, "main", {Value(tensor({2}, {-1, 2}))}).tensor(), {0, -2});
  b.graph().mutable_node(1)->set_input(0, "");  // still checked: Relu without its input
  EXPECT_TRUE(contains(error_of([&] { import(b); }), "the ONNX checker rejects the model"));
}

TEST(OnnxImport, UnsortedAcyclicGraphImports) {
  OnnxModelBuilder b;
  b.input("x", {2}).output("y", {2});
  b.node("Neg", {"a"}, {"y"}, "second");
  b.node("Relu", {"x"}, {"a"}, "first");
  OnnxImportOptions no_check;
  no_check.run_checker = false;
  OnnxModel m = import(b, no_check);
  expect_close(interpret(m.module, "main", {Value(tensor({2}, {-1, 2}))}).tensor(), {0, -2});
}

TEST(OnnxImport, AllUnsupportedOpsAreReportedInOneError) {
  OnnxModelBuilder b(13);
  b.import_domain("com.example", 3);
  b.input("x", {2}).output("y", {2});
  b.node("Frobnicate", {"x"}, {"a"}, "f1");
  b.node("Relu", {"a"}, {"b"}, "ok");
  b.node("Frobnicate", {"b"}, {"c"}, "f2");
  b.node("Frobnicate", {"c"}, {"d"}, "f3");
  b.node("Frobnicate", {"d"}, {"e"}, "f4");
  b.node("Twiddle", {"e"}, {"g"}, "t1").set_domain("com.example");
  b.node("Nope", {"g"}, {"y"}, "n1").set_domain("org.unimported");
  // Reported before ONNX's checker runs, which would name only the first op it does not know.
  std::string message = error_of([&] { import(b); });
  EXPECT_TRUE(contains(message, "3 unsupported ONNX ops: "));
  EXPECT_TRUE(
      contains(message, "Frobnicate (domain ai.onnx, opset 13: no converter; nodes 'f1', 'f2', 'f3' and 1 more)"));
  EXPECT_TRUE(contains(message, "Twiddle (domain com.example, opset 3: no converter; node 't1')"));
  EXPECT_TRUE(contains(message, "Nope (domain org.unimported, the model imports no opset for this domain; node 'n1')"));
}

TEST(OnnxImport, OpsetBelowEveryConverterIsAClearError) {
  OnnxModelBuilder b(11);  // LessOrEqual exists from opset 12
  b.input("x", {2}).input("z", {2}).output("y", {2}, onnx::TensorProto::BOOL);
  b.node("LessOrEqual", {"x", "z"}, {"y"}, "le");
  EXPECT_TRUE(contains(error_of([&] { import(b); }),
                       "LessOrEqual (domain ai.onnx, opset 11: kiln converts it from opset 12 on; node 'le')"));
}

TEST(OnnxImport, UnknownDimensionWarnsNamingTheInputAndStaysUnknown) {
  OnnxModelBuilder b;
  b.input("data", {-1, 3}).output("y", {-1, 3});
  b.node("Relu", {"data"}, {"y"});
  OnnxModel m = import(b);
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_TRUE(contains(m.warnings[0], "input 'data' has unknown dimensions (N, 3)"));
  EXPECT_TRUE(contains(m.warnings[0], "--shape data="));
  EXPECT_EQ(type_str(m.module.lookup("main")->params[0]->type_annotation), "Tensor[(?, 3), float32]");
}

TEST(OnnxImport, ShapeAndDtypeOverridesApplyByName) {
  OnnxModelBuilder b;
  b.input("data", {-1, 3}).output("y", {-1, 3});
  b.node("Relu", {"data"}, {"y"});
  OnnxImportOptions options;
  options.shapes["data"] = {5, 3};
  options.dtypes["data"] = DType::kFloat64;
  OnnxModel m = import(b, options);
  EXPECT_TRUE(m.warnings.empty());
  EXPECT_EQ(type_str(m.module.lookup("main")->checked_type()),
            "fn (Tensor[(5, 3), float64]) -> Tensor[(5, 3), float64]");
}

TEST(OnnxImport, ShapeOverrideOfWrongRankOrUnknownNameIsAnError) {
  OnnxModelBuilder b;
  b.input("data", {-1, 3}).output("y", {-1, 3});
  b.node("Relu", {"data"}, {"y"});
  OnnxImportOptions rank;
  rank.shapes["data"] = {1, 2, 3};
  EXPECT_TRUE(
      contains(error_of([&] { import(b, rank); }),
               "--shape for input 'data' has the wrong rank (expected rank 2 like (N, 3), found rank 3 (1, 2, 3))"));
  OnnxImportOptions name;
  name.shapes["date"] = {1, 3};
  EXPECT_TRUE(contains(error_of([&] { import(b, name); }),
                       "--shape names 'date', which is not an input of the model (expected one of 'data'"));
}

TEST(OnnxImport, ParseShapeOverride) {
  EXPECT_EQ(parse_shape_override("data=1,3,224,224"), (std::pair<std::string, Shape>{"data", {1, 3, 224, 224}}));
  EXPECT_EQ(parse_shape_override("input:0=2,?"), (std::pair<std::string, Shape>{"input:0", {2, kAnyDim}}));
  EXPECT_EQ(parse_shape_override("s="), (std::pair<std::string, Shape>{"s", {}}));
  EXPECT_TRUE(contains(error_of([] { parse_shape_override("data"); }), "malformed --shape"));
  EXPECT_TRUE(contains(error_of([] { parse_shape_override("data=1,x"); }), "malformed --shape for 'data'"));
  EXPECT_TRUE(contains(error_of([] { parse_shape_override("data=1,-2"); }), "non-negative integers"));
}

// y = x + w, with w an initializer that is also listed as a graph input.
OnnxModelBuilder add_weight_model(bool weight_listed_as_input) {
  OnnxModelBuilder b;
  b.input("x", {2});
  if (weight_listed_as_input) b.input("w", {2});
  b.output("y", {2});
  b.initializer("w", tensor({2}, {10, 20}));
  b.initializer("unused", tensor({1}, {7}));
  b.node("Add", {"x", "w"}, {"y"});
  return b;
}

TEST(OnnxImport, InitializerListedAsInputIsAParamAfterTheRealInputs) {
  for (bool listed : {true, false}) {
    OnnxModel m = import(add_weight_model(listed));
    EXPECT_EQ(m.input_names, std::vector<std::string>{"x"});
    ASSERT_EQ(m.params.size(), 1u);  // the unused initializer is not a parameter
    EXPECT_EQ(m.params[0].first, "w");
    const Function& main = m.module.lookup("main");
    ASSERT_EQ(main->params.size(), 2u);
    EXPECT_EQ(main->params[0]->name, "x");
    EXPECT_EQ(main->params[1]->name, "w");
    Value out = interpret(m.module, "main", {Value(tensor({2}, {1, 2})), Value(m.params[0].second)});
    expect_close(out.tensor(), {11, 22});
    Value bound = interpret(bind_params(m.module, m.params), "main", {Value(tensor({2}, {1, 2}))});
    expect_close(bound.tensor(), {11, 22});
  }
}

TEST(OnnxImport, FreezeParamsMakesInitializersConstants) {
  OnnxImportOptions options;
  options.freeze_params = true;
  OnnxModel m = import(add_weight_model(true), options);
  EXPECT_TRUE(m.params.empty());
  const Function& main = m.module.lookup("main");
  ASSERT_EQ(main->params.size(), 1u);
  const auto* add = as<CallNode>(main->body);
  ASSERT_NE(add, nullptr);
  EXPECT_NE(as<ConstantNode>(add->args[1]), nullptr);
  expect_close(interpret(m.module, "main", {Value(tensor({2}, {1, 2}))}).tensor(), {11, 22});
}

TEST(OnnxImport, NamelessInitializerIsAnError) {
  OnnxModelBuilder b = add_weight_model(false);
  b.graph().mutable_initializer(1)->set_name("");
  OnnxImportOptions no_check;
  no_check.run_checker = false;
  EXPECT_TRUE(contains(error_of([&] { import(b, no_check); }), "initializer #1 has no name"));
}

TEST(OnnxImport, BindParamsChecksNamesAndTypes) {
  OnnxModel m = import(add_weight_model(false));
  EXPECT_TRUE(contains(error_of([&] {
                         bind_params(m.module, {{"v", tensor({2}, {0, 0})}});
                       }),
                       "@main has no parameter of that name"));
  EXPECT_TRUE(contains(error_of([&] {
                         bind_params(m.module, {{"w", tensor({3}, {0, 0, 0})}});
                       }),
                       "cannot bind 'w': the value has the wrong type (expected Tensor[(2), float32]"));
}

TEST(OnnxImport, SeveralOutputsBecomeATuple) {
  OnnxModelBuilder b;
  b.input("x", {2}).output("a", {2}).output("b", {2});
  b.node("Relu", {"x"}, {"a"});
  b.node("Neg", {"x"}, {"b"});
  OnnxModel m = import(b);
  EXPECT_EQ(m.output_names, (std::vector<std::string>{"a", "b"}));
  std::vector<NDArray> out = interpret(m.module, "main", {Value(tensor({2}, {-1, 2}))}).flatten();
  ASSERT_EQ(out.size(), 2u);
  expect_close(out[0], {0, 2});
  expect_close(out[1], {1, -2});
}

TEST(OnnxImport, AbsentOptionalInputsAreNull) {
  OnnxModelBuilder b;
  b.input("x", {3}).output("y", {3});
  b.initializer("hi", tensor({}, {1}));
  b.node("Clip", {"x", "", "hi"}, {"y"});  // no min, max 1
  OnnxModel m = import(b);
  expect_close(interpret(bind_params(m.module, m.params), "main", {Value(tensor({3}, {-5, 0.5, 3}))}).tensor(),
               {-5, 0.5, 1});
}

// x (2, 3, 4) reshaped to (x.shape[0], -1) through Shape -> Gather -> Unsqueeze -> Concat,
// as exporters write it: with static input shapes it folds to a static reshape.
TEST(OnnxImport, ShapeChainFoldsToAStaticReshape) {
  OnnxModelBuilder b;
  b.input("x", {2, 3, 4}).output_any("y");
  b.initializer("zero", NDArray::from_vector<int64_t>({}, {0}));
  b.initializer("minus_one", ints({-1}));
  b.node("Shape", {"x"}, {"shape"});
  b.node("Gather", {"shape", "zero"}, {"batch"});
  b.node("Unsqueeze", {"batch", "axes"}, {"batch1"});
  b.node("Concat", {"batch1", "minus_one"}, {"target"});
  set_attr(*b.graph().mutable_node(3), "axis", int64_t{0});
  b.node("Reshape", {"x", "target"}, {"y"});
  b.initializer("axes", ints({0}));
  OnnxModel m = import(b);
  const Function& main = m.module.lookup("main");
  EXPECT_EQ(type_str(main->checked_type()), "fn (Tensor[(2, 3, 4), float32]) -> Tensor[(2, 12), float32]");
  EXPECT_EQ(op_names_in(main->body), std::vector<std::string>{"reshape"});
  EXPECT_EQ(main->params.size(), 1u);
  EXPECT_TRUE(m.params.empty());  // the integer initializers folded away
}

// Shape / Size of a tensor with unknown dimensions are computed at run time (a static shape
// gives a constant); Shape's start / end slice the result.
TEST(OnnxImport, ShapeOfUnknownDimensionsIsComputedAtRunTime) {
  OnnxModelBuilder b(15);
  b.input("x", {-1, 3, 4}).output_any("y", onnx::TensorProto::INT64).output_any("n", onnx::TensorProto::INT64);
  set_attr(b.node("Shape", {"x"}, {"y"}, "shape1"), "start", int64_t{1});
  b.node("Size", {"x"}, {"n"}, "size1");
  std::string text = print_module(import(b).module);
  EXPECT_TRUE(contains(text, "dyn.shape_of(%x)")) << text;
  EXPECT_TRUE(contains(text, "strided_slice(%0, begin=[1], end=[3], strides=None, axes=[0]")) << text;
  EXPECT_TRUE(contains(text, "dyn.size(%x)")) << text;
}

TEST(OnnxImport, ConverterErrorsNameNodeAndOp) {
  OnnxModelBuilder b;
  b.input("x", {2, 3}).input("z", {4, 3}).output_any("y");
  b.node("Add", {"x", "z"}, {"y"}, "bad_add");
  OnnxImportOptions no_check;
  no_check.run_checker = false;
  std::string message = error_of([&] { import(b, no_check); });
  // The kiln op whose relation failed is named (an ONNX node may become several kiln ops).
  EXPECT_TRUE(contains(message, "test.onnx: node 'bad_add': op 'add': ")) << message;
  EXPECT_TRUE(contains(message, "(2, 3)"));
  EXPECT_TRUE(contains(message, "(4, 3)"));
}

TEST(OnnxImport, FixedInputsBecomeConstants) {
  OnnxModelBuilder b;
  b.input("x", {2, 3}).input("shape", {2}, onnx::TensorProto::INT64).output_any("y");
  b.node("Reshape", {"x", "shape"}, {"y"});
  // Given at run time, the shape is an operand of dyn.reshape and the result's extents are '?'.
  OnnxModel dynamic = import(b);
  EXPECT_EQ(type_str(dynamic.module.lookup("main")->checked_type()),
            "fn (Tensor[(2, 3), float32], Tensor[(2), int64]) -> Tensor[(?, ?), float32]");
  EXPECT_TRUE(contains(print_module(dynamic.module), "dyn.reshape(%x, %shape"));
  OnnxImportOptions options;
  options.fixed_inputs["shape"] = ints({3, 2});
  OnnxModel m = import(b, options);
  EXPECT_EQ(m.input_names, std::vector<std::string>{"x"});
  EXPECT_EQ(type_str(m.module.lookup("main")->checked_type()),
            "fn (Tensor[(2, 3), float32]) -> Tensor[(3, 2), float32]");
}

// 20,000 chained nodes: typing as they are converted must stay linear (and iterative).
TEST(OnnxImport, LongChainsImport) {
  OnnxModelBuilder b;
  b.input("x", {2}).output("y", {2});
  const int n = 20000;
  for (int i = 0; i < n; ++i) b.node("Neg", {i == 0 ? "x" : cat("t", i - 1)}, {i == n - 1 ? "y" : cat("t", i)});
  OnnxImportOptions no_check;
  no_check.run_checker = false;
  OnnxModel m = import(b, no_check);
  EXPECT_EQ(type_str(m.module.lookup("main")->checked_type()), "fn (Tensor[(2), float32]) -> Tensor[(2), float32]");
}

TEST(OnnxImport, ExternalDataLoadsRelativeToTheModel) {
  TempDir dir;
  NDArray w = tensor({2}, {3, 4});
  write_file(dir.file("weights.bin"), std::string("junk") + std::string(static_cast<const char*>(w.raw()), 8));
  OnnxModelBuilder b = add_weight_model(false);
  onnx::TensorProto* t = b.graph().mutable_initializer(0);
  t->clear_raw_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add_entry = [&](const std::string& k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add_entry("location", "weights.bin");
  add_entry("offset", "4");
  add_entry("length", "8");
  write_file(dir.file("model.onnx"), b.bytes());
  OnnxModel m = from_onnx_file(dir.file("model.onnx"));
  ASSERT_EQ(m.params.size(), 1u);
  expect_close(m.params[0].second, {3, 4});

  t->mutable_external_data(0)->set_value("../weights.bin");
  write_file(dir.file("escape.onnx"), b.bytes());
  OnnxImportOptions no_check;
  no_check.run_checker = false;
  EXPECT_TRUE(
      contains(error_of([&] { from_onnx_file(dir.file("escape.onnx"), no_check); }), "outside the model's directory"));
  t->mutable_external_data(0)->set_value("missing.bin");
  write_file(dir.file("missing.onnx"), b.bytes());
  EXPECT_TRUE(contains(error_of([&] { from_onnx_file(dir.file("missing.onnx"), no_check); }), "cannot be opened"));
  t->mutable_external_data(0)->set_value("weights.bin");
  t->mutable_external_data(2)->set_value("80");
  write_file(dir.file("short.onnx"), b.bytes());
  EXPECT_TRUE(contains(error_of([&] { from_onnx_file(dir.file("short.onnx"), no_check); }), "which has only 12 bytes"));
}

TEST(OnnxImport, SummaryListsRealInputsOutputsAndOps) {
  TempDir dir;
  write_file(dir.file("m.onnx"), add_weight_model(true).bytes());
  OnnxGraphSummary s = summarize_onnx_file(dir.file("m.onnx"));
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(s.inputs[0].name, "x");
  EXPECT_EQ(s.inputs[0].kind, "tensor");
  EXPECT_EQ(s.inputs[0].elem_type, "float");
  EXPECT_EQ(s.inputs[0].shape, Shape{2});
  EXPECT_EQ(s.op_types, std::vector<std::string>{"Add"});
}

}  // namespace
}  // namespace kiln::testing
