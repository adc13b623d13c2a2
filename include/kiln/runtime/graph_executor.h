// Running a compiled artifact: Artifact is the loaded folder (graph plan, kernel library,
// parameters), immutable and shared; GraphExecutor owns the devices (and through them the
// memory) and the thread pool of one run at a time. Several executors of one Artifact run
// concurrently in different threads. A graph whose entries are on several devices
// (device_index) gets one Device per device, each allocating the storage of its entries;
// "__copy" nodes move data between them, and set_input / get_output copy through the device
// of the input / output. A "kiln_if" node runs one of two sub-graphs, each an Artifact of its
// own run by an executor of its own, made with this one (storage allocated once) and sharing
// its thread pool. Tensors of run-time shape are views of blocks the executor keeps per entry
// and grows geometrically when a run needs more (a "kiln_loop" node keeps its carried values'
// blocks the same way), so a run at the same or a smaller shape allocates nothing; get_output
// copies, so a tensor it returned is never overwritten by a later run.
//
//   auto artifact = kiln::Artifact::load("model.kiln");
//   kiln::GraphExecutor executor(artifact, /*num_threads=*/4);
//   executor.set_input("x", x);
//   executor.run();
//   kiln::NDArray y = executor.get_output(0);
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/runtime/device.h"
#include "kiln/runtime/ndarray.h"
#include "kiln/runtime/npy.h"

namespace kiln {

struct GraphPlan;
class Module;
class ThreadPool;

struct TensorInfo {
  std::string name;
  Shape shape;
  DType dtype = DType::kFloat32;
};

class Artifact {
 public:
  // Reads DIR/graph.json, DIR/params.bin and DIR/lib.so; params.bin may be absent when the
  // graph has no parameters, lib.so when every node runs a reference kernel. Throws
  // kiln::Error naming the file, node and op concerned.
  static std::shared_ptr<const Artifact> load(const std::string& dir);
  // An artifact assembled in memory; `module` may be null when no node needs generated code.
  // `origin` names it in error messages.
  static std::shared_ptr<const Artifact> create(const GraphPlan& graph, std::shared_ptr<const Module> module,
                                                NamedArrays params, std::string origin);
  ~Artifact();
  Artifact(const Artifact&) = delete;
  Artifact& operator=(const Artifact&) = delete;

  const GraphPlan& graph() const { return *graph_; }
  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }
  const std::string& origin() const { return origin_; }

 private:
  friend class GraphExecutor;
  struct Step;
  Artifact();
  static std::shared_ptr<const Artifact> create_graph(const GraphPlan& graph, std::shared_ptr<const Module> module,
                                                      NamedArrays params, std::string origin, bool is_subgraph);
  static Step resolve_step(const GraphPlan& graph, size_t node, const Module* module);

  std::string origin_;
  std::unique_ptr<GraphPlan> graph_;
  std::shared_ptr<const Module> module_;
  std::vector<Step> steps_;
  std::vector<NDArray> params_by_entry_;  // defined for the entries that parameters fill
  std::vector<size_t> input_entries_, output_entries_;
  std::vector<TensorInfo> inputs_, outputs_;
  std::vector<size_t> storage_bytes_;                       // per storage id; 0 when only parameters use it
  std::vector<int64_t> storage_device_;                     // per storage id: the device code of its entries
  std::vector<int64_t> entry_device_;                       // per entry: its device code
  std::vector<int64_t> device_codes_;                       // the distinct devices of the graph, ascending
  std::vector<std::shared_ptr<const Artifact>> subgraphs_;  // per kiln.subgraphs entry
};

class GraphExecutor {
 public:
  // Makes the device of a DLDeviceType code (by default a CpuDevice for every code).
  using DeviceFactory = std::function<std::unique_ptr<Device>(int64_t code)>;

  // `num_threads` counts the thread calling run(); below 1 means one per hardware thread.
  explicit GraphExecutor(std::shared_ptr<const Artifact> artifact, int num_threads = 1,
                         const DeviceFactory& make_device = {});
  ~GraphExecutor();
  GraphExecutor(const GraphExecutor&) = delete;
  GraphExecutor& operator=(const GraphExecutor&) = delete;

  size_t num_inputs() const { return artifact_->inputs().size(); }
  size_t num_outputs() const { return artifact_->outputs().size(); }
  const TensorInfo& input_info(size_t index) const;
  const TensorInfo& output_info(size_t index) const;
  // Throw kiln::Error naming the unknown name and listing the known ones.
  size_t input_index(const std::string& name) const;
  size_t output_index(const std::string& name) const;
  int num_threads() const;
  // The devices of the graph (their DLDeviceType codes) and each one's memory.
  const std::vector<int64_t>& device_codes() const { return artifact_->device_codes_; }
  const Device& device(int64_t code) const;
  // The tensor an entry is bound to in its device's memory (for tests and tools); the next
  // run may overwrite it, or re-view an entry of run-time shape.
  const NDArray& entry_tensor(size_t entry) const { return entries_.at(entry); }

  // Copies `value` in; throws kiln::Error naming the input, expected and found shape or dtype.
  void set_input(const std::string& name, const NDArray& value);
  void set_input(size_t index, const NDArray& value);
  // Runs every node in order; throws kiln::Error naming an input never set, or the node and
  // function that failed.
  void run();
  // Time of one node's function in a profiled run.
  struct StepTime {
    std::string node, function;  // function: the generated kernel, or the reference op
    double ms = 0;
    double flops = 0;  // floating-point operations of the call when the compiler counted them
  };
  // run(), timing every node that runs a function (for `kiln bench --profile`; the clock reads
  // cost a little): aliases, which run nothing, are left out.
  std::vector<StepTime> run_profiled();
  // A copy of the output of the last run (later runs leave it alone).
  NDArray get_output(size_t index) const;
  NDArray get_output(const std::string& name) const;

 private:
  struct BoundStep;
  struct EntryUse;
  GraphExecutor(std::shared_ptr<const Artifact> artifact, std::shared_ptr<ThreadPool> pool,
                const DeviceFactory& make_device);
  void bind_entries();
  void bind_input(size_t index, const NDArray& value);
  void run_if(const Artifact::Step& step);
  void run_loop(const Artifact::Step& step, BoundStep& bound);
  std::vector<NDArray> start_loop(const Artifact::Step& step, BoundStep& bound, GraphExecutor& body);
  bool run_iteration(BoundStep& bound, GraphExecutor& body, int64_t i, std::vector<NDArray>& carried);
  void finish_loop(const Artifact::Step& step, const std::vector<NDArray>& carried);
  void rebind_entry(size_t entry, const NDArray& value);
  void run_steps(std::vector<StepTime>* times);
  void run_step(const Artifact::Step& step, BoundStep& bound);
  void run_reference(const Artifact::Step& step, BoundStep& bound);
  void size_dynamic_outputs(const Artifact::Step& step, BoundStep& bound);
  void run_copy(const Artifact::Step& step);
  Device& device_of_entry(size_t entry) const;
  int64_t read_int_scalar(size_t entry) const;
  // `entry` (of run-time shape) viewed as shape/dtype in its block, grown when too small.
  NDArray dynamic_tensor(size_t entry, const Shape& shape, DType dtype);
  void keep_dynamic_output(size_t entry, NDArray produced, size_t k);

  std::shared_ptr<const Artifact> artifact_;
  std::shared_ptr<ThreadPool> pool_;
  std::map<int64_t, std::unique_ptr<Device>> devices_;
  std::vector<NDArray> storage_;  // per storage id, allocated by its device
  std::vector<NDArray> entries_;  // every entry viewed in its storage (or its parameter)
  std::vector<BoundStep> bound_steps_;
  std::vector<std::vector<EntryUse>> uses_;   // per entry: the steps' arguments bound to it
  std::vector<std::vector<size_t>> aliases_;  // per entry: the outputs of alias nodes that view it
  // Per entry of run-time shape: the block it is viewed in, kept across runs (a caching
  // allocator: a run at the same or a smaller shape allocates nothing).
  std::vector<NDArray> dynamic_blocks_;
  std::vector<bool> input_set_;
  std::vector<std::unique_ptr<GraphExecutor>> subgraph_executors_;  // per sub-graph of the artifact
};

}  // namespace kiln
