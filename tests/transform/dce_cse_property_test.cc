// Property tests of DeadCodeElimination and EliminateCommonSubexpr: on random graphs with
// shared and duplicated sub-expressions, dead lets, projections of tuples built in place and
// ifs on constants, and on ONNX models, the interpreter gives bit-identical results before
// and after (neither pass reassociates), and running a pass twice changes nothing more.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "frontend/onnx_test_util.h"
#include "ir/text_test_util.h"
#include "kiln/frontend/onnx.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/printer.h"
#include "kiln/runtime/npy.h"
#include "kiln/transform/pass.h"
#include "transform/random_graph.h"

namespace kiln {
namespace {

using testing::GraphGenerator;
using testing::random_array;

const std::vector<std::vector<std::string>> kPipelines = {{"DeadCodeElimination"},
                                                          {"EliminateCommonSubexpr"},
                                                          {"EliminateCommonSubexpr", "DeadCodeElimination"},
                                                          {"DeadCodeElimination", "EliminateCommonSubexpr"}};

void expect_same_values(const std::vector<NDArray>& want, const std::vector<NDArray>& got, const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(want[i].same_as(got[i])) << what << ", output " << i;
}

// Each pipeline keeps the results of `mod` on `args`, and each pass is idempotent.
void check_module(const IRModule& mod, const std::vector<Value>& args, const std::string& what) {
  std::vector<NDArray> want = interpret(mod, "main", args).flatten();
  for (const auto& pipeline : kPipelines) {
    IRModule out = run_passes(mod, pipeline);
    expect_same_values(want, interpret(out, "main", args).flatten(), what + " after " + pipeline.back());
    IRModule again = run_passes(out, {pipeline.back()});
    EXPECT_EQ(testing::squash(print_module(again)), testing::squash(print_module(out)))
        << what << ": " << pipeline.back() << " is not idempotent";
  }
}

TEST(DceCseProperty, RandomGraphsGiveIdenticalResults) {
  for (unsigned seed = 0; seed < 60; ++seed) {
    GraphGenerator g(seed);
    std::vector<Value> args;
    IRModule mod = g.make(seed % 2 == 0, &args);
    check_module(mod, args, "seed " + std::to_string(seed) + ":\n" + print_module(mod));
  }
}

TEST(DceCseProperty, BothPassesFindWorkInTheGeneratedGraphs) {
  // Otherwise the test above would prove nothing.
  int cse_changed = 0, dce_changed = 0;
  for (unsigned seed = 0; seed < 60; ++seed) {
    GraphGenerator g(seed);
    std::vector<Value> args;
    IRModule mod = g.make(seed % 2 == 0, &args);
    std::string before = print_module(mod);
    cse_changed += print_module(run_passes(mod, {"EliminateCommonSubexpr"})) != before;
    dce_changed += print_module(run_passes(mod, {"DeadCodeElimination"})) != before;
  }
  EXPECT_GE(cse_changed, 20);
  EXPECT_GE(dce_changed, 20);
}

TEST(DceCseProperty, OnnxModelsGiveIdenticalResults) {
  {
    std::string dir = std::string(KILN_SOURCE_DIR) + "/examples/cnn/";
    OnnxModel m = from_onnx_file(dir + "model.onnx");
    check_module(bind_params(m.module, m.params), {Value(read_npy(dir + "inputs/input.npy"))}, "examples/cnn");
  }
  {
    // The same subgraphs written twice, as exporters do for repeated blocks.
    testing::OnnxModelBuilder b;
    b.input("X", {2, 6}).output("Z", {2, 6});
    b.initializer("one", NDArray::scalar(DType::kFloat32, 1.0));
    b.initializer("also_one", NDArray::scalar(DType::kFloat32, 1.0));
    b.node("Relu", {"X"}, {"r1"});
    b.node("Relu", {"X"}, {"r2"});
    b.node("Add", {"r1", "one"}, {"a1"});
    b.node("Add", {"r2", "also_one"}, {"a2"});
    b.node("Sigmoid", {"a1"}, {"s1"});
    b.node("Sigmoid", {"a2"}, {"s2"});
    b.node("Mul", {"s1", "s2"}, {"m"});
    b.node("Tanh", {"r1"}, {"unused"});
    b.node("Sub", {"m", "a2"}, {"Z"});
    OnnxModel m = from_onnx_bytes(b.bytes(), {}, "dup.onnx");
    std::mt19937 gen(7);
    IRModule mod = bind_params(m.module, m.params);
    check_module(mod, {Value(random_array({2, 6}, gen))}, "dup.onnx");
    size_t calls = 0;
    post_order_visit(run_passes(mod, {"EliminateCommonSubexpr"}).lookup("main"),
                     [&](const Expr& e) { calls += e->kind == ExprKind::kCall; });
    EXPECT_EQ(calls, 5u);  // relu, add, sigmoid, multiply, subtract
  }
  {
    testing::OnnxModelBuilder b;
    b.input("X", {1, 2, 5, 5}).output("Y", {1, 3, 5, 5});
    NDArray w = NDArray::empty({3, 2, 3, 3}, DType::kFloat32);
    for (int64_t i = 0; i < w.numel(); ++i) w.set(i, (i % 4) * 0.25 - 0.5);
    b.initializer("W", w);
    auto& c1 = b.node("Conv", {"X", "W"}, {"c1"});
    testing::set_attr(c1, "pads", std::vector<int64_t>{1, 1, 1, 1});
    auto& c2 = b.node("Conv", {"X", "W"}, {"c2"});
    testing::set_attr(c2, "pads", std::vector<int64_t>{1, 1, 1, 1});
    b.node("Relu", {"c1"}, {"r1"});
    b.node("Relu", {"c2"}, {"r2"});
    b.node("Add", {"r1", "r2"}, {"Y"});
    OnnxModel m = from_onnx_bytes(b.bytes(), {}, "conv.onnx");
    std::mt19937 gen(11);
    check_module(bind_params(m.module, m.params), {Value(random_array({1, 2, 5, 5}, gen))}, "conv.onnx");
  }
}

}  // namespace
}  // namespace kiln
