#include "kiln/runtime/graph_executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <thread>

#include "runtime/graph_json.h"
#include "runtime/module.h"
#include "runtime/params_io.h"
#include "runtime_test_util.h"

namespace kiln {
namespace {

using runtime_test::compile_library;
using runtime_test::TempDir;
using runtime_test::write_text;

// Generated-code stand-ins for (2, 4) float32 tensors, following the kernel ABI by hand.
const char* kKernelsSource = R"(
#include "kiln/runtime/kernel_abi.h"

const KilnRuntimeApi* kiln_runtime_api = 0;
int32_t kiln_abi_version(void) { return KILN_ABI_VERSION; }

int32_t fused_add(void* const* args) {
  const float* a = args[0];
  const float* b = args[1];
  float* out = args[2];
  for (int i = 0; i < 8; ++i) out[i] = a[i] + b[i];
  return 0;
}

/* x (2, 4) minus its row maxima m (2, 1). */
int32_t fused_sub_row(void* const* args) {
  const float* x = args[0];
  const float* m = args[1];
  float* out = args[2];
  for (int i = 0; i < 8; ++i) out[i] = x[i] - m[i / 4];
  return 0;
}

struct RowsEnv { const float* in; float* out; };

static int32_t relu_row(int64_t task, int64_t num_tasks, void* env) {
  struct RowsEnv* rows = env;
  if (num_tasks != 2) return 7;
  for (int64_t j = 0; j < 4; ++j) {
    float v = rows->in[task * 4 + j];
    rows->out[task * 4 + j] = v > 0 ? v : 0;
  }
  return 0;
}

/* One task per row, on the executor's thread pool. */
int32_t fused_relu(void* const* args) {
  struct RowsEnv env = {args[0], args[1]};
  return kiln_runtime_api->parallel_for(2, relu_row, &env);
}

int32_t fused_fail(void* const* args) {
  (void)args;
  return 3;
}
)";

constexpr int64_t kRows = 2, kCols = 4;
const Shape kMatrix = {kRows, kCols};

GraphNode variable(const std::string& name) { return GraphNode{"null", name, {}, {}}; }

GraphNode call(const std::string& name, const std::string& func, std::vector<int64_t> inputs,
               const std::string& op_attrs = "") {
  GraphNode node{"tvm_op", name, {{"func_name", func}, {"num_inputs", cat(inputs.size())}, {"num_outputs", "1"}}, {}};
  node.attrs["flatten_data"] = "0";
  if (!op_attrs.empty()) node.attrs["op_attrs"] = op_attrs;
  for (int64_t input : inputs) node.inputs.push_back({input, 0, 0});
  return node;
}

// x, y inputs, b a parameter; every node has one output, so entry ids are node ids.
//   3 m      = kiln_ref.max(x, axis=[1], keepdims)   (2, 1)  storage 2
//   4 t0     = fused_sub_row(x, m)                   (2, 4)  storage 3
//   5 t1     = fused_add(t0, y)                      (2, 4)  storage 2  (m is dead; a larger tensor)
//   6 t2     = fused_relu(t1)                        (2, 4)  storage 3  (parallel_for)
//   7 logits = fused_add(t2, b)                      (2, 4)  storage 2
//   8 probs  = kiln_ref.nn.softmax(logits, axis=-1)  (2, 4)  storage 3
GraphPlan test_plan() {
  GraphPlan plan;
  plan.nodes = {variable("x"),
                variable("y"),
                variable("b"),
                call("m", "kiln_ref.max", {0}, R"({"axis":[1],"keepdims":true,"exclude":false})"),
                call("t0", "fused_sub_row", {0, 3}),
                call("t1", "fused_add", {4, 1}),
                call("t2", "fused_relu", {5}),
                call("logits", "fused_add", {6, 2}),
                call("probs", "kiln_ref.nn.softmax", {7}, R"({"axis":-1})")};
  plan.arg_nodes = {0, 1, 2};
  plan.heads = {{8, 0, 0}, {7, 0, 0}};
  for (int64_t i = 0; i <= 9; ++i) plan.node_row_ptr.push_back(i);
  plan.dltype.assign(9, "float32");
  plan.shape = {kMatrix, kMatrix, kMatrix, {kRows, 1}, kMatrix, kMatrix, kMatrix, kMatrix, kMatrix};
  plan.storage_id = {0, 1, 6, 2, 3, 2, 3, 2, 3};
  plan.device_index.assign(9, 1);
  plan.input_names = {"x", "y"};
  plan.output_names = {"probs", "logits"};
  return plan;
}

NDArray matrix(std::vector<float> values) { return NDArray::from_vector<float>(kMatrix, values); }

NDArray bias() { return matrix({0.5f, -1.f, 2.f, 0.f, 1.f, 1.f, -3.f, 0.25f}); }

// Writes graph.json, params.bin and lib.so of test_plan() into `dir`.
void write_artifact(const std::string& dir, const GraphPlan& plan = test_plan(), const char* kernels = kKernelsSource) {
  write_graph_json(dir + "/graph.json", plan);
  write_params(dir + "/params.bin", {{"b", bias()}});
  compile_library(kernels, dir + "/lib.so");
}

struct Expected {
  std::vector<double> logits, probs;
};

// The graph computed directly.
Expected expected_outputs(const NDArray& x, const NDArray& y) {
  Expected e;
  const NDArray b = bias();
  for (int64_t r = 0; r < kRows; ++r) {
    double row_max = -INFINITY;
    for (int64_t c = 0; c < kCols; ++c) row_max = std::max(row_max, x.at(r * kCols + c));
    std::vector<double> row;
    for (int64_t c = 0; c < kCols; ++c) {
      const int64_t i = r * kCols + c;
      row.push_back(std::max(0.0, x.at(i) - row_max + y.at(i)) + b.at(i));
    }
    double sum = 0;
    for (double v : row) sum += std::exp(v);
    for (double v : row) {
      e.logits.push_back(v);
      e.probs.push_back(std::exp(v) / sum);
    }
  }
  return e;
}

void expect_outputs(const GraphExecutor& executor, const NDArray& x, const NDArray& y) {
  const Expected e = expected_outputs(x, y);
  const NDArray logits = executor.get_output("logits"), probs = executor.get_output(0);
  ASSERT_EQ(logits.shape(), kMatrix);
  ASSERT_EQ(probs.dtype(), DType::kFloat32);
  for (size_t i = 0; i < e.logits.size(); ++i) {
    EXPECT_FLOAT_EQ(logits.at(static_cast<int64_t>(i)), e.logits[i]) << "logits[" << i << "]";
    EXPECT_NEAR(probs.at(static_cast<int64_t>(i)), e.probs[i], 1e-6) << "probs[" << i << "]";
  }
}

class GraphExecutorTest : public testing::Test {
 protected:
  void SetUp() override { write_artifact(dir_.path()); }
  TempDir dir_;
};

TEST_F(GraphExecutorTest, RunsGeneratedAndReferenceNodes) {
  GraphExecutor executor(Artifact::load(dir_.path()), 2);
  ASSERT_EQ(executor.num_inputs(), 2u);
  ASSERT_EQ(executor.num_outputs(), 2u);
  EXPECT_EQ(executor.input_info(1).name, "y");
  EXPECT_EQ(executor.output_info(1).name, "logits");
  EXPECT_EQ(executor.num_threads(), 2);
  const NDArray x = matrix({1, 2, 3, 4, -1, 5, 0, 2}), y = matrix({-2, 0.5f, 1, 0, 4, -3, 1, 1});
  executor.set_input("x", x);
  executor.set_input(1, y);
  executor.run();
  // Row 0: x - max = (-3, -2, -1, 0), + y = (-5, -1.5, 0, 0), relu, + b = (0.5, -1, 2, 0);
  // row 1: (-6, 0, -5, -3) + y = (-2, -3, -4, -2), relu gives zeros, + b = (1, 1, -3, 0.25).
  EXPECT_EQ(executor.get_output("logits").to_doubles(), (std::vector<double>{0.5, -1, 2, 0, 1, 1, -3, 0.25}));
  expect_outputs(executor, x, y);
  const std::vector<double> probs = executor.get_output("probs").to_doubles();
  EXPECT_NEAR(probs[0] + probs[1] + probs[2] + probs[3], 1.0, 1e-6);

  // Inputs stay set; a second run with a new x recomputes everything.
  const NDArray x2 = matrix({0, 0, 0, 0, 9, 8, 7, 6});
  executor.set_input("x", x2);
  executor.run();
  expect_outputs(executor, x2, y);
}

TEST_F(GraphExecutorTest, OutputsAreCopiesThatLaterRunsDoNotChange) {
  GraphExecutor executor(Artifact::load(dir_.path()));
  const NDArray y = matrix({0, 0, 0, 0, 0, 0, 0, 0});
  executor.set_input("x", matrix({1, 2, 3, 4, 5, 6, 7, 8}));
  executor.set_input("y", y);
  executor.run();
  const NDArray first = executor.get_output("logits");
  const std::vector<double> first_values = first.to_doubles();
  executor.set_input("x", matrix({8, 7, 6, 5, 4, 3, 2, 1}));
  executor.run();
  EXPECT_EQ(first.to_doubles(), first_values);
}

TEST_F(GraphExecutorTest, ExecutorsOfOneArtifactKeepSeparateMemory) {
  auto artifact = Artifact::load(dir_.path());
  GraphExecutor a(artifact), b(artifact);
  const NDArray xa = matrix({1, 2, 3, 4, 5, 6, 7, 8}), xb = matrix({-1, 0, 1, 0, 3, 3, 3, 3});
  const NDArray y = matrix({1, 1, 1, 1, 2, 2, 2, 2});
  a.set_input("x", xa);
  a.set_input("y", y);
  b.set_input("x", xb);
  b.set_input("y", y);
  a.run();
  b.run();
  expect_outputs(a, xa, y);
  expect_outputs(b, xb, y);
}

TEST_F(GraphExecutorTest, FourExecutorsRunConcurrently) {
  auto artifact = Artifact::load(dir_.path());
  std::vector<int> mismatches(4, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      GraphExecutor executor(artifact, 2);
      int bad = 0;
      for (int round = 0; round < 25; ++round) {
        std::vector<float> xs, ys;
        for (int i = 0; i < 8; ++i) {
          xs.push_back(static_cast<float>((t * 7 + round * 3 + i * 5) % 11) - 5);
          ys.push_back(static_cast<float>((t + round + i) % 4) * 0.5f);
        }
        const NDArray x = matrix(xs), y = matrix(ys);
        executor.set_input("x", x);
        executor.set_input("y", y);
        executor.run();
        const Expected e = expected_outputs(x, y);
        const std::vector<double> logits = executor.get_output("logits").to_doubles();
        const std::vector<double> probs = executor.get_output("probs").to_doubles();
        for (size_t i = 0; i < 8; ++i)
          if (std::abs(logits[i] - e.logits[i]) > 1e-6 || std::abs(probs[i] - e.probs[i]) > 1e-6) ++bad;
      }
      mismatches[static_cast<size_t>(t)] = bad;
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

TEST_F(GraphExecutorTest, StorageBlocksHoldTheirLargestTensor) {
  // Storage 2 first holds m (2, 1), then (2, 4) tensors: sized by the first alone, the
  // later views would not fit and binding would fail.
  GraphPlan plan = test_plan();
  ASSERT_EQ(plan.storage_id[3], plan.storage_id[5]);
  GraphExecutor executor(Artifact::create(plan, Module::load(dir_.file("lib.so")), {{"b", bias()}}, "memory"));
  const NDArray x = matrix({3, 1, 4, 1, 5, 9, 2, 6}), y = matrix({2, 7, 1, 8, 2, 8, 1, 8});
  executor.set_input("x", x);
  executor.set_input("y", y);
  executor.run();
  expect_outputs(executor, x, y);
}

TEST_F(GraphExecutorTest, RunWithoutAnInputNamesIt) {
  GraphExecutor executor(Artifact::load(dir_.path()));
  executor.set_input("x", matrix({1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(error_of([&] { executor.run(); }), "input 'y' was not set before run()");
}

TEST_F(GraphExecutorTest, WrongInputShapeDtypeOrNameIsAnError) {
  GraphExecutor executor(Artifact::load(dir_.path()));
  EXPECT_EQ(error_of([&] {
              executor.set_input("x", NDArray::empty({2, 3}, DType::kFloat32));
            }),
            "input 'x' has the wrong shape (expected float32 (2, 4), found float32 (2, 3))");
  EXPECT_EQ(error_of([&] { executor.set_input("y", NDArray::empty(kMatrix, DType::kFloat64)); }),
            "input 'y' has the wrong dtype (expected float32 (2, 4), found float64 (2, 4))");
  EXPECT_EQ(error_of([&] {
              executor.set_input("z", matrix({1, 2, 3, 4, 5, 6, 7, 8}));
            }),
            "the graph has no input named 'z' (expected 'x', 'y', found 'z')");
  EXPECT_NE(error_of([&] {
              executor.set_input(2, matrix({1, 2, 3, 4, 5, 6, 7, 8}));
            }).find("input index 2 out of range"),
            std::string::npos);
  EXPECT_NE(error_of([&] { executor.get_output("nope"); }).find("no output named 'nope'"), std::string::npos);
}

TEST_F(GraphExecutorTest, CorruptGraphJsonNamesTheFile) {
  const std::string text = graph_to_json(test_plan());
  write_text(dir_.file("graph.json"), text.substr(0, text.size() / 2));
  const std::string message = error_of([&] { Artifact::load(dir_.path()); });
  EXPECT_NE(message.find(dir_.file("graph.json") + ": graph is not valid JSON"), std::string::npos) << message;
}

TEST_F(GraphExecutorTest, MissingFunctionInLibraryNamesNodeAndFunction) {
  GraphPlan plan = test_plan();
  plan.nodes[6].attrs["func_name"] = "fused_relu_v2";
  write_graph_json(dir_.file("graph.json"), plan);
  const std::string message = error_of([&] { Artifact::load(dir_.path()); });
  EXPECT_NE(message.find(dir_.file("lib.so")), std::string::npos) << message;
  EXPECT_NE(message.find("node 't2': op 'fused_relu_v2': kernel library has no function 'fused_relu_v2'"),
            std::string::npos)
      << message;
}

TEST_F(GraphExecutorTest, MissingLibraryIsAnErrorOnlyWhenCodeIsNeeded) {
  std::filesystem::remove(dir_.file("lib.so"));
  EXPECT_NE(error_of([&] { Artifact::load(dir_.path()); })
                .find("node 't0': op 'fused_sub_row': function 'fused_sub_row' needs generated code, but the artifact "
                      "has no lib.so"),
            std::string::npos);

  // A graph of reference kernels alone needs no lib.so.
  GraphPlan plan;
  plan.nodes = {variable("x"), call("probs", "kiln_ref.nn.softmax", {0}, R"({"axis":1})")};
  plan.arg_nodes = {0};
  plan.heads = {{1, 0, 0}};
  plan.node_row_ptr = {0, 1, 2};
  plan.dltype = {"float32", "float32"};
  plan.shape = {{1, 2}, {1, 2}};
  plan.storage_id = {0, 1};
  write_graph_json(dir_.file("graph.json"), plan);
  std::filesystem::remove(dir_.file("params.bin"));
  GraphExecutor executor(Artifact::load(dir_.path()));
  EXPECT_EQ(executor.input_info(0).name, "x");  // no kiln section: inputs are the arguments
  EXPECT_EQ(executor.output_info(0).name, "output0");
  executor.set_input(0, NDArray::from_vector<float>({1, 2}, {0.f, std::log(3.f)}));
  executor.run();
  const std::vector<double> probs = executor.get_output(0).to_doubles();
  EXPECT_NEAR(probs[0], 0.25, 1e-6);
  EXPECT_NEAR(probs[1], 0.75, 1e-6);
}

// y = if (c) { exp(x) * k } else { x }, k a parameter of the then branch: only the branch
// taken runs, its parameter comes from the one params list, and its outputs are the node's.
TEST_F(GraphExecutorTest, IfNodeRunsTheBranchTaken) {
  runtime_test::PlanBuilder then_graph, else_graph, main;
  const int64_t then_x = then_graph.input("if.0", {3}), k = then_graph.param("k", {});
  const int64_t e = then_graph.call("e", "kiln_ref.exp", {then_x}, {3});
  then_graph.output(then_graph.call("m", "kiln_ref.multiply", {e, k}, {3}));
  else_graph.output(else_graph.input("if.0", {3}));
  const int64_t c = main.input("c", {}, "bool"), x_node = main.input("x", {3});
  main.output(main.call("y", "kiln_ref.negative", {main.if_node("if", c, {x_node}, 0, 1, {{{3}}})}, {3}), "y");
  const GraphPlan plan = main.plan({then_graph.plan(), else_graph.plan()});
  write_graph_json(dir_.file("graph.json"), plan);
  write_params(dir_.file("params.bin"), {{"k", NDArray::scalar(DType::kFloat32, 2)}});
  std::filesystem::remove(dir_.file("lib.so"));
  GraphExecutor executor(Artifact::load(dir_.path()));
  const NDArray x = NDArray::from_vector<float>({3}, {0, 1, -1});
  executor.set_input("x", x);
  for (bool c : {true, false, true}) {
    executor.set_input("c", NDArray::scalar(DType::kBool, c ? 1 : 0));
    executor.run();
    const std::vector<double> y = executor.get_output(0).to_doubles();
    for (size_t i = 0; i < 3; ++i) {
      const double xi = x.at(static_cast<int64_t>(i));
      EXPECT_NEAR(y[i], c ? -2 * std::exp(xi) : -xi, 1e-5) << "c = " << c << ", element " << i;
    }
  }
  // A parameter no graph of the tree names is still an error.
  write_params(dir_.file("params.bin"),
               {{"k", NDArray::scalar(DType::kFloat32, 2)}, {"q", NDArray::scalar(DType::kFloat32, 2)}});
  EXPECT_NE(error_of([&] { Artifact::load(dir_.path()); }).find("params.bin holds 'q'"), std::string::npos);
}

// y = x tiled twice m times: the carried value's extent changes every iteration ('?' in the
// body), so each iteration sizes it anew, in the two blocks the loop keeps across executions.
GraphPlan doubling_loop_plan() {
  runtime_test::PlanBuilder body, main;
  body.input("loop.0", {}, "int64");
  const int64_t cond = body.input("loop.1", {}, "bool");
  const int64_t carried = body.input("loop.2", {-1}), reps = body.input("loop.3", {1}, "int64");
  body.output(cond);
  body.output(body.call("t", "kiln_ref.dyn.tile", {carried, reps}, {-1}));
  const int64_t m = main.input("m", {}, "int64"), c = main.input("c", {}, "bool"), x = main.input("x", {1});
  const int64_t twice = main.param("twice", {1}, "int64");
  main.output(main.loop_node("loop", {m, c, x, twice}, 0, 1, {{{-1}}}), "y");
  return main.plan({body.plan()});
}

TEST(GraphExecutorLoop, CarriedValueOfChangingShapeReusesItsBlocks) {
  std::vector<Device*> devices;
  GraphExecutor executor(
      Artifact::create(doubling_loop_plan(), nullptr, {{"twice", NDArray::from_vector<int64_t>({1}, {2})}}, "memory"),
      1, [&devices](int64_t) {
        auto device = std::make_unique<CpuDevice>();
        devices.push_back(device.get());
        return device;
      });
  auto allocations = [&devices] {
    size_t n = 0;
    for (const Device* d : devices) n += d->num_allocations();
    return n;
  };
  executor.set_input("c", NDArray::scalar(DType::kBool, 1));
  executor.set_input("x", NDArray::from_vector<float>({1}, {1.5f}));
  auto run = [&](int64_t m) {
    executor.set_input("m", NDArray::from_vector<int64_t>({}, {m}));
    const size_t before = allocations();
    executor.run();
    const NDArray y = executor.get_output(0);
    EXPECT_EQ(y.shape(), Shape({int64_t{1} << m})) << "m = " << m;
    for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(y.at(i), 1.5) << "m = " << m << ", element " << i;
    return allocations() - before;
  };
  EXPECT_GT(run(3), 0u);
  EXPECT_EQ(run(3), 0u);
  EXPECT_EQ(run(0), 0u);
  EXPECT_EQ(run(2), 0u);
  EXPECT_GT(run(6), 0u);
  EXPECT_EQ(run(6), 0u);
}

TEST(GraphExecutorLoop, ABodyInputOfRunTimeShapeMustBeACarriedValue) {
  GraphPlan plan = doubling_loop_plan();
  plan.subgraphs[0].shape[3] = {-1};  // the captured repeats
  plan.subgraphs[0].storage_id[3] = -1;
  plan.shape[3] = {-1};
  plan.storage_id[3] = -1;
  EXPECT_NE(
      error_of([&] { Artifact::create(plan, nullptr, {}, "memory"); }).find("a sub-graph input of run-time shape"),
      std::string::npos);
}

TEST_F(GraphExecutorTest, FailingKernelNamesNodeAndStatus) {
  GraphPlan plan = test_plan();
  plan.nodes[6].attrs["func_name"] = "fused_fail";
  GraphExecutor executor(Artifact::create(plan, Module::load(dir_.file("lib.so")), {{"b", bias()}}, "memory"));
  executor.set_input("x", matrix({1, 2, 3, 4, 5, 6, 7, 8}));
  executor.set_input("y", matrix({1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(error_of([&] { executor.run(); }),
            "node 't2': op 'fused_fail': generated function 'fused_fail' failed with status 3");
}

TEST_F(GraphExecutorTest, ReferenceKernelErrorsNameNodeAndOp) {
  GraphPlan plan = test_plan();
  plan.nodes[8].attrs["func_name"] = "kiln_ref.nn.no_such_op";
  EXPECT_NE(error_of([&] {
              Artifact::create(plan, Module::load(dir_.file("lib.so")), {{"b", bias()}}, "m.kiln");
            }).find("m.kiln: node 'probs': op 'nn.no_such_op'"),
            std::string::npos);
  plan = test_plan();
  plan.nodes[8].attrs["op_attrs"] = "{\"axis\": ";
  EXPECT_NE(error_of([&] {
              Artifact::create(plan, Module::load(dir_.file("lib.so")), {{"b", bias()}}, "m.kiln");
            }).find("m.kiln: node 'probs': op 'nn.softmax': op_attrs is not valid JSON"),
            std::string::npos);
}

TEST_F(GraphExecutorTest, ParamsMustMatchTheGraph) {
  auto library = Module::load(dir_.file("lib.so"));
  EXPECT_EQ(error_of([&] {
              Artifact::create(test_plan(), library, {{"b", NDArray::empty({4}, DType::kFloat32)}}, "m.kiln");
            }),
            "m.kiln: parameter 'b' does not match the graph (expected float32 (2, 4), found float32 (4))");
  EXPECT_EQ(error_of([&] {
              Artifact::create(test_plan(), library, {{"b", bias()}, {"c", bias()}}, "m.kiln");
            }),
            "m.kiln: params.bin holds 'c', which is not a graph input");
  EXPECT_EQ(error_of([&] { Artifact::create(test_plan(), library, {}, "m.kiln"); }),
            "m.kiln: graph variable 'b' is neither an input nor a parameter");
}

TEST_F(GraphExecutorTest, MissingArtifactFolderIsNamed) {
  EXPECT_EQ(error_of([&] { Artifact::load(dir_.file("nothing.kiln")); }),
            dir_.file("nothing.kiln") + ": artifact folder not found");
}

TEST(Module, RejectsLibrariesOfAnotherAbi) {
  TempDir dir;
  compile_library("#include <stdint.h>\nconst void* kiln_runtime_api;\nint32_t kiln_abi_version(void) { return 2; }\n",
                  dir.file("old.so"));
  EXPECT_EQ(
      error_of([&] { Module::load(dir.file("old.so")); }),
      dir.file("old.so") + ": kernel library built for another kernel ABI (expected kiln_abi_version() == 1, found 2)");
  compile_library("#include <stdint.h>\nint32_t kiln_abi_version(void) { return 1; }\n", dir.file("no_api.so"));
  EXPECT_NE(error_of([&] { Module::load(dir.file("no_api.so")); }).find("does not define kiln_runtime_api"),
            std::string::npos);
  compile_library("int unrelated(void) { return 0; }\n", dir.file("plain.so"));
  EXPECT_NE(error_of([&] { Module::load(dir.file("plain.so")); }).find("does not define kiln_abi_version"),
            std::string::npos);
  write_text(dir.file("text.so"), "not an ELF file");
  EXPECT_NE(
      error_of([&] { Module::load(dir.file("text.so")); }).find(dir.file("text.so") + ": cannot load kernel library"),
      std::string::npos);
}

#ifdef KILN_RUN_ARTIFACT
// The deployment story: a process linking only the runtime library runs the artifact.
TEST_F(GraphExecutorTest, RunsInAProcessLinkingOnlyTheRuntime) {
  TempDir io;
  std::filesystem::create_directory(io.file("in"));
  const NDArray x = matrix({1, 2, 3, 4, -1, 5, 0, 2}), y = matrix({-2, 0.5f, 1, 0, 4, -3, 1, 1});
  write_npy(io.file("in/x.npy"), x);
  write_npy(io.file("in/y.npy"), y);
  std::string output;
  ASSERT_EQ(
      runtime_test::run_command(
          cat(KILN_RUN_ARTIFACT, " ", dir_.path(), " ", io.file("in"), " ", io.file("out"), " --threads 2"), &output),
      0)
      << output;
  const Expected e = expected_outputs(x, y);
  const std::vector<double> logits = read_npy(io.file("out/logits.npy")).to_doubles();
  const std::vector<double> probs = read_npy(io.file("out/probs.npy")).to_doubles();
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_FLOAT_EQ(logits[i], e.logits[i]);
    EXPECT_NEAR(probs[i], e.probs[i], 1e-6);
  }

  std::filesystem::remove(io.file("in/y.npy"));
  output.clear();
  EXPECT_EQ(runtime_test::run_command(
                cat(KILN_RUN_ARTIFACT, " ", dir_.path(), " ", io.file("in"), " ", io.file("out2")), &output),
            1);
  EXPECT_EQ(output, "kiln-run-artifact: error: " + io.file("in/y.npy") + ": no file for input 'y'\n");
}
#endif

}  // namespace
}  // namespace kiln
