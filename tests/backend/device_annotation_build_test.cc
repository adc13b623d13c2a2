// build() of annotated modules: the seed notes' on_device example compiles to a graph plan
// whose device_copy calls are "__copy" nodes, every entry records its device, no storage is
// shared between devices, and the executor (two CPU devices of separate memory) gives the
// interpreter's results. Random annotated graphs do too.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "kiln/backend/build.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/runtime/graph_executor.h"
#include "runtime/graph_json.h"
#include "runtime/runtime_test_util.h"

namespace kiln {
namespace {

using runtime_test::TempDir;

const char* kSeed = R"(
def @main(%x: Tensor[(1, 10), float32], %y: Tensor[(1, 10), float32]) {
  %0 = add(%x, %y); %1 = sqrt(%0); %2 = on_device(%1, virtual_device="cuda"); %3 = log(%0);
  %4 = subtract(%2, %3); %5 = exp(%4); on_device(%5, virtual_device="cuda")
})";

NDArray positive(const Shape& shape, std::mt19937& gen) {
  std::uniform_real_distribution<double> dist(0.5, 3.0);
  NDArray a = NDArray::empty(shape, DType::kFloat32);
  for (int64_t i = 0; i < a.numel(); ++i) a.set(i, dist(gen));
  return a;
}

struct Compiled {
  GraphPlan plan;
  std::vector<NDArray> outputs;
};

// Builds `mod` at `opt_level`, runs it on `args` and returns the plan and outputs.
Compiled build_and_run(const IRModule& mod, const std::vector<NDArray>& args, int opt_level) {
  std::vector<std::string> inputs;
  for (const Var& p : mod.lookup("main")->params) inputs.push_back(p->name);
  BuildOptions options;
  options.passes.opt_level = opt_level;
  BuiltModel built = build(mod, {}, inputs, {"out"}, options);
  TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  GraphExecutor executor(Artifact::load(dir.file("m.kiln")));
  for (size_t i = 0; i < args.size(); ++i) executor.set_input(i, args[i]);
  executor.run();
  Compiled c{parse_graph_json(built.graph_json, "graph.json"), {}};
  for (size_t i = 0; i < executor.num_outputs(); ++i) c.outputs.push_back(executor.get_output(i));
  return c;
}

void expect_devices_own_their_storage(const GraphPlan& g) {
  ASSERT_EQ(g.device_index.size(), g.num_entries());
  std::map<int64_t, int64_t> device_of_storage;
  for (size_t e = 0; e < g.num_entries(); ++e) {
    auto [it, first] = device_of_storage.emplace(g.storage_id[e], g.device_index[e]);
    EXPECT_TRUE(first || it->second == g.device_index[e]) << "storage " << g.storage_id[e] << " on two devices";
  }
}

void expect_close(const std::vector<NDArray>& want, const std::vector<NDArray>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(want[i].shape(), got[i].shape());
    for (int64_t k = 0; k < want[i].numel(); ++k) EXPECT_NEAR(want[i].at(k), got[i].at(k), 1e-5) << "output " << i;
  }
}

TEST(DeviceAnnotationBuild, SeedCompilesToCopyNodesWithDeviceIndexAndInterpreterResults) {
  IRModule mod = parse_module(kSeed);
  std::mt19937 gen(3);
  std::vector<NDArray> args = {positive({1, 10}, gen), positive({1, 10}, gen)};
  std::vector<NDArray> want = interpret(mod, "main", {Value(args[0]), Value(args[1])}).flatten();
  for (int opt_level : {0, 3}) {
    Compiled c = build_and_run(mod, args, opt_level);
    const GraphPlan& g = c.plan;
    std::vector<std::string> copies;
    std::map<std::string, int64_t> device_of_node;
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      device_of_node[g.nodes[n].name] = g.device_index[g.entry_id(static_cast<int64_t>(n), 0)];
      if (g.nodes[n].func_name() == "__copy") copies.push_back(g.nodes[n].name);
    }
    EXPECT_EQ(copies, (std::vector<std::string>{"__copy", "__copy1", "__copy2"})) << "-O" << opt_level;
    EXPECT_EQ(device_of_node["x"], 1);
    EXPECT_EQ(device_of_node["__copy"], 2);
    EXPECT_EQ(device_of_node["__copy1"], 1);
    EXPECT_EQ(device_of_node["__copy2"], 2);
    EXPECT_EQ(g.device_index[g.entry_id(g.heads[0])], 2);  // exp's result stays on cuda
    expect_devices_own_their_storage(g);
    expect_close(want, c.outputs);
  }
}

TEST(DeviceAnnotationBuild, AnInputPinnedToCudaIsSetThroughCuda) {
  IRModule mod = parse_module(R"(
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {
  %0 = on_device(%x, virtual_device="cuda"); %1 = exp(%0); %2 = on_device(%1, virtual_device="cuda");
  %3 = add(%x, %y); (%2, %3)
})");
  std::mt19937 gen(2);
  std::vector<NDArray> args = {positive({2, 3}, gen), positive({2, 3}, gen)};
  std::vector<NDArray> want = interpret(mod, "main", {Value(args[0]), Value(args[1])}).flatten();
  for (int opt_level : {0, 3}) {
    Compiled c = build_and_run(mod, args, opt_level);
    const GraphPlan& g = c.plan;
    EXPECT_EQ(g.device_index[0], 2) << "x";
    EXPECT_EQ(g.device_index[1], 1) << "y";
    int copies = 0;
    for (const GraphNode& n : g.nodes) copies += n.func_name() == "__copy";
    EXPECT_EQ(copies, 2);  // x to the cpu for the add, exp's result to the result tuple on the cpu
    expect_devices_own_their_storage(g);
    expect_close(want, c.outputs);
  }
}

TEST(DeviceAnnotationBuild, ModelsWithoutAnnotationsAreAllOnTheCpu) {
  IRModule mod = parse_module("def @main(%x: Tensor[(2, 3), float32]) { %0 = exp(%x); add(%0, %x) }");
  std::mt19937 gen(1);
  Compiled c = build_and_run(mod, {positive({2, 3}, gen)}, 3);
  EXPECT_EQ(c.plan.device_index, std::vector<int64_t>(c.plan.num_entries(), 1));
  for (const GraphNode& n : c.plan.nodes) EXPECT_NE(n.func_name(), "__copy");
}

// A chain of elementwise ops with random annotations, some values read on both devices.
IRModule random_annotated_chain(unsigned seed) {
  std::mt19937 gen(seed);
  auto pick = [&gen](int n) { return std::uniform_int_distribution<int>(0, n - 1)(gen); };
  Var x = make_var("x", tensor_type({3, 4}, DType::kFloat32));
  Var y = make_var("y", tensor_type({3, 4}, DType::kFloat32));
  std::vector<Expr> pool = {x, y};
  static const char* const kOps[] = {"add", "multiply", "maximum", "tanh", "negative", "sigmoid"};
  for (int i = 0; i < 8; ++i) {
    int op = pick(6);
    const Expr& a = pool[static_cast<size_t>(pick(static_cast<int>(pool.size())))];
    const Expr& b = pool[static_cast<size_t>(pick(static_cast<int>(pool.size())))];
    Expr e = op < 3 ? call_op(kOps[op], {a, b}) : call_op(kOps[op], {a});
    if (pick(2)) e = call_op("on_device", {e}, {{"virtual_device", pick(2) ? "cuda" : "cpu"}});
    pool.push_back(e);
  }
  IRModule mod;
  mod.add("main", make_function({x, y}, make_tuple({pool.back(), pool[pool.size() - 3]})));
  return mod;
}

TEST(DeviceAnnotationBuild, RandomAnnotatedGraphsGiveTheInterpretersResults) {
  for (unsigned seed = 0; seed < 4; ++seed) {
    IRModule mod = random_annotated_chain(seed);
    std::mt19937 gen(seed);
    std::vector<NDArray> args = {positive({3, 4}, gen), positive({3, 4}, gen)};
    std::vector<NDArray> want = interpret(mod, "main", {Value(args[0]), Value(args[1])}).flatten();
    Compiled c = build_and_run(mod, args, 3);
    expect_devices_own_their_storage(c.plan);
    expect_close(want, c.outputs);
  }
}

}  // namespace
}  // namespace kiln
