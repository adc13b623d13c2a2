// build(): the seed notes' FuseOps examples as golden graph plans, memory planning, kernel
// sharing, reference-kernel fallback, and artifacts run by another process.
#include "kiln/backend/build.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "backend/blocked_build_test_util.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/runtime/graph_executor.h"
#include "kiln/support/strings.h"
#include "runtime/graph_json.h"
#include "runtime/runtime_test_util.h"

namespace kiln {
namespace {

using runtime_test::TempDir;

const char* kFiveAddsAndExp = R"(
def @main(%x: Tensor[(10, 20), float32]) {
  %0 = add(%x, %x); %1 = add(%0, %0); %2 = add(%1, %1); %3 = add(%2, %2); %4 = add(%3, %3); exp(%4)
})";

const char* kAddAddSumAdd = R"(
def @main(%x: Tensor[(20, 20), float32]) {
  %0 = add(%x, %x); %1 = add(%0, %0); %2 = sum(%1, axis=[-1]); add(%2, %2)
})";

BuiltModel build_text(const std::string& text, int opt_level, const std::vector<std::string>& outputs = {"y"}) {
  IRModule mod = parse_module(text);
  std::vector<std::string> inputs;
  for (const Var& p : mod.lookup("main")->params) inputs.push_back(p->name);
  BuildOptions options;
  options.passes.opt_level = opt_level;
  return build(mod, {}, inputs, outputs, options);
}

GraphPlan plan_of(const BuiltModel& built) { return parse_graph_json(built.graph_json, "graph.json"); }

std::vector<std::string> node_names(const GraphPlan& g) {
  std::vector<std::string> names;
  for (const GraphNode& n : g.nodes) names.push_back(n.name);
  return names;
}

std::vector<std::string> func_names(const GraphPlan& g) {
  std::vector<std::string> names;
  for (const GraphNode& n : g.nodes)
    if (!n.is_variable()) names.push_back(n.func_name());
  return names;
}

// No two entries whose lifetimes overlap share storage (lifetime: from the node that writes
// the entry to its last reader, or the end for graph outputs and variables).
void expect_storage_never_shared_while_live(const GraphPlan& g) {
  const size_t n = g.num_entries();
  std::vector<int64_t> first(n), last(n);
  for (size_t node = 0; node < g.nodes.size(); ++node)
    for (int64_t i = 0; i < g.num_node_outputs(static_cast<int64_t>(node)); ++i) {
      size_t e = g.entry_id(static_cast<int64_t>(node), i);
      first[e] = static_cast<int64_t>(node);
      last[e] = g.nodes[node].is_variable() ? static_cast<int64_t>(g.nodes.size()) : static_cast<int64_t>(node);
    }
  for (size_t node = 0; node < g.nodes.size(); ++node)
    for (const GraphEntry& in : g.nodes[node].inputs)
      last[g.entry_id(in)] = std::max(last[g.entry_id(in)], static_cast<int64_t>(node));
  for (const GraphEntry& h : g.heads) last[g.entry_id(h)] = static_cast<int64_t>(g.nodes.size());
  for (size_t a = 0; a < n; ++a)
    for (size_t b = a + 1; b < n; ++b) {
      if (g.storage_id[a] != g.storage_id[b]) continue;
      EXPECT_TRUE(last[a] < first[b] || last[b] < first[a])
          << "entries " << a << " and " << b << " share storage " << g.storage_id[a] << " while both live";
    }
}

TEST(Build, SeedFiveAddsWithoutFusionShareOneKernelAndTwoBuffers) {
  BuiltModel built = build_text(kFiveAddsAndExp, 0);
  GraphPlan g = plan_of(built);
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"x", "fused_add", "fused_add1", "fused_add2", "fused_add3",
                                                     "fused_add4", "fused_exp"}));
  EXPECT_EQ(func_names(g),
            (std::vector<std::string>{"fused_add", "fused_add", "fused_add", "fused_add", "fused_add", "fused_exp"}));
  EXPECT_EQ(built.num_kernels, 2u);  // structurally equal functions are generated once
  EXPECT_EQ(g.storage_id, (std::vector<int64_t>{0, 1, 2, 1, 2, 1, 2}));  // as the seed notes show
  EXPECT_EQ(g.arg_nodes, (std::vector<int64_t>{0}));
  EXPECT_EQ(g.heads, (std::vector<GraphEntry>{{6, 0, 0}}));
  EXPECT_EQ(g.node_row_ptr, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(g.shape, std::vector<Shape>(7, Shape{10, 20}));
  EXPECT_EQ(g.dltype, std::vector<std::string>(7, "float32"));
  EXPECT_EQ(g.device_index, std::vector<int64_t>(7, 1));
  EXPECT_EQ(g.nodes[1].attrs.at("num_inputs"), "1");
  EXPECT_EQ(g.nodes[1].attrs.at("num_outputs"), "1");
  EXPECT_EQ(g.nodes[1].attrs.at("flatten_data"), "0");
  EXPECT_EQ(g.nodes[1].inputs, (std::vector<GraphEntry>{{0, 0, 0}}));
}

TEST(Build, SeedFiveAddsAndExpFuseIntoOneKernel) {
  BuiltModel built = build_text(kFiveAddsAndExp, 3);
  GraphPlan g = plan_of(built);
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"x", "fused_add_add_add_add_add_exp"}));
  EXPECT_EQ(func_names(g), (std::vector<std::string>{"fused_add_add_add_add_add_exp"}));
  EXPECT_EQ(g.storage_id, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(built.num_kernels, 1u);
  EXPECT_TRUE(built.fallbacks.empty()) << built.fallbacks.front();
  EXPECT_NE(built.kernels_c.find("int32_t fused_add_add_add_add_add_exp(void* const* args)"), std::string::npos);
}

TEST(Build, SeedReductionSplitsTheGraphInTwoKernels) {
  GraphPlan g = plan_of(build_text(kAddAddSumAdd, 3));
  EXPECT_EQ(func_names(g), (std::vector<std::string>{"fused_add_add_sum", "fused_add"}));
  EXPECT_EQ(g.shape, (std::vector<Shape>{{20, 20}, {20}, {20}}));
  EXPECT_EQ(g.storage_id, (std::vector<int64_t>{0, 1, 2}));
}

// A name longer than 64 characters ends in a hash of the function: the same in every build of
// the same model (it once hashed the parameters' addresses).
TEST(Build, LongKernelNamesAreTheSameInEveryBuild) {
  const char* text = R"(
def @main(%x: Tensor[(8, 8), float32], %z: Tensor[(8, 8), float32]) {
  %0 = add(%x, %z); %1 = multiply(%0, %z); %2 = subtract(%1, %x); %3 = maximum(%2, %z); %4 = minimum(%3, %x);
  %5 = add(%4, %z); %6 = multiply(%5, %x); %7 = subtract(%6, %z); exp(%7)
})";
  const std::vector<std::string> first = func_names(plan_of(build_text(text, 3)));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].size(), 64u) << first[0];
  EXPECT_EQ(func_names(plan_of(build_text(text, 3))), first);
}

TEST(Build, MemoryPlanKeepsLiveValuesApart) {
  // Both branches stay live until the add; the result of the first exp is freed once read.
  GraphPlan g = plan_of(build_text(R"(
def @main(%x: Tensor[(64), float32]) {
  %0 = exp(%x); %1 = log(%x); %2 = add(%0, %1); %3 = negative(%2); %4 = exp(%3); multiply(%4, %2)
})",
                                   0));
  expect_storage_never_shared_while_live(g);
  EXPECT_EQ(g.storage_id[0], 0);
  EXPECT_NE(g.storage_id[1], g.storage_id[2]);
  std::set<int64_t> distinct(g.storage_id.begin(), g.storage_id.end());
  EXPECT_LT(distinct.size(), g.storage_id.size());  // something was reused
}

TEST(Build, SmallerValuesReuseLargerBuffers) {
  GraphPlan g = plan_of(build_text(R"(
def @main(%x: Tensor[(32, 32), float32]) {
  %0 = exp(%x); %1 = sum(%0, axis=[1]); %2 = exp(%1); %3 = negative(%2); exp(%3)
})",
                                   0));
  expect_storage_never_shared_while_live(g);
  EXPECT_EQ(g.storage_id[4], g.storage_id[2]);  // a (32) value lands in a freed buffer
}

// Runs `built` (compiled from `mod`) on `inputs` and compares its outputs with the interpreter's.
void expect_artifact_matches_interpreter(const IRModule& mod, const BuiltModel& built,
                                         const std::vector<std::pair<std::string, NDArray>>& inputs) {
  TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  GraphExecutor executor(Artifact::load(dir.file("m.kiln")));
  std::vector<Value> args;
  for (const auto& [name, value] : inputs) {
    executor.set_input(name, value);
    args.emplace_back(value);
  }
  executor.run();
  std::vector<NDArray> want = interpret(mod, "main", args).flatten();
  for (size_t k = 0; k < want.size(); ++k) {
    SCOPED_TRACE(cat("output ", k));
    testing::expect_all_close(executor.get_output(k), want[k], 1e-6, 1e-6);
  }
}

NDArray ramp(const Shape& shape) { return runtime_test::ramp(shape, 0.2f, -1.0f, 11); }

TEST(Build, ReshapeOnlyFunctionsAliasTheirInputAndKeepItLive) {
  // Unfused (opt 0), each reshape is a function of its own. The first reshape's input has no
  // reader left after it, yet its bytes are the alias's, read by the add: the negative's result
  // must not land in them.
  const char* text = R"(
def @main(%x: Tensor[(4, 4), float32]) {
  %0 = exp(%x); %1 = reshape(%0, newshape=[16]); %2 = negative(%x); %3 = reshape(%2, newshape=[16]);
  %4 = add(%1, %3); reshape(%4, newshape=[2, 8])
})";
  BuiltModel built = build_text(text, 0);
  GraphPlan g = plan_of(built);
  EXPECT_EQ(func_names(g),
            (std::vector<std::string>{"fused_exp", "__alias", "fused_negative", "__alias", "fused_add", "__alias"}));
  EXPECT_EQ(g.storage_id[2], g.storage_id[1]);  // exp's result and its reshape
  EXPECT_EQ(g.storage_id[4], g.storage_id[3]);
  EXPECT_EQ(g.storage_id[6], g.storage_id[5]);  // the graph's output is an alias too
  EXPECT_NE(g.storage_id[3], g.storage_id[1]);
  EXPECT_NE(g.storage_id[5], g.storage_id[1]);
  EXPECT_NE(g.storage_id[5], g.storage_id[3]);
  EXPECT_EQ(built.num_kernels, 3u);
  expect_artifact_matches_interpreter(parse_module(text), built, {{"x", ramp({4, 4})}});
  // A profiled run times the three kernels; the aliases run nothing and have no row.
  TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  GraphExecutor executor(Artifact::load(dir.file("m.kiln")));
  executor.set_input("x", ramp({4, 4}));
  std::vector<std::string> profiled;
  for (const GraphExecutor::StepTime& t : executor.run_profiled()) profiled.push_back(t.function);
  EXPECT_EQ(profiled, (std::vector<std::string>{"fused_exp", "fused_negative", "fused_add"}));
}

TEST(Build, LayoutTransformAliasesItsInputOnlyWhenTheBytesAreTheSame) {
  // NCHW -> NCHW1c, 16 channels of 1x1 -> NCHW16c and 32 channels of 1x1 NCHW16c -> NCHW keep the
  // bytes; 3 channels of 4x4 -> NCHW3c interleave them. The first reads a graph input, set
  // before each run.
  const char* text = R"(
def @main(%x: Tensor[(1, 3, 4, 4), float32], %z: Tensor[(1, 16, 1, 1), float32],
          %y: Tensor[(1, 2, 1, 1, 16), float32]) {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW1c"); %1 = exp(%0);
  %2 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW3c"); %3 = negative(%2);
  %4 = layout_transform(%z, src_layout="NCHW", dst_layout="NCHW16c"); %5 = negative(%4);
  %6 = layout_transform(%y, src_layout="NCHW16c", dst_layout="NCHW"); %7 = exp(%6);
  (%1, %3, %5, %7)
})";
  BuiltModel built = build_text(text, 0, {"a", "b", "c", "d"});
  GraphPlan g = plan_of(built);
  EXPECT_EQ(func_names(g), (std::vector<std::string>{"__alias", "fused_exp", "fused_layout_transform", "fused_negative",
                                                     "__alias", "fused_negative1", "__alias", "fused_exp1"}));
  EXPECT_EQ(g.storage_id[3], g.storage_id[0]);
  expect_artifact_matches_interpreter(
      parse_module(text), built,
      {{"x", ramp({1, 3, 4, 4})}, {"z", ramp({1, 16, 1, 1})}, {"y", ramp({1, 2, 1, 1, 16})}});
}

TEST(Build, OpsWithoutComputeRunTheirReferenceKernels) {
  IRModule mod = parse_module(R"(
def @main(%x: Tensor[(2, 6), float32]) {
  %0 = exp(%x); %1 = topk(%0, k=3); %2 = %1.0; add(%2, %2)
})");
  BuildOptions options;
  BuiltModel built = build(mod, {}, {"x"}, {"y"}, options);
  GraphPlan g = plan_of(built);
  bool has_reference = false;
  for (const GraphNode& n : g.nodes) has_reference |= starts_with(n.func_name(), "kiln_ref.");
  EXPECT_TRUE(has_reference);
  EXPECT_FALSE(built.fallbacks.empty());

  TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  GraphExecutor executor(Artifact::load(dir.file("m.kiln")));
  NDArray x = NDArray::from_vector<float>({2, 6}, {1, 5, 2, 4, 3, 0, -1, -5, 9, 7, 8, 2});
  executor.set_input("x", x);
  executor.run();
  NDArray want = interpret(mod, "main", {Value(x)}).tensor(), got = executor.get_output(0);
  ASSERT_EQ(got.shape(), want.shape());
  // Generated exp is kiln's vectorizable expf (within 2 ulp of the reference kernel's).
  for (int64_t i = 0; i < want.numel(); ++i) EXPECT_NEAR(got.at(i), want.at(i), 1e-6 * std::fabs(want.at(i))) << i;
}

TEST(Build, ArtifactRunsInAProcessLinkingOnlyTheRuntime) {
  BuiltModel built = build_text(R"(
def @main(%x: Tensor[(4, 8), float32], %w: Tensor[(8, 8), float32]) {
  %0 = nn.dense(%x, %w); %1 = nn.relu(%0); %2 = sum(%1, axis=[1]); %3 = exp(%x); (%2, %3)
})",
                                3, {"s", "e"});
  TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  EXPECT_TRUE(std::filesystem::exists(dir.file("m.kiln/kernels.c")));
  std::filesystem::create_directory(dir.file("in"));
  std::vector<float> xs(32), ws(64);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 7) - 3;
  for (size_t i = 0; i < ws.size(); ++i) ws[i] = static_cast<float>(i % 5) * 0.25f - 0.5f;
  NDArray x = NDArray::from_vector<float>({4, 8}, xs), w = NDArray::from_vector<float>({8, 8}, ws);
  write_npy(dir.file("in/x.npy"), x);
  write_npy(dir.file("in/w.npy"), w);
  std::string output;
  ASSERT_EQ(runtime_test::run_command(
                cat(KILN_RUN_ARTIFACT, " ", dir.file("m.kiln"), " ", dir.file("in"), " ", dir.file("out")), &output),
            0)
      << output;
  IRModule mod = parse_module(R"(
def @main(%x: Tensor[(4, 8), float32], %w: Tensor[(8, 8), float32]) {
  %0 = nn.dense(%x, %w); %1 = nn.relu(%0); %2 = sum(%1, axis=[1]); %3 = exp(%x); (%2, %3)
})");
  std::vector<NDArray> want = interpret(mod, "main", {Value(x), Value(w)}).flatten();
  std::vector<std::string> names = {"s", "e"};
  for (size_t k = 0; k < 2; ++k) {
    NDArray got = read_npy(dir.file("out/" + names[k] + ".npy"));
    ASSERT_EQ(got.shape(), want[k].shape());
    for (int64_t i = 0; i < got.numel(); ++i)
      EXPECT_NEAR(got.at(i), want[k].at(i), 1e-4 * (1 + std::abs(want[k].at(i))));
  }
}

TEST(Build, RunTimeShapedOutputsComeFromTheirKernel) {
  // argwhere's row count depends on the data: its entry has shape (-1, 2) and no planned storage.
  IRModule mod =
      parse_module(R"(def @main(%x: Tensor[(3, 4), float32]) { %0 = exp(%x); %1 = less(%0, 2f); argwhere(%1) })");
  BuiltModel built = build(mod, {}, {"x"}, {"y"});
  GraphPlan g = plan_of(built);
  const size_t out = g.entry_id(g.heads[0]);
  EXPECT_EQ(g.shape[out], (Shape{-1, 2}));
  EXPECT_EQ(g.storage_id[out], -1);
  TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  GraphExecutor executor(Artifact::load(dir.file("m.kiln")));
  for (float shift : {0.0f, 1.0f}) {
    std::vector<float> xs(12);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = (i % 3 == 0 ? 0.1f : 1.5f) - shift;
    NDArray x = NDArray::from_vector<float>({3, 4}, xs);
    executor.set_input("x", x);
    executor.run();
    NDArray want = interpret(mod, "main", {Value(x)}).tensor();
    EXPECT_TRUE(executor.get_output(0).same_as(want)) << "shift " << shift;
  }
}

TEST(Build, UnknownDimensionsAskForShapes) {
  IRModule mod = parse_module(R"(def @main(%x: Tensor[(?, 3), float32]) { exp(%x) })");
  try {
    build(mod, {}, {"x"}, {"y"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--shape"), std::string::npos) << e.what();
  }
}

TEST(Build, WriteArtifactRefusesToReplaceAFolderThatIsNotAnArtifact) {
  TempDir dir;
  std::filesystem::create_directory(dir.file("precious"));
  { std::ofstream(dir.file("precious/notes.txt")) << "keep me"; }
  EXPECT_THROW(write_artifact(build_text(kFiveAddsAndExp, 3), dir.file("precious")), Error);
  EXPECT_TRUE(std::filesystem::exists(dir.file("precious/notes.txt")));
}

}  // namespace
}  // namespace kiln
