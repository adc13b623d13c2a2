// Loop as control flow: the IR `loop` (LoopNode) in IR text, type inference, the
// interpreter, FuseOps inside the body, and the compiled "kiln_loop" node whose body is a
// sub-graph of the artifact, run with a trip count and a stop condition known only at run time.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "backend/blocked_build_test_util.h"
#include "kiln/backend/build.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/structural.h"
#include "kiln/ir/type_infer.h"
#include "kiln/runtime/graph_executor.h"
#include "kiln/support/strings.h"
#include "runtime/graph_json.h"
#include "runtime/runtime_test_util.h"
#include "transform/pass_test_util.h"

namespace kiln {
namespace {

using runtime_test::ramp;
using runtime_test::TempDir;

// h <- tanh(dense(h, w) + x[i]) while i < m and sum(h) < limit; every h is a scan output.
const char* kRecurrence = R"(
def @main(%m: int64, %limit: float32, %h0: Tensor[(1, 4), float32], %w: Tensor[(4, 4), float32],
          %x: Tensor[(64, 4), float32]) {
  %0 = fn (%i: int64, %c: bool, %h: Tensor[(1, 4), float32]) {
    %1 = nn.dense(%h, %w);
    %2 = take(%x, %i, axis=0);
    %3 = add(%1, %2);
    %4 = tanh(%3);
    %5 = sum(%4);
    %6 = less(%5, %limit);
    (%6, %4, %4)
  };
  %7 = loop(%m, True, %h0) %0;
  (%7.0, %7.1)
})";

NDArray int64_scalar(int64_t v) { return NDArray::from_vector<int64_t>({}, {v}); }
NDArray float_scalar(float v) { return NDArray::from_vector<float>({}, {v}); }

struct Inputs {
  NDArray h0 = ramp({1, 4}, 0.1f, -0.2f), w = ramp({4, 4}, -0.15f, 0.3f), x = ramp({64, 4}, 0.05f, -0.1f);
};

// The recurrence computed by hand: final h, then every h.
std::pair<std::vector<float>, std::vector<float>> by_hand(const Inputs& in, int64_t m, float limit) {
  std::vector<float> h(in.h0.data<float>(), in.h0.data<float>() + 4), all;
  for (int64_t i = 0; i < m; ++i) {
    std::vector<float> next(4);
    float sum = 0;
    for (int o = 0; o < 4; ++o) {
      float acc = in.x.data<float>()[i * 4 + o];
      for (int k = 0; k < 4; ++k) acc += h[k] * in.w.data<float>()[o * 4 + k];
      next[o] = std::tanh(acc);
      sum += next[o];
    }
    h = next;
    all.insert(all.end(), h.begin(), h.end());
    if (!(sum < limit)) break;
  }
  return {h, all};
}

void expect_values(const NDArray& got, const Shape& shape, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.shape(), shape) << what;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got.at(static_cast<int64_t>(i)), want[i], 1e-5) << what << " " << i;
}

std::vector<Value> args(const Inputs& in, int64_t m, float limit) {
  return {Value(int64_scalar(m)), Value(float_scalar(limit)), Value(in.h0), Value(in.w), Value(in.x)};
}

TEST(LoopIR, PrintsAndParsesBack) {
  IRModule mod = infer_types(parse_module(kRecurrence));
  const std::string text = print_module(mod);
  EXPECT_NE(text.find("loop(%m, True"), std::string::npos) << text;
  IRModule again = parse_module(text);
  EXPECT_TRUE(structural_equal(mod, again)) << text << "\n---\n" << print_module(again);
  EXPECT_EQ(structural_hash(mod.lookup("main")), structural_hash(again.lookup("main")));
  // The number of iterations is known only at run time.
  EXPECT_EQ(type_str(as_func(infer_types(again).lookup("main")->checked_type())->ret),
            "(Tensor[(1, 4), float32], Tensor[(?, 1, 4), float32])");
}

TEST(LoopIR, ConstantTripCountGivesStaticScanLength) {
  IRModule mod = infer_types(parse_module(R"(
def @main(%a: Tensor[(3), float32]) {
  %0 = fn (%i: int64, %c: bool, %s: Tensor[(3), float32]) { %1 = add(%s, %a); (%c, %1, multiply(%1, 2f)) };
  loop(5i64, True, %a) %0
})"));
  EXPECT_EQ(type_str(as_func(mod.lookup("main")->checked_type())->ret),
            "(Tensor[(3), float32], Tensor[(5, 3), float32])");
}

TEST(LoopIR, CarriedValueThatChangesTypeIsAnErrorNamingTheLoop) {
  try {
    infer_types(parse_module(R"(
def @main(%a: Tensor[(3), float32], %m: int64) {
  %0 = fn (%i: int64, %c: bool, %s: Tensor[(3), float32]) { (%c, concatenate((%s, %s))) };
  loop(%m, True, %a) %0
})"));
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("carried value 0 changes type across iterations"), std::string::npos) << what;
    EXPECT_NE(what.find("Tensor[(6), float32]"), std::string::npos) << what;
    EXPECT_NE(what.find("line 4"), std::string::npos) << what;
  }
}

TEST(LoopIR, BodyMustTakeIterationConditionAndCarried) {
  EXPECT_THROW(infer_types(parse_module(R"(
def @main(%a: Tensor[(3), float32], %m: int64) {
  %0 = fn (%i: int64, %s: Tensor[(3), float32]) { (True, %s) };
  loop(%m, True, %a) %0
})")),
               Error);
  EXPECT_THROW(parse_module("def @main(%m: int64) { loop(%m, True) %m }"), Error);
}

TEST(LoopInterp, RunsWhileTheTripCountAndConditionAllow) {
  IRModule mod = parse_module(kRecurrence);
  Inputs in;
  for (auto [m, limit] : std::vector<std::pair<int64_t, float>>{{0, 9}, {1, 9}, {5, 9}, {40, 9}, {40, 0.5f}}) {
    auto [h, all] = by_hand(in, m, limit);
    std::vector<NDArray> out = interpret(mod, "main", args(in, m, limit)).flatten();
    const std::string what = cat("m = ", m, ", limit = ", limit);
    expect_values(out[0], {1, 4}, h, what + " h");
    expect_values(out[1], {static_cast<int64_t>(all.size() / 4), 1, 4}, all, what + " scan");
  }
}

TEST(LoopPasses, FuseOpsFusesInsideTheBody) {
  kiln::testing::expect_pass_result("FuseOps", R"(
def @main(%m: int64, %a: Tensor[(3), float32]) {
  %0 = fn (%i: int64, %c: bool, %s: Tensor[(3), float32]) { %1 = add(%s, %a); %2 = exp(%1); (%c, %2) };
  %3 = loop(%m, True, %a) %0;
  %3.0
})",
                                    R"(def @main(%m: Tensor[(), int64], %a: Tensor[(3), float32]) {
  %2 = fn (%i: Tensor[(), int64], %c: Tensor[(), bool], %s: Tensor[(3), float32]) {
    %1 = fn (%p0: Tensor[(3), float32], %p1: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
      %0 = add(%p0, %p1);
      exp(%0)
    };
    (%c, %1(%s, %a))
  };
  %3 = loop(%m, True, %a) %2;
  %3.0
}
)");
}

BuiltModel build_text(const std::string& text, const std::vector<std::string>& outputs) {
  IRModule mod = parse_module(text);
  std::vector<std::string> inputs;
  for (const Var& p : mod.lookup("main")->params) inputs.push_back(p->name);
  return build(mod, {}, inputs, outputs);
}

TEST(LoopBuild, LoopBecomesOneNodeWithABodySubgraph) {
  BuiltModel built = build_text(kRecurrence, {"h", "all"});
  GraphPlan g = parse_graph_json(built.graph_json, "graph.json");
  ASSERT_EQ(g.subgraphs.size(), 1u);
  const GraphNode* loop = nullptr;
  for (const GraphNode& node : g.nodes)
    if (node.is_loop()) loop = &node;
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->attrs.at("num_carried"), "1");
  const GraphPlan& body = g.subgraphs[0];
  // iteration, condition, h, then what the body reads from main: w, x and limit.
  EXPECT_EQ(body.input_names.size(), loop->inputs.size());
  EXPECT_EQ(body.input_names.size(), 6u);
  EXPECT_EQ(body.heads.size(), 3u);
  EXPECT_EQ(parse_graph_json(graph_to_json(g), "again"), g);
}

TEST(LoopBuild, ArtifactMatchesTheInterpreterForRunTimeTripCounts) {
  IRModule mod = parse_module(kRecurrence);
  BuiltModel built = build_text(kRecurrence, {"h", "all"});
  TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  GraphExecutor executor(Artifact::load(dir.file("m.kiln")));
  Inputs in;
  for (auto [m, limit] : std::vector<std::pair<int64_t, float>>{{0, 9}, {1, 9}, {5, 9}, {40, 9}, {40, 0.5f}, {3, 9}}) {
    executor.set_input("m", int64_scalar(m));
    executor.set_input("limit", float_scalar(limit));
    executor.set_input("h0", in.h0);
    executor.set_input("w", in.w);
    executor.set_input("x", in.x);
    executor.run();
    auto [h, all] = by_hand(in, m, limit);
    const std::string what = cat("m = ", m, ", limit = ", limit);
    expect_values(executor.get_output(0), {1, 4}, h, what + " h");
    expect_values(executor.get_output(1), {static_cast<int64_t>(all.size() / 4), 1, 4}, all, what + " scan");
  }
}

TEST(LoopBuild, ReshapesOfTheCarriedValueFollowItAcrossIterations) {
  // The body's first reshape views its carried input (an alias the loop re-points each
  // iteration); its scan output, a reshape of that input too, is computed: the loop may point a
  // body's results at its own blocks, which an alias would not fill.
  const char* text = R"(
def @main(%m: int64, %h0: Tensor[(1, 4), float32], %w: Tensor[(2, 2), float32]) {
  %0 = fn (%i: int64, %c: bool, %h: Tensor[(1, 4), float32]) {
    %1 = reshape(%h, newshape=[2, 2]);
    %2 = nn.dense(%1, %w);
    %3 = tanh(%2);
    %4 = reshape(%3, newshape=[1, 4]);
    %5 = reshape(%h, newshape=[4]);
    (%c, %4, %5)
  };
  %6 = loop(%m, True, %h0) %0;
  (%6.0, %6.1)
})";
  IRModule mod = parse_module(text);
  BuiltModel built = build_text(text, {"h", "all"});
  GraphPlan g = parse_graph_json(built.graph_json, "graph.json");
  ASSERT_EQ(g.subgraphs.size(), 1u);
  const GraphPlan& body = g.subgraphs[0];
  std::vector<std::string> aliases;
  for (const GraphNode& node : body.nodes)
    if (node.func_name() == kAliasFuncName) aliases.push_back(node.name);
  EXPECT_EQ(aliases.size(), 1u);
  for (const GraphEntry& head : body.heads)
    EXPECT_NE(body.nodes[static_cast<size_t>(head.node)].func_name(), kAliasFuncName);
  TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  GraphExecutor executor(Artifact::load(dir.file("m.kiln")));
  NDArray h0 = ramp({1, 4}, 0.3f, -0.4f), w = ramp({2, 2}, -0.25f, 0.6f);
  for (int64_t m : {0, 1, 4}) {
    executor.set_input("m", int64_scalar(m));
    executor.set_input("h0", h0);
    executor.set_input("w", w);
    executor.run();
    std::vector<NDArray> want = interpret(mod, "main", {Value(int64_scalar(m)), Value(h0), Value(w)}).flatten();
    for (size_t k = 0; k < want.size(); ++k) {
      SCOPED_TRACE(cat("m = ", m, ", output ", k));
      testing::expect_all_close(executor.get_output(k), want[k], 1e-5, 0);
    }
  }
}

TEST(LoopBuild, ArtifactWithLoopRunsInAProcessLinkingOnlyTheRuntime) {
  BuiltModel built = build_text(kRecurrence, {"h", "all"});
  TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  std::filesystem::create_directory(dir.file("in"));
  Inputs in;
  write_npy(dir.file("in/m.npy"), int64_scalar(7));
  write_npy(dir.file("in/limit.npy"), float_scalar(9));
  write_npy(dir.file("in/h0.npy"), in.h0);
  write_npy(dir.file("in/w.npy"), in.w);
  write_npy(dir.file("in/x.npy"), in.x);
  std::string output;
  ASSERT_EQ(runtime_test::run_command(
                cat(KILN_RUN_ARTIFACT, " ", dir.file("m.kiln"), " ", dir.file("in"), " ", dir.file("out")), &output),
            0)
      << output;
  auto [h, all] = by_hand(in, 7, 9);
  expect_values(read_npy(dir.file("out/h.npy")), {1, 4}, h, "h");
  expect_values(read_npy(dir.file("out/all.npy")), {7, 1, 4}, all, "all");
}

void expect_invalid(GraphPlan g, const std::string& message) {
  try {
    validate_graph(g);
    FAIL() << "accepted; expected: " << message;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(LoopGraphJson, ValidationNamesWhatIsWrong) {
  BuiltModel built = build_text(kRecurrence, {"h", "all"});
  const GraphPlan good = parse_graph_json(built.graph_json, "graph.json");
  size_t loop = 0;
  while (!good.nodes[loop].is_loop()) ++loop;

  GraphPlan bad_index = good;
  bad_index.nodes[loop].attrs["body_graph"] = "7";
  expect_invalid(bad_index, "no such sub-graph");

  GraphPlan fewer_inputs = good;
  fewer_inputs.subgraphs[0].input_names.pop_back();
  expect_invalid(fewer_inputs, "the body's inputs differ from the node's inputs");

  GraphPlan fewer_heads = good;
  fewer_heads.subgraphs[0].heads.pop_back();
  expect_invalid(fewer_heads, "the body's heads differ");

  GraphPlan carried = good;
  carried.nodes[loop].attrs["num_carried"] = "9";
  expect_invalid(carried, "more carried values");

  GraphPlan trip = good;
  std::swap(trip.nodes[loop].inputs[0], trip.nodes[loop].inputs[1]);
  expect_invalid(trip, "trip count is one int64");
}

}  // namespace
}  // namespace kiln
