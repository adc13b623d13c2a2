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

namespace kiln {
namespace {

const std::vector<std::vector<std::string>> kPipelines = {{"DeadCodeElimination"},
                                                          {"EliminateCommonSubexpr"},
                                                          {"EliminateCommonSubexpr", "DeadCodeElimination"},
                                                          {"DeadCodeElimination", "EliminateCommonSubexpr"}};

NDArray random_array(const Shape& shape, std::mt19937& gen) {
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  NDArray a = NDArray::empty(shape, DType::kFloat32);
  for (int64_t i = 0; i < a.numel(); ++i) a.set(i, dist(gen));
  return a;
}

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

// A random graph over one image (1, 4, 5, 5) or one matrix (3, 8): elementwise ops, conv2d
// or dense on constant weights, with calls rebuilt as fresh equal nodes, constants
// duplicated, unused lets, tuples projected in place and ifs on constants.
class GraphGenerator {
 public:
  explicit GraphGenerator(unsigned seed) : gen_(seed) {}

  IRModule make(bool image, std::vector<Value>* args) {
    shape_ = image ? Shape{1, 4, 5, 5} : Shape{3, 8};
    Var x = make_var("x", tensor_type(shape_, DType::kFloat32));
    Var y = make_var("y", tensor_type(shape_, DType::kFloat32));
    args->assign({Value(random_array(shape_, gen_)), Value(random_array(shape_, gen_))});
    pool_ = {x, y};
    std::vector<std::pair<Var, Expr>> lets;
    int steps = 6 + pick(10);
    for (int i = 0; i < steps; ++i) {
      Expr e = step(image);
      if (pick(4) == 0) {  // through a let, used or not
        Var v = make_var("v" + std::to_string(i));
        lets.emplace_back(v, e);
        if (pick(2))
          e = v;
        else
          continue;
      }
      pool_.push_back(e);
    }
    Expr body = make_tuple({pool_.back(), pool_[pool_.size() / 2 + 1]});
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) body = make_let(it->first, it->second, body);
    IRModule mod;
    mod.add("main", make_function({x, y}, body));
    return mod;
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(gen_); }
  const Expr& any() { return pool_[static_cast<size_t>(pick(static_cast<int>(pool_.size())))]; }

  Expr constant_like(int64_t channels) {
    // Few distinct values, so that equal constants occur.
    NDArray c = NDArray::empty({channels}, DType::kFloat32);
    float v = static_cast<float>(pick(3)) * 0.5f - 0.5f;
    for (int64_t i = 0; i < channels; ++i) c.set(i, v);
    return make_constant(c);
  }

  Expr step(bool image) {
    static const char* const kUnary[] = {"nn.relu", "tanh", "sigmoid", "negative"};
    static const char* const kBinary[] = {"add", "multiply", "subtract", "maximum"};
    switch (pick(7)) {
      case 0: return call_op(kUnary[pick(4)], {any()});
      case 1: return call_op(kBinary[pick(4)], {any(), any()});
      case 2: {  // a fresh copy of an earlier call
        for (int tries = 0; tries < 4; ++tries) {
          const auto* call = as<CallNode>(any());
          if (call) return make_call(call->callee, call->args, call->attrs);
        }
        return call_op("nn.relu", {any()});
      }
      case 3: return call_op(kBinary[pick(2)], {any(), constant_like(shape_.back())});
      case 4: {
        Expr a = any(), b = any();
        int i = pick(2);
        return make_tuple_get_item(make_tuple({a, b}), i);
      }
      case 5: {
        NDArray c = NDArray::empty({}, DType::kBool);
        *c.data<bool>() = pick(2) != 0;
        return make_if(make_constant(c), any(), call_op("tanh", {any()}));
      }
      default: {
        if (image) {
          NDArray w = NDArray::empty({4, 4, 3, 3}, DType::kFloat32);
          for (int64_t i = 0; i < w.numel(); ++i) w.set(i, (i % 5) * 0.125 - 0.25);
          return call_op("nn.conv2d", {any(), make_constant(w)},
                         Attrs{{"padding", AttrValue(std::vector<int64_t>{1, 1})}});
        }
        NDArray w = NDArray::empty({8, 8}, DType::kFloat32);
        for (int64_t i = 0; i < w.numel(); ++i) w.set(i, (i % 7) * 0.125 - 0.375);
        return call_op("nn.dense", {any(), make_constant(w)});
      }
    }
  }

  std::mt19937 gen_;
  Shape shape_;
  std::vector<Expr> pool_;
};

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
