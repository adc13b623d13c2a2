// The graph executor with several devices: the seed notes' device example as a graph plan
// run on two CPU devices of separate memory (device 1 the CPU, device 2 standing for cuda).
// Each device allocates its own storage, the "__copy" nodes are what moves data between
// them, inputs and outputs go through their device, and the results are the graph's.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "kiln/runtime/device.h"
#include "kiln/runtime/graph_executor.h"
#include "kiln/support/error.h"
#include "runtime/graph_json.h"

namespace kiln {
namespace {

const Shape kShape = {1, 10};

GraphNode variable(const std::string& name) { return GraphNode{"null", name, {}, {}}; }

GraphNode call(const std::string& name, const std::string& func, std::vector<int64_t> inputs) {
  GraphNode node{"tvm_op", name, {{"func_name", func}, {"num_inputs", cat(inputs.size())}, {"num_outputs", "1"}}, {}};
  for (int64_t input : inputs) node.inputs.push_back({input, 0, 0});
  return node;
}

// RewriteAnnotatedOps' result for the seed, as the backend plans it; one output per node.
//   2 a  = add(x, y)        dev 1      3 a' = __copy(a)   dev 2     4 s = sqrt(a')  dev 2
//   5 s' = __copy(s)        dev 1      6 l  = log(a)      dev 1     7 d = s' - l    dev 1
//   8 d' = __copy(d)        dev 2      9 e  = exp(d')     dev 2     outputs: e, a
GraphPlan seed_plan() {
  GraphPlan plan;
  plan.nodes = {variable("x"),
                variable("y"),
                call("a", "kiln_ref.add", {0, 1}),
                call("__copy", "__copy", {2}),
                call("s", "kiln_ref.sqrt", {3}),
                call("__copy1", "__copy", {4}),
                call("l", "kiln_ref.log", {2}),
                call("d", "kiln_ref.subtract", {5, 6}),
                call("__copy2", "__copy", {7}),
                call("e", "kiln_ref.exp", {8})};
  plan.arg_nodes = {0, 1};
  plan.heads = {{9, 0, 0}, {2, 0, 0}};
  for (int64_t i = 0; i <= 10; ++i) plan.node_row_ptr.push_back(i);
  plan.dltype.assign(10, "float32");
  plan.shape.assign(10, kShape);
  plan.device_index = {1, 1, 1, 2, 2, 1, 1, 1, 2, 2};
  plan.storage_id = {0, 1, 2, 3, 4, 5, 6, 5, 3, 4};  // device 2 owns 3 and 4 only
  plan.input_names = {"x", "y"};
  plan.output_names = {"e", "a"};
  return plan;
}

NDArray row(double start) {
  NDArray a = NDArray::empty(kShape, DType::kFloat32);
  for (int64_t i = 0; i < a.numel(); ++i) a.set(i, start + 0.25 * static_cast<double>(i));
  return a;
}

std::vector<float> seed_result(const NDArray& x, const NDArray& y) {
  std::vector<float> out;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float a = x.data<float>()[i] + y.data<float>()[i];
    out.push_back(std::exp(std::sqrt(a) - std::log(a)));
  }
  return out;
}

TEST(GraphExecutorDevices, RunsTheSeedOnTwoCpuDevicesOfSeparateMemory) {
  GraphExecutor executor(Artifact::create(seed_plan(), nullptr, {}, "seed"));
  EXPECT_EQ(executor.device_codes(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(executor.device(1).name(), "cpu");
  EXPECT_EQ(executor.device(2).name(), "cuda");
  EXPECT_EQ(executor.device(1).num_allocations(), 5u);  // storage 0, 1, 2, 5, 6
  EXPECT_EQ(executor.device(2).num_allocations(), 2u);  // storage 3, 4

  const NDArray x = row(1.0), y = row(0.5);
  executor.set_input("x", x);
  executor.set_input("y", y);
  EXPECT_EQ(executor.device(1).num_copies(), 2u);  // the inputs, copied in on device 1
  EXPECT_EQ(executor.device(2).num_copies(), 0u);
  executor.run();
  EXPECT_EQ(executor.device(1).num_copies(), 3u);  // + __copy1 into device 1
  EXPECT_EQ(executor.device(2).num_copies(), 2u);  // __copy and __copy2 into device 2
  EXPECT_EQ(executor.device(2).bytes_copied(), 2 * 10 * sizeof(float));

  const std::vector<float> want = seed_result(x, y);
  const NDArray e = executor.get_output("e");
  EXPECT_EQ(executor.device(2).num_copies(), 3u);  // the output, copied out of device 2
  for (int64_t i = 0; i < e.numel(); ++i) EXPECT_FLOAT_EQ(e.data<float>()[i], want[static_cast<size_t>(i)]);
  EXPECT_TRUE(executor.get_output("a").same_as(executor.entry_tensor(2)));
}

TEST(GraphExecutorDevices, DevicesShareNoBufferAndOnlyTheCopyMovesData) {
  GraphExecutor executor(Artifact::create(seed_plan(), nullptr, {}, "seed"));
  const GraphPlan plan = seed_plan();
  std::set<const void*> on_device[3];
  for (size_t entry = 0; entry < plan.num_entries(); ++entry)
    on_device[plan.device_index[entry]].insert(executor.entry_tensor(entry).raw());
  for (const void* p : on_device[2]) EXPECT_EQ(on_device[1].count(p), 0u);

  executor.set_input("x", row(1.0));
  executor.set_input("y", row(2.0));
  executor.run();
  // d on device 1 was copied to d' on device 2; overwriting d leaves d' as it was.
  NDArray d = executor.entry_tensor(7);
  const NDArray copied = executor.entry_tensor(8).clone();
  EXPECT_TRUE(copied.same_as(d));
  for (int64_t i = 0; i < d.numel(); ++i) d.set(i, -7.0);
  EXPECT_TRUE(executor.entry_tensor(8).same_as(copied));
  EXPECT_FALSE(executor.entry_tensor(8).same_as(d));
}

TEST(GraphExecutorDevices, DevicesComeFromTheFactory) {
  std::vector<int64_t> made;
  GraphExecutor executor(Artifact::create(seed_plan(), nullptr, {}, "seed"), 1,
                         [&made](int64_t code) -> std::unique_ptr<Device> {
                           made.push_back(code);
                           return std::make_unique<CpuDevice>(cat("sim", code));
                         });
  EXPECT_EQ(made, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(executor.device(2).name(), "sim2");
  EXPECT_THROW(executor.device(3), Error);
}

TEST(GraphExecutorDevices, StorageSharedByTwoDevicesIsRejected) {
  GraphPlan plan = seed_plan();
  plan.storage_id[3] = 2;  // a' in a's block
  try {
    Artifact::create(plan, nullptr, {}, "bad.kiln");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shared by two devices"), std::string::npos) << e.what();
  }
}

TEST(GraphExecutorDevices, CopyNodesMustKeepShapeAndDtype) {
  GraphPlan plan = seed_plan();
  plan.dltype[3] = "float64";
  EXPECT_THROW(Artifact::create(plan, nullptr, {}, "bad.kiln"), Error);
}

TEST(GraphExecutorDevices, DeviceIndexMustBeADeviceTypeCode) {
  GraphPlan plan = seed_plan();
  plan.device_index[4] = 0;
  try {
    Artifact::create(plan, nullptr, {}, "bad.kiln");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("attrs.device_index[1][4]"), std::string::npos) << e.what();
  }
}

TEST(GraphExecutorDevices, DeviceNamesAndCodes) {
  EXPECT_EQ(device_type_code("cpu"), 1);
  EXPECT_EQ(device_type_code("cuda"), 2);
  EXPECT_EQ(device_type_code("2"), 2);
  EXPECT_EQ(device_type_name(1), "cpu");
  EXPECT_EQ(device_type_name(99), "device99");
  EXPECT_THROW(device_type_code("tpu"), Error);
}

}  // namespace
}  // namespace kiln
