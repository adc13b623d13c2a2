// ONNX control flow (If, Loop, Scan), sequences and optionals: tiny models built here,
// imported, and run through the interpreter against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/onnx_test_util.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"

namespace kiln::testing {
namespace {

void set_graph(onnx::NodeProto& n, const std::string& name, const onnx::GraphProto& g) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->CopyFrom(g);
}

NDArray f32(Shape shape, const std::vector<double>& values) { return tensor(std::move(shape), values); }
NDArray i64_scalar(int64_t v) { return NDArray::scalar(DType::kInt64, static_cast<double>(v)); }
NDArray bool_scalar(bool v) { return NDArray::scalar(DType::kBool, v ? 1.0 : 0.0); }

Value run(const OnnxModelBuilder& b, const std::vector<Value>& args, const OnnxImportOptions& options = {}) {
  OnnxModel m = from_onnx_bytes(b.bytes(), options);
  return interpret(m.module, "main", args);
}

// A one-output branch adding `k` to the outer graph's x.
onnx::GraphProto add_branch(const std::string& name, double k) {
  OnnxModelBuilder g;
  g.graph().set_name(name);
  set_attr(g.node("Constant", {}, {name + "_k"}), "value", f32({}, {k}));
  g.node("Add", {"x", name + "_k"}, {name + "_out"});
  g.output(name + "_out", {2});
  return g.graph();
}

OnnxModelBuilder if_model() {
  OnnxModelBuilder b(13);
  b.input("c", {}, onnx::TensorProto::BOOL).input("x", {2}).output("y", {2});
  auto& n = b.node("If", {"c"}, {"y"});
  set_graph(n, "then_branch", add_branch("then", 1));
  set_graph(n, "else_branch", add_branch("else", 100));
  return b;
}

TEST(OnnxControlFlow, IfWithRunTimeConditionBecomesAnIrIf) {
  OnnxModelBuilder b = if_model();
  OnnxModel m = from_onnx_bytes(b.bytes());
  EXPECT_TRUE(contains(print_module(m.module), "if ("));
  NDArray x = f32({2}, {1, 2});
  expect_close(interpret(m.module, "main", {bool_scalar(true), x}).tensor(), {2, 3});
  expect_close(interpret(m.module, "main", {bool_scalar(false), x}).tensor(), {101, 102});
}

TEST(OnnxControlFlow, IfWithKnownConditionTakesTheBranch) {
  OnnxModelBuilder b = if_model();
  OnnxImportOptions options;
  options.fixed_inputs["c"] = bool_scalar(false);
  OnnxModel m = from_onnx_bytes(b.bytes(), options);
  EXPECT_FALSE(contains(print_module(m.module), "if ("));
  expect_close(interpret(m.module, "main", {f32({2}, {1, 2})}).tensor(), {101, 102});
}

// A branch of a sample-rate switch in the form torch.jit.script exports (Silero VAD): an
// LSTM over the outer x [1, 2] with the outer h and c as its state, all weights zero so
// that y_h = 0.5 * tanh(0.5 * c). `axes` is what x is unsqueezed by: a branch written for
// other input sizes adds one axis too many for x, so its LSTM sees rank 4. Both branches
// use the same tensor and node names, as sibling branches of an export do.
onnx::GraphProto lstm_branch(const std::string& name, const std::vector<int64_t>& axes) {
  const int64_t hidden = 2, features = 2;
  OnnxModelBuilder g;
  g.graph().set_name(name);
  set_attr(g.node("Constant", {}, {"axes"}, "axes"), "value", ints(axes));
  set_attr(g.node("Constant", {}, {"W"}, "W"), "value",
           f32({1, 4 * hidden, features}, std::vector<double>(4 * hidden * features, 0.0)));
  set_attr(g.node("Constant", {}, {"R"}, "R"), "value",
           f32({1, 4 * hidden, hidden}, std::vector<double>(4 * hidden * hidden, 0.0)));
  g.node("Unsqueeze", {"x", "axes"}, {"X"}, "unsqueeze");
  auto& lstm = g.node("LSTM", {"X", "W", "R", "", "", "h", "c"}, {"Y", "Y_h"}, "rnn/LSTM");
  set_attr(lstm, "hidden_size", hidden);
  g.output("Y_h", {1, 1, hidden});
  return g.graph();
}

// The switch with the unsqueeze axes of each branch: {0} converts for x [1, 2], {0, 1} not.
OnnxModelBuilder sample_rate_switch_model(const std::vector<int64_t>& then_axes = {0},
                                          const std::vector<int64_t>& else_axes = {0, 1}) {
  OnnxModelBuilder b(13);
  b.input("x", {1, 2}).input("h", {1, 1, 2}).input("c", {1, 1, 2}).input("sr", {}, onnx::TensorProto::INT64);
  b.output("y", {1, 1, 2});
  b.initializer("sr16k", i64_scalar(16000));
  b.node("Equal", {"sr", "sr16k"}, {"is16k"}, "is_16k");
  auto& n = b.node("If", {"is16k"}, {"y"}, "switch_rate");
  set_graph(n, "then_branch", lstm_branch("rate16k", then_axes));
  set_graph(n, "else_branch", lstm_branch("rate8k", else_axes));
  return b;
}

OnnxModel import_switch(const OnnxModelBuilder& b) {
  OnnxImportOptions options;
  options.freeze_params = true;
  return from_onnx_bytes(b.bytes(), options);
}

// The switch run with sr; the branch that converts gives 0.5 * tanh(0.5 * c).
Value run_switch(const OnnxModel& m, int64_t sr) {
  return interpret(m.module, "main",
                   {f32({1, 2}, {1, 2}), f32({1, 1, 2}, {0, 0}), f32({1, 1, 2}, {1, -2}), i64_scalar(sr)});
}

const std::vector<double> kSwitchOutput{0.5 * std::tanh(0.5), 0.5 * std::tanh(-1.0)};

// As ONNX Runtime, which runs only the branch taken: the model imports with a warning,
// runs when the branch that converts is taken, and fails naming the If, the branch and
// the conversion error when the other one is.
TEST(OnnxControlFlow, IfWithRunTimeConditionKeepsABranchThatDoesNotConvertAsARunTimeError) {
  OnnxModel m = import_switch(sample_rate_switch_model());
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_TRUE(contains(m.warnings[0], "node 'switch_rate' (If): else_branch does not convert for these input shapes"));
  EXPECT_TRUE(contains(m.warnings[0], "node 'rnn/LSTM': op 'LSTM': X must have rank 3"));
  std::string ir = print_module(m.module);
  EXPECT_TRUE(contains(ir, "if ("));
  EXPECT_TRUE(contains(ir, "unreachable(message="));
  expect_close(run_switch(m, 16000).tensor(), kSwitchOutput);
  std::string message = error_of([&] { run_switch(m, 8000); });
  EXPECT_TRUE(contains(message,
                       "node 'switch_rate': else_branch was not converted: node 'rnn/LSTM': op 'LSTM': "
                       "X must have rank 3"));
  EXPECT_TRUE(contains(message, "it cannot run with these input shapes"));
}

TEST(OnnxControlFlow, IfWhoseThenBranchDoesNotConvertRunsItsElseBranch) {
  OnnxModel m = import_switch(sample_rate_switch_model({0, 1}, {0}));
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_TRUE(contains(m.warnings[0], "then_branch does not convert"));
  expect_close(run_switch(m, 8000).tensor(), kSwitchOutput);
  EXPECT_TRUE(contains(error_of([&] { run_switch(m, 16000); }), "node 'switch_rate': then_branch was not converted"));
}

// Neither the passes nor import-time evaluation may fold the trap or the If away.
TEST(OnnxControlFlow, TrapOfABranchThatDoesNotConvertSurvivesConstantFolding) {
  OnnxModel m = import_switch(sample_rate_switch_model());
  m.module = fold_constant_pass(m.module);
  EXPECT_TRUE(contains(print_module(m.module), "unreachable(message="));
  expect_close(run_switch(m, 16000).tensor(), kSwitchOutput);
  EXPECT_TRUE(contains(error_of([&] { run_switch(m, 8000); }), "else_branch was not converted"));
}

TEST(OnnxControlFlow, IfWhoseBranchesBothFailToConvertNamesTheInputToFix) {
  OnnxImportOptions options;
  options.freeze_params = true;
  std::string message = error_of([&] { from_onnx_bytes(sample_rate_switch_model({0, 1}, {0, 1}).bytes(), options); });
  EXPECT_TRUE(contains(message, "node 'switch_rate': op 'If': then_branch cannot be converted"));
  EXPECT_TRUE(contains(message, "node 'rnn/LSTM': op 'LSTM': X must have rank 3"));
  EXPECT_TRUE(contains(message, "the condition depends on input 'sr'"));
  EXPECT_TRUE(contains(message, "--bind sr=VALUE"));
}

TEST(OnnxControlFlow, IfOnAFixedInputConvertsOnlyTheBranchTaken) {
  OnnxImportOptions options;
  options.freeze_params = true;
  options.fixed_inputs["sr"] = i64_scalar(16000);
  OnnxModel m = from_onnx_bytes(sample_rate_switch_model().bytes(), options);
  EXPECT_FALSE(contains(print_module(m.module), "if ("));
  EXPECT_EQ(m.input_names, (std::vector<std::string>{"x", "h", "c"}));
  NDArray out =
      interpret(m.module, "main", {f32({1, 2}, {1, 2}), f32({1, 1, 2}, {0, 0}), f32({1, 1, 2}, {1, -2})}).tensor();
  expect_close(out, {0.5 * std::tanh(0.5), 0.5 * std::tanh(-1.0)});
  // The branch taken is converted like any graph: its own errors stay as they are.
  options.fixed_inputs["sr"] = i64_scalar(8000);
  std::string message = error_of([&] { from_onnx_bytes(sample_rate_switch_model().bytes(), options); });
  EXPECT_TRUE(contains(message, "node 'rnn/LSTM': op 'LSTM': X must have rank 3"));
  EXPECT_FALSE(contains(message, "--bind"));
}

TEST(OnnxControlFlow, IfWithBranchesOfDifferentTypesNamesTheInputToFix) {
  OnnxModelBuilder b(13);
  b.input("c", {}, onnx::TensorProto::BOOL).input("x", {2}).output_any("y");
  OnnxModelBuilder wide;
  wide.graph().set_name("wide");
  set_attr(wide.node("Constant", {}, {"k"}), "value", f32({2, 1}, {1, 2}));
  wide.node("Add", {"x", "k"}, {"out"});
  wide.output_any("out");
  auto& n = b.node("If", {"c"}, {"y"});
  set_graph(n, "then_branch", add_branch("then", 1));
  set_graph(n, "else_branch", wide.graph());
  std::string message = error_of([&] { from_onnx_bytes(b.bytes()); });
  EXPECT_TRUE(contains(message, "output 0 of If has different types in its branches"));
  EXPECT_TRUE(contains(message, "the condition depends on input 'c'"));
}

TEST(OnnxControlFlow, FixedInputMustHaveTheDeclaredShape) {
  OnnxImportOptions options;
  options.fixed_inputs["sr"] = NDArray::from_vector<int64_t>({1}, {16000});
  std::string message = error_of([&] { from_onnx_bytes(sample_rate_switch_model().bytes(), options); });
  EXPECT_TRUE(contains(message, "the fixed value of input 'sr' has the wrong shape (expected (), found (1))"));
  options.fixed_inputs.clear();
  options.fixed_inputs["x"] = f32({1, 3}, {1, 2, 3});
  message = error_of([&] { from_onnx_bytes(sample_rate_switch_model().bytes(), options); });
  EXPECT_TRUE(contains(message, "the fixed value of input 'x' has the wrong shape (expected (1, 2), found (1, 3))"));
}

// Loop body: y_out = y_in + x (x from the outer graph), scan output y_out, cond unchanged.
onnx::GraphProto accumulate_body() {
  OnnxModelBuilder g;
  g.graph().set_name("body");
  g.input("i", {}, onnx::TensorProto::INT64).input("cond_in", {}, onnx::TensorProto::BOOL).input("y_in", {2});
  g.node("Identity", {"cond_in"}, {"cond_out"});
  g.node("Add", {"y_in", "x"}, {"y_out"});
  g.node("Identity", {"y_out"}, {"scan_out"});
  g.output("cond_out", {}, onnx::TensorProto::BOOL).output("y_out", {2}).output("scan_out", {2});
  return g.graph();
}

OnnxModelBuilder loop_model(bool trip_count_is_input) {
  OnnxModelBuilder b(13);
  if (trip_count_is_input) b.input("m", {}, onnx::TensorProto::INT64);
  b.input("x", {2}).input("y0", {2}).output("y", {2}).output("scan", {3, 2});
  if (!trip_count_is_input) b.initializer("m", i64_scalar(3));
  b.initializer("cond", bool_scalar(true));
  set_graph(b.node("Loop", {"m", "cond", "y0"}, {"y", "scan"}), "body", accumulate_body());
  return b;
}

TEST(OnnxControlFlow, LoopUnrollsWithCarriedValuesAndScanOutputs) {
  OnnxModelBuilder b = loop_model(false);
  OnnxImportOptions options;
  options.freeze_params = true;
  Value out = run(b, {f32({2}, {10, 20}), f32({2}, {1, 2})}, options);
  expect_close(out.tuple()[0].tensor(), {31, 62});
  EXPECT_EQ(out.tuple()[1].tensor().shape(), (Shape{3, 2}));
  expect_close(out.tuple()[1].tensor(), {11, 22, 21, 42, 31, 62});
}

TEST(OnnxControlFlow, LoopStopsWhenItsConditionTurnsFalse) {
  // No trip count; the body stops once i reaches 2 (cond_out = i < 2), so it runs 3 times.
  OnnxModelBuilder g;
  g.graph().set_name("body");
  g.input("i", {}, onnx::TensorProto::INT64).input("cond_in", {}, onnx::TensorProto::BOOL).input("y_in", {2});
  set_attr(g.node("Constant", {}, {"two"}), "value", i64_scalar(2));
  g.node("Less", {"i", "two"}, {"cond_out"});
  g.node("Add", {"y_in", "x"}, {"y_out"});
  g.output("cond_out", {}, onnx::TensorProto::BOOL).output("y_out", {2});
  OnnxModelBuilder b(13);
  b.input("x", {2}).input("y0", {2}).output("y", {2});
  b.initializer("cond", bool_scalar(true));
  set_graph(b.node("Loop", {"", "cond", "y0"}, {"y"}), "body", g.graph());
  OnnxImportOptions options;
  options.freeze_params = true;
  expect_close(run(b, {f32({2}, {1, 1}), f32({2}, {0, 5})}, options).tensor(), {3, 8});
}

// A trip count known only at run time: the Loop becomes an IR loop, not unrolled.
TEST(OnnxControlFlow, LoopWithRunTimeTripCountRunsAsALoop) {
  OnnxModelBuilder b = loop_model(true);
  OnnxImportOptions options;
  options.freeze_params = true;
  OnnxModel m = from_onnx_bytes(b.bytes(), options);
  bool has_loop = false;
  post_order_visit(m.module.lookup("main"), [&](const Expr& e) { has_loop |= as<LoopNode>(e) != nullptr; });
  EXPECT_TRUE(has_loop);
  for (int64_t trips : {3, 0}) {
    Value out = interpret(
        m.module, "main",
        {Value(NDArray::from_vector<int64_t>({}, {trips})), Value(f32({2}, {10, 20})), Value(f32({2}, {1, 2}))});
    if (trips == 3) {
      expect_close(out.tuple()[0].tensor(), {31, 62});
      expect_close(out.tuple()[1].tensor(), {11, 22, 21, 42, 31, 62});
    } else {
      expect_close(out.tuple()[0].tensor(), {1, 2});
      EXPECT_EQ(out.tuple()[1].tensor().shape(), (Shape{0, 2}));
    }
  }
}

// A carried value that grows every iteration (y <- concat(y, x)) with a run-time trip count:
// the body's carried parameter is typed with its extent unknown, Tensor[(?), float32].
TEST(OnnxControlFlow, LoopCarriedValueThatGrowsIsTypedWithAnUnknownExtent) {
  OnnxModelBuilder g;
  g.graph().set_name("body");
  g.input("i", {}, onnx::TensorProto::INT64).input("cond_in", {}, onnx::TensorProto::BOOL).input("y_in", {1});
  g.node("Identity", {"cond_in"}, {"cond_out"});
  set_attr(g.node("Concat", {"y_in", "x"}, {"y_out"}), "axis", int64_t{0});
  g.output("cond_out", {}, onnx::TensorProto::BOOL).output("y_out", {-1});
  OnnxModelBuilder b(13);
  b.input("m", {}, onnx::TensorProto::INT64).input("x", {1}).input("y0", {1}).output("y", {-1});
  b.initializer("cond", bool_scalar(true));
  set_graph(b.node("Loop", {"m", "cond", "y0"}, {"y"}), "body", g.graph());
  OnnxImportOptions options;
  options.freeze_params = true;
  OnnxModel m = from_onnx_bytes(b.bytes(), options);
  EXPECT_TRUE(contains(print_module(m.module), "Tensor[(?), float32]")) << print_module(m.module);
  for (int64_t trips : {0, 3}) {
    Value out =
        interpret(m.module, "main",
                  {Value(NDArray::from_vector<int64_t>({}, {trips})), Value(f32({1}, {2})), Value(f32({1}, {7}))});
    std::vector<double> want{7};
    for (int64_t i = 0; i < trips; ++i) want.push_back(2);
    expect_close(out.tensor(), want);
  }
}

TEST(OnnxControlFlow, ScanRunsReverseDirections) {
  OnnxModelBuilder g;
  g.graph().set_name("body");
  g.input("s_in", {2}).input("e", {2});
  g.node("Add", {"s_in", "e"}, {"s_out"});
  g.node("Identity", {"s_out"}, {"scan_out"});
  g.output("s_out", {2}).output("scan_out", {2});
  OnnxModelBuilder b(11);
  b.input("s0", {2}).input("xs", {3, 2}).output("s", {2}).output("ys", {3, 2});
  auto& n = b.node("Scan", {"s0", "xs"}, {"s", "ys"});
  set_graph(n, "body", g.graph());
  set_attr(n, "num_scan_inputs", int64_t{1});
  set_attr(n, "scan_input_directions", std::vector<int64_t>{1});
  Value out = run(b, {f32({2}, {0, 0}), f32({3, 2}, {1, 2, 3, 4, 5, 6})});
  expect_close(out.tuple()[0].tensor(), {9, 12});
  expect_close(out.tuple()[1].tensor(), {5, 6, 8, 10, 9, 12});
}

TEST(OnnxSequence, SequenceOpsFoldToTuples) {
  OnnxModelBuilder b(13);
  b.input("a", {2}).input("b", {2}).input("c", {2});
  b.initializer("one", i64_scalar(1)).initializer("last", i64_scalar(-1));
  b.node("SequenceConstruct", {"a", "b"}, {"s1"});
  b.node("SequenceInsert", {"s1", "c", "one"}, {"s2"});  // a c b
  b.node("SequenceErase", {"s2", "last"}, {"s3"});       // a c
  b.node("SequenceAt", {"s3", "one"}, {"at"});           // c
  b.node("SequenceLength", {"s3"}, {"len"});
  auto& concat = b.node("ConcatFromSequence", {"s3"}, {"stacked"});
  set_attr(concat, "axis", int64_t{1});
  set_attr(concat, "new_axis", int64_t{1});
  b.output("at", {2}).output("len", {}, onnx::TensorProto::INT64).output("stacked", {2, 2});
  OnnxImportOptions options;
  options.freeze_params = true;
  Value out = run(b, {f32({2}, {1, 2}), f32({2}, {3, 4}), f32({2}, {5, 6})}, options);
  expect_close(out.tuple()[0].tensor(), {5, 6});
  EXPECT_EQ(out.tuple()[1].tensor().to_ints(), (std::vector<int64_t>{2}));
  EXPECT_EQ(out.tuple()[2].tensor().shape(), (Shape{2, 2}));
  expect_close(out.tuple()[2].tensor(), {1, 5, 2, 6});
}

TEST(OnnxSequence, SplitToSequenceWithoutKeepdims) {
  OnnxModelBuilder b(13);
  b.input("x", {3, 2}).output("parts");
  auto& split = b.node("SplitToSequence", {"x"}, {"parts"});
  set_attr(split, "keepdims", int64_t{0});
  b.graph().mutable_output(0)->mutable_type()->Clear();
  auto* elem = b.graph().mutable_output(0)->mutable_type()->mutable_sequence_type()->mutable_elem_type();
  elem->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  Value out = run(b, {f32({3, 2}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(out.tuple().size(), 3u);
  EXPECT_EQ(out.tuple()[2].tensor().shape(), (Shape{2}));
  expect_close(out.tuple()[2].tensor(), {5, 6});
}

TEST(OnnxSequence, SequenceInputsAreTuplesOfTheGivenShapes) {
  OnnxModelBuilder b(13);
  auto* in = b.graph().add_input();
  in->set_name("seq");
  in->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  b.initializer("zero", i64_scalar(0));
  b.node("SequenceAt", {"seq", "zero"}, {"first"});
  b.output_any("first");
  OnnxImportOptions options;
  options.freeze_params = true;
  EXPECT_TRUE(contains(error_of([&] { from_onnx_bytes(b.bytes(), options); }),
                       "input 'seq' is a sequence: kiln needs the number and shapes of its elements"));
  options.sequence_shapes["seq"] = {{2}, {1}};
  Value out = run(b, {Value(std::vector<Value>{f32({2}, {7, 8}), f32({1}, {9})})}, options);
  expect_close(out.tensor(), {7, 8});
}

TEST(OnnxSequence, PositionOutOfRangeIsAnErrorNamingTheRange) {
  OnnxModelBuilder b(13);
  b.input("a", {2});
  b.initializer("five", i64_scalar(5));
  b.node("SequenceConstruct", {"a", "a"}, {"s"});
  b.node("SequenceAt", {"s", "five"}, {"y"});
  b.output("y", {2});
  OnnxImportOptions options;
  options.freeze_params = true;
  std::string message = error_of([&] { from_onnx_bytes(b.bytes(), options); });
  EXPECT_TRUE(contains(message, "position of SequenceAt is out of range for a sequence of 2 elements"));
  EXPECT_TRUE(contains(message, "a position in [-2, 1]"));
}

TEST(OnnxOptional, AbsentAndPresentOptionals) {
  OnnxModelBuilder b(15);
  auto* in = b.graph().add_input();
  in->set_name("opt");
  auto* t = in->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_value(2);
  b.node("OptionalHasElement", {"opt"}, {"has"});
  b.output("has", {}, onnx::TensorProto::BOOL);
  OnnxImportOptions absent;
  absent.absent_inputs.insert("opt");
  EXPECT_EQ(run(b, {}, absent).tensor().to_ints(), (std::vector<int64_t>{0}));
  EXPECT_EQ(run(b, {f32({2}, {1, 2})}).tensor().to_ints(), (std::vector<int64_t>{1}));
}

}  // namespace
}  // namespace kiln::testing
