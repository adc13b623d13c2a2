// If compiled as control flow: graph codegen makes a "kiln_if" node whose branches are
// sub-graphs of the artifact, each planned and allocated once; the executor runs only the
// branch taken, and the results match the interpreter for both values of the condition.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "kiln/backend/build.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/runtime/graph_executor.h"
#include "kiln/support/strings.h"
#include "runtime/graph_json.h"
#include "runtime/runtime_test_util.h"

namespace kiln {
namespace {

using runtime_test::ramp;
using runtime_test::TempDir;

// The then branch reads exp(%x), computed before the if, and returns two values from one
// computation; the else branch reads %x and %w.
const char* kTwoResultIf = R"(
def @main(%c: Tensor[(), bool], %x: Tensor[(4, 8), float32], %w: Tensor[(8, 8), float32]) {
  %0 = exp(%x);
  %1 = if (%c) {
    %2 = nn.dense(%0, %w); %3 = nn.relu(%2); (%3, sigmoid(%3))
  } else {
    %4 = nn.dense(%x, %w); (tanh(%4), negative(%4))
  };
  %5 = %1.0; %6 = %1.1; (add(%5, %6), %0)
})";

// An if in a branch, reading a value of main that the outer branch must pass on.
const char* kNestedIf = R"(
def @main(%c: Tensor[(), bool], %d: Tensor[(), bool], %x: Tensor[(3), float32]) {
  %0 = exp(%x);
  if (%c) {
    %1 = add(%x, 1f);
    if (%d) { multiply(%1, %0) } else { subtract(%0, %1) }
  } else {
    add(%0, 2f)
  }
})";

BuiltModel build_text(const std::string& text, const std::vector<std::string>& outputs) {
  IRModule mod = parse_module(text);
  std::vector<std::string> inputs;
  for (const Var& p : mod.lookup("main")->params) inputs.push_back(p->name);
  return build(mod, {}, inputs, outputs);
}

NDArray bool_scalar(bool value) { return NDArray::scalar(DType::kBool, value ? 1.0 : 0.0); }

void expect_close(const NDArray& got, const NDArray& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.numel(); ++i)
    EXPECT_NEAR(got.at(i), want.at(i), 1e-4 * (1 + std::fabs(want.at(i)))) << what << " element " << i;
}

size_t count_if_nodes(const GraphPlan& g) {
  size_t n = 0;
  for (const GraphNode& node : g.nodes) n += node.is_if();
  for (const GraphPlan& s : g.subgraphs) n += count_if_nodes(s);
  return n;
}

TEST(ControlFlowBuild, IfBecomesOneNodeWithTwoSubgraphs) {
  BuiltModel built = build_text(kTwoResultIf, {"y", "e"});
  GraphPlan g = parse_graph_json(built.graph_json, "graph.json");
  ASSERT_EQ(g.subgraphs.size(), 2u);
  EXPECT_EQ(count_if_nodes(g), 1u);
  const GraphNode* if_node = nullptr;
  for (const GraphNode& node : g.nodes)
    if (node.is_if()) if_node = &node;
  ASSERT_NE(if_node, nullptr);
  // The condition, then exp(%x), %w and %x: what the branches read from main.
  EXPECT_EQ(if_node->inputs.size(), 4u);
  EXPECT_EQ(g.num_node_outputs(if_node->inputs[0].node), 1);
  for (const GraphPlan& branch : g.subgraphs) {
    EXPECT_EQ(branch.input_names.size(), 3u);
    EXPECT_EQ(branch.heads.size(), 2u);
    bool has_kernel = false;
    for (const GraphNode& node : branch.nodes) has_kernel |= node.op == "tvm_op";
    EXPECT_TRUE(has_kernel);
    for (size_t e = 0; e < branch.num_entries(); ++e) EXPECT_GE(branch.storage_id[e], 0);
  }
  EXPECT_GT(built.num_kernels, 0u);
  EXPECT_EQ(parse_graph_json(graph_to_json(g), "again"), g);
}

TEST(ControlFlowBuild, ArtifactRunsTheBranchTakenForEitherCondition) {
  IRModule mod = parse_module(kTwoResultIf);
  BuiltModel built = build_text(kTwoResultIf, {"y", "e"});
  TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  GraphExecutor executor(Artifact::load(dir.file("m.kiln")));
  NDArray x = ramp({4, 8}, 0.125f, -0.4f), w = ramp({8, 8}, -0.1f, 0.3f);
  for (bool c : {true, false, true}) {
    executor.set_input("c", bool_scalar(c));
    executor.set_input("x", x);
    executor.set_input("w", w);
    executor.run();
    std::vector<NDArray> want = interpret(mod, "main", {Value(bool_scalar(c)), Value(x), Value(w)}).flatten();
    expect_close(executor.get_output(0), want[0], cat("y, c = ", c));
    expect_close(executor.get_output(1), want[1], cat("e, c = ", c));
  }
}

TEST(ControlFlowBuild, NestedIfPassesOuterValuesDown) {
  IRModule mod = parse_module(kNestedIf);
  BuiltModel built = build_text(kNestedIf, {"y"});
  GraphPlan g = parse_graph_json(built.graph_json, "graph.json");
  EXPECT_EQ(count_if_nodes(g), 2u);
  TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  GraphExecutor loaded(Artifact::load(dir.file("m.kiln")));
  NDArray x = NDArray::from_vector<float>({3}, {0.5f, -1, 2});
  for (bool c : {true, false})
    for (bool d : {true, false}) {
      loaded.set_input("c", bool_scalar(c));
      loaded.set_input("d", bool_scalar(d));
      loaded.set_input("x", x);
      loaded.run();
      NDArray want = interpret(mod, "main", {Value(bool_scalar(c)), Value(bool_scalar(d)), Value(x)}).tensor();
      expect_close(loaded.get_output(0), want, cat("c = ", c, ", d = ", d));
    }
}

TEST(ControlFlowBuild, BranchStorageIsAllocatedOnceNotPerRun) {
  BuiltModel built = build_text(kTwoResultIf, {"y", "e"});
  TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  std::vector<Device*> devices;
  GraphExecutor executor(Artifact::load(dir.file("m.kiln")), 1, [&devices](int64_t) {
    auto device = std::make_unique<CpuDevice>();
    devices.push_back(device.get());
    return device;
  });
  ASSERT_EQ(devices.size(), 3u);  // main's and each branch's
  auto allocations = [&devices] {
    size_t n = 0;
    for (const Device* d : devices) n += d->num_allocations();
    return n;
  };
  const size_t before = allocations();
  for (bool c : {true, false, false, true}) {
    executor.set_input("c", bool_scalar(c));
    executor.set_input("x", ramp({4, 8}, 0.1f, 0));
    executor.set_input("w", ramp({8, 8}, 0.1f, 0));
    executor.run();
  }
  EXPECT_EQ(allocations(), before);
}

TEST(ControlFlowBuild, ArtifactWithIfRunsInAProcessLinkingOnlyTheRuntime) {
  IRModule mod = parse_module(kNestedIf);
  BuiltModel built = build_text(kNestedIf, {"y"});
  TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  std::filesystem::create_directory(dir.file("in"));
  NDArray x = NDArray::from_vector<float>({3}, {0.5f, -1, 2});
  write_npy(dir.file("in/x.npy"), x);
  write_npy(dir.file("in/c.npy"), bool_scalar(true));
  write_npy(dir.file("in/d.npy"), bool_scalar(false));
  std::string output;
  ASSERT_EQ(runtime_test::run_command(
                cat(KILN_RUN_ARTIFACT, " ", dir.file("m.kiln"), " ", dir.file("in"), " ", dir.file("out")), &output),
            0)
      << output;
  NDArray want = interpret(mod, "main", {Value(bool_scalar(true)), Value(bool_scalar(false)), Value(x)}).tensor();
  expect_close(read_npy(dir.file("out/y.npy")), want, "y");
}

}  // namespace
}  // namespace kiln
