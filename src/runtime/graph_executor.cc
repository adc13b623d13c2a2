#include "kiln/runtime/graph_executor.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <utility>

#include "kiln/runtime/kernel_abi.h"
#include "kiln/runtime/kernel_registry.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"
#include "runtime/attrs_json.h"
#include "runtime/graph_executor_internal.h"
#include "runtime/graph_json.h"
#include "runtime/module.h"
#include "runtime/params_io.h"
#include "runtime/thread_pool.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

std::string tensor_type_str(const Shape& shape, DType dtype) { return cat(dtype_name(dtype), " ", shape_str(shape)); }

TensorInfo entry_info(const GraphPlan& graph, size_t entry, std::string name) {
  return TensorInfo{std::move(name), graph.shape[entry], parse_dtype(graph.dltype[entry])};
}

bool is_reference_call(const GraphNode& node) { return starts_with(node.func_name(), kReferenceFuncPrefix); }

size_t find_variable(const GraphPlan& graph, const std::string& name) {
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (graph.nodes[i].is_variable() && graph.nodes[i].name == name) return i;
  return graph.nodes.size();
}

bool has_variable_in_tree(const GraphPlan& graph, const std::string& name) {
  if (find_variable(graph, name) < graph.nodes.size()) return true;
  return std::any_of(graph.subgraphs.begin(), graph.subgraphs.end(),
                     [&name](const GraphPlan& s) { return has_variable_in_tree(s, name); });
}

// params.bin is one list for the whole tree of graphs; each sub-graph takes the parameters
// named by its variables (or those of its own sub-graphs). The rest stay with `graph`.
std::vector<NamedArrays> split_subgraph_params(const GraphPlan& graph, NamedArrays& params) {
  std::vector<NamedArrays> per_subgraph(graph.subgraphs.size());
  if (graph.subgraphs.empty()) return per_subgraph;
  NamedArrays own;
  for (auto& [name, value] : params) {
    size_t holder = graph.subgraphs.size();
    if (find_variable(graph, name) == graph.nodes.size())
      for (size_t i = 0; i < graph.subgraphs.size() && holder == graph.subgraphs.size(); ++i)
        if (has_variable_in_tree(graph.subgraphs[i], name)) holder = i;
    (holder == graph.subgraphs.size() ? own : per_subgraph[holder]).emplace_back(name, std::move(value));
  }
  params = std::move(own);
  return per_subgraph;
}

// One static input viewed as one static output of the same dtype and element count.
void check_alias(const GraphPlan& graph, const std::vector<size_t>& inputs, const std::vector<size_t>& outputs) {
  check(inputs.size() == 1 && outputs.size() == 1, "an alias node has ", inputs.size(), " inputs and ", outputs.size(),
        " outputs, not one of each");
  const size_t in = inputs[0], out = outputs[0];
  if (graph.is_dynamic(in) || graph.is_dynamic(out) || graph.dltype[in] != graph.dltype[out] ||
      num_elements(graph.shape[in]) != num_elements(graph.shape[out]))
    throw Error("an alias node's output is not its input's bytes under another static shape")
        .expected(cat(num_elements(graph.shape[in]), " elements of ", graph.dltype[in]),
                  tensor_type_str(graph.shape[out], parse_dtype(graph.dltype[out])));
}

}  // namespace

Artifact::Step Artifact::resolve_step(const GraphPlan& graph, size_t node_id, const Module* module) {
  const GraphNode& node = graph.nodes[node_id];
  Artifact::Step step;
  step.node_name = node.name;
  step.func_name = node.func_name();
  for (const GraphEntry& input : node.inputs) step.input_entries.push_back(graph.entry_id(input));
  for (int64_t i = 0; i < graph.num_node_outputs(static_cast<int64_t>(node_id)); ++i)
    step.output_entries.push_back(graph.entry_id(static_cast<int64_t>(node_id), i));
  try {
    if (node.is_if()) {
      step.is_if = true;
      step.func_name = "If";
      step.then_graph = std::stoul(node.attrs.at("then_graph"));
      step.else_graph = std::stoul(node.attrs.at("else_graph"));
    } else if (node.is_loop()) {
      step.is_loop = true;
      step.func_name = "Loop";
      step.body_graph = std::stoul(node.attrs.at("body_graph"));
      step.num_carried = std::stoul(node.attrs.at("num_carried"));
    } else if (step.func_name == kCopyFuncName) {
      step.copy = true;
      check(step.input_entries.size() == step.output_entries.size(), "a copy node has ", step.input_entries.size(),
            " inputs but ", step.output_entries.size(), " outputs");
      for (size_t k = 0; k < step.input_entries.size(); ++k) {
        const size_t in = step.input_entries[k], out = step.output_entries[k];
        if (graph.shape[in] != graph.shape[out] || graph.dltype[in] != graph.dltype[out])
          throw Error(cat("copy node output ", k, " differs from its input"))
              .expected(tensor_type_str(graph.shape[in], parse_dtype(graph.dltype[in])),
                        tensor_type_str(graph.shape[out], parse_dtype(graph.dltype[out])));
      }
    } else if (step.func_name == kAliasFuncName) {
      step.alias = true;
      check_alias(graph, step.input_entries, step.output_entries);
    } else if (is_reference_call(node)) {
      step.reference_op = step.func_name.substr(kReferenceFuncPrefix.size());
      step.reference = &KernelRegistry::global().get(step.reference_op);
      const auto op_attrs = node.attrs.find("op_attrs");
      if (op_attrs != node.attrs.end()) step.attrs = attrs_from_json(op_attrs->second);
      if (std::any_of(step.output_entries.begin(), step.output_entries.end(),
                      [&graph](size_t entry) { return graph.is_dynamic(entry); }))
        step.output_fn = KernelRegistry::global().output_fn(step.reference_op);
    } else {
      for (size_t entry : step.input_entries)
        check(!graph.is_dynamic(entry), "generated code cannot read a tensor of run-time shape");
      for (size_t entry : step.output_entries)
        check(!graph.is_dynamic(entry), "generated code cannot write a tensor of run-time shape");
      if (!module)
        throw Error(cat("function '", step.func_name, "' needs generated code, but the artifact has no lib.so"));
      step.generated = module->function(step.func_name);
      if (const auto flops = node.attrs.find("flops"); flops != node.attrs.end())
        step.flops = std::stod(flops->second);  // an integer >= 0: graph_json.cc checked it
    }
  } catch (Error& e) {
    e.node(node.name).op(step.reference_op.empty() ? step.func_name : step.reference_op);
    throw;
  }
  return step;
}

Artifact::Artifact() = default;
Artifact::~Artifact() = default;

std::shared_ptr<const Artifact> Artifact::load(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error("artifact folder not found").file(dir);
  const fs::path root(dir);
  GraphPlan graph = read_graph_json((root / "graph.json").string());
  NamedArrays params;
  if (const fs::path params_path = root / "params.bin"; fs::exists(params_path, ec))
    params = read_params(params_path.string());
  std::shared_ptr<const Module> module;
  if (const fs::path library = root / "lib.so"; fs::exists(library, ec)) module = Module::load(library.string());
  return create(graph, std::move(module), std::move(params), dir);
}

std::shared_ptr<const Artifact> Artifact::create(const GraphPlan& graph, std::shared_ptr<const Module> module,
                                                 NamedArrays params, std::string origin) {
  return create_graph(graph, std::move(module), std::move(params), std::move(origin), false);
}

// A sub-graph's inputs are bound to its parent's tensors, so they may have run-time shapes (a
// loop's carried values whose extents change); a top-level graph's are set by the user.
std::shared_ptr<const Artifact> Artifact::create_graph(const GraphPlan& graph, std::shared_ptr<const Module> module,
                                                       NamedArrays params, std::string origin, bool is_subgraph) {
  std::shared_ptr<Artifact> artifact(new Artifact());
  Artifact& a = *artifact;
  a.origin_ = std::move(origin);
  try {
    validate_graph(graph);
    a.graph_ = std::make_unique<GraphPlan>(graph);
    a.module_ = std::move(module);
    const GraphPlan& g = *a.graph_;

    std::vector<NamedArrays> subgraph_params = split_subgraph_params(g, params);
    for (size_t i = 0; i < g.subgraphs.size(); ++i)
      a.subgraphs_.push_back(create_graph(g.subgraphs[i], a.module_, std::move(subgraph_params[i]),
                                          cat(a.origin_, " (kiln.subgraphs[", i, "])"), true));

    // Parameters: one per "null" node, of the node's shape and dtype.
    a.params_by_entry_.resize(g.num_entries());
    for (auto& [name, value] : params) {
      const size_t node = find_variable(g, name);
      if (node == g.nodes.size()) throw Error(cat("params.bin holds '", name, "', which is not a graph input"));
      const size_t entry = g.entry_id(static_cast<int64_t>(node), 0);
      const TensorInfo expected = entry_info(g, entry, name);
      if (value.shape() != expected.shape || value.dtype() != expected.dtype)
        throw Error(cat("parameter '", name, "' does not match the graph"))
            .expected(tensor_type_str(expected.shape, expected.dtype), tensor_type_str(value.shape(), value.dtype()));
      a.params_by_entry_[entry] = std::move(value);
    }

    // Inputs: the names kiln lists, or (for a plain TVM graph) every argument without a parameter.
    std::vector<std::string> input_names = g.input_names;
    if (input_names.empty())
      for (int64_t node : g.arg_nodes)
        if (!a.params_by_entry_[g.entry_id(node, 0)].defined()) input_names.push_back(g.nodes[node].name);
    for (const std::string& name : input_names) {
      const size_t entry = g.entry_id(static_cast<int64_t>(find_variable(g, name)), 0);
      if (a.params_by_entry_[entry].defined())
        throw Error(cat("'", name, "' is both a graph input and a parameter in params.bin"));
      if (g.is_dynamic(entry) && !is_subgraph)
        throw Error(cat("input '", name, "' has a shape known only at run time"));
      a.input_entries_.push_back(entry);
      a.inputs_.push_back(entry_info(g, entry, name));
    }
    for (size_t node = 0; node < g.nodes.size(); ++node) {
      const size_t entry = g.entry_id(static_cast<int64_t>(node), 0);
      if (g.nodes[node].is_variable() && !a.params_by_entry_[entry].defined() &&
          std::find(a.input_entries_.begin(), a.input_entries_.end(), entry) == a.input_entries_.end())
        throw Error(cat("graph variable '", g.nodes[node].name, "' is neither an input nor a parameter"));
    }

    for (size_t i = 0; i < g.heads.size(); ++i) {
      const size_t entry = g.entry_id(g.heads[i]);
      a.output_entries_.push_back(entry);
      a.outputs_.push_back(entry_info(g, entry, g.output_names.empty() ? cat("output", i) : g.output_names[i]));
    }

    // Devices: one per DLDeviceType code; a graph without device_index is all on the CPU.
    a.entry_device_ = g.device_index.empty() ? std::vector<int64_t>(g.num_entries(), 1) : g.device_index;
    a.device_codes_ = a.entry_device_;
    std::sort(a.device_codes_.begin(), a.device_codes_.end());
    a.device_codes_.erase(std::unique(a.device_codes_.begin(), a.device_codes_.end()), a.device_codes_.end());
    if (a.device_codes_.empty()) a.device_codes_.push_back(1);

    // A storage block holds the largest tensor placed in it, on the one device of its entries;
    // parameters live in the artifact.
    for (size_t entry = 0; entry < g.num_entries(); ++entry) {
      if (a.params_by_entry_[entry].defined() || g.is_dynamic(entry)) continue;
      const auto id = static_cast<size_t>(g.storage_id[entry]);
      if (id >= a.storage_bytes_.size()) {
        a.storage_bytes_.resize(id + 1, 0);
        a.storage_device_.resize(id + 1, 0);
      }
      if (a.storage_device_[id] == 0) a.storage_device_[id] = a.entry_device_[entry];
      if (a.storage_device_[id] != a.entry_device_[entry])
        throw Error(cat("attrs.storage_id[1][", entry, "]: storage ", id, " is shared by two devices"))
            .expected(cat("device ", a.storage_device_[id]), cat("device ", a.entry_device_[entry]));
      const TensorInfo info = entry_info(g, entry, "");
      const size_t bytes = static_cast<size_t>(num_elements(info.shape)) * dtype_bytes(info.dtype);
      a.storage_bytes_[id] = std::max(a.storage_bytes_[id], bytes);
    }

    for (size_t node = 0; node < g.nodes.size(); ++node)
      if (!g.nodes[node].is_variable()) a.steps_.push_back(resolve_step(g, node, a.module_.get()));
    // A sub-graph's results may be re-pointed at its parent's tensors (a loop's carried values),
    // which the producer of an alias's input would not write.
    for (const Step& step : a.steps_)
      if (step.alias && is_subgraph &&
          std::find(a.output_entries_.begin(), a.output_entries_.end(), step.output_entries[0]) !=
              a.output_entries_.end())
        throw Error(cat("node '", step.node_name, "': a sub-graph's result is an alias of another tensor"));
  } catch (Error& e) {
    e.file(a.origin_);
    throw;
  }
  return artifact;
}

GraphExecutor::GraphExecutor(std::shared_ptr<const Artifact> artifact, int num_threads,
                             const DeviceFactory& make_device)
    : GraphExecutor(std::move(artifact), std::make_shared<ThreadPool>(num_threads), make_device) {}

GraphExecutor::GraphExecutor(std::shared_ptr<const Artifact> artifact, std::shared_ptr<ThreadPool> pool,
                             const DeviceFactory& make_device)
    : artifact_(std::move(artifact)), pool_(std::move(pool)) {
  check(artifact_ != nullptr, "GraphExecutor needs an artifact");
  for (int64_t code : artifact_->device_codes_) {
    std::unique_ptr<Device> device =
        make_device ? make_device(code) : std::make_unique<CpuDevice>(device_type_name(code));
    check(device != nullptr, "no device for device_index ", code);
    devices_.emplace(code, std::move(device));
  }
  input_set_.assign(num_inputs(), false);
  bind_entries();
  for (const auto& subgraph : artifact_->subgraphs_)
    subgraph_executors_.push_back(std::unique_ptr<GraphExecutor>(new GraphExecutor(subgraph, pool_, make_device)));
}

GraphExecutor::~GraphExecutor() = default;

void GraphExecutor::bind_entries() {
  const Artifact& a = *artifact_;
  const GraphPlan& g = a.graph();
  for (size_t id = 0; id < a.storage_bytes_.size(); ++id)
    storage_.push_back(a.storage_device_[id] == 0 ? NDArray()
                                                  : devices_.at(a.storage_device_[id])->allocate(a.storage_bytes_[id]));
  entries_.resize(g.num_entries());
  for (size_t entry = 0; entry < g.num_entries(); ++entry) {
    if (a.params_by_entry_[entry].defined())
      entries_[entry] = a.params_by_entry_[entry];
    else if (!g.is_dynamic(entry))
      entries_[entry] =
          storage_[static_cast<size_t>(g.storage_id[entry])].view(g.shape[entry], parse_dtype(g.dltype[entry]));
  }
  dynamic_blocks_.resize(g.num_entries());
  uses_.resize(g.num_entries());
  aliases_.resize(g.num_entries());
  for (const Artifact::Step& step : a.steps_) {
    if (step.alias) {
      const size_t in = step.input_entries[0], out = step.output_entries[0];
      entries_[out] = entries_[in].reshaped(g.shape[out]);
      aliases_[in].push_back(out);
    }
    BoundStep bound;
    for (size_t entry : step.input_entries) {
      uses_[entry].push_back({bound_steps_.size(), bound.args.size()});
      // Generated code never writes its inputs; the const_cast only meets the C signature.
      bound.args.push_back(const_cast<void*>(entries_[entry].raw()));
      bound.inputs.push_back(entries_[entry]);
    }
    for (size_t entry : step.output_entries) {
      uses_[entry].push_back({bound_steps_.size(), bound.args.size()});
      bound.args.push_back(entries_[entry].raw());
      bound.outputs.push_back(entries_[entry]);
    }
    bound_steps_.push_back(std::move(bound));
  }
}

NDArray& reserve_block(NDArray& block, size_t bytes, Device& device) {
  if (block.defined() && block.nbytes() >= bytes) return block;
  const size_t grown = block.defined() ? std::max(bytes, 2 * block.nbytes()) : bytes;
  block = device.allocate(std::max<size_t>(grown, 1));
  return block;
}

size_t tensor_bytes(const Shape& shape, DType dtype) {
  return static_cast<size_t>(num_elements(shape)) * dtype_bytes(dtype);
}

NDArray GraphExecutor::dynamic_tensor(size_t entry, const Shape& shape, DType dtype) {
  return reserve_block(dynamic_blocks_[entry], tensor_bytes(shape, dtype), device_of_entry(entry)).view(shape, dtype);
}

int GraphExecutor::num_threads() const { return pool_->num_threads(); }

const Device& GraphExecutor::device(int64_t code) const {
  auto it = devices_.find(code);
  check(it != devices_.end(), "the graph has no device ", code);
  return *it->second;
}

Device& GraphExecutor::device_of_entry(size_t entry) const { return *devices_.at(artifact_->entry_device_[entry]); }

const TensorInfo& GraphExecutor::input_info(size_t index) const {
  check(index < num_inputs(), "input index ", index, " out of range: the graph has ", num_inputs(), " inputs");
  return artifact_->inputs()[index];
}

const TensorInfo& GraphExecutor::output_info(size_t index) const {
  check(index < num_outputs(), "output index ", index, " out of range: the graph has ", num_outputs(), " outputs");
  return artifact_->outputs()[index];
}

namespace {

size_t index_of(const std::vector<TensorInfo>& tensors, const std::string& name, const char* kind) {
  std::vector<std::string> names;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].name == name) return i;
    names.push_back("'" + tensors[i].name + "'");
  }
  throw Error(cat("the graph has no ", kind, " named '", name, "'")).expected(join(names), "'" + name + "'");
}

}  // namespace

size_t GraphExecutor::input_index(const std::string& name) const {
  return index_of(artifact_->inputs(), name, "input");
}

size_t GraphExecutor::output_index(const std::string& name) const {
  return index_of(artifact_->outputs(), name, "output");
}

void GraphExecutor::set_input(const std::string& name, const NDArray& value) { set_input(input_index(name), value); }

void GraphExecutor::set_input(size_t index, const NDArray& value) {
  const TensorInfo& info = input_info(index);
  check(value.defined(), "input '", info.name, "' is an undefined tensor");
  if (value.shape() != info.shape || value.dtype() != info.dtype)
    throw Error(cat("input '", info.name, "' has the wrong ", value.dtype() != info.dtype ? "dtype" : "shape"))
        .expected(tensor_type_str(info.shape, info.dtype), tensor_type_str(value.shape(), value.dtype()));
  const size_t entry = artifact_->input_entries_[index];
  device_of_entry(entry).copy_in(value, entries_[entry]);
  input_set_[index] = true;
}

void GraphExecutor::run() { run_steps(nullptr); }

std::vector<GraphExecutor::StepTime> GraphExecutor::run_profiled() {
  std::vector<StepTime> times;
  run_steps(&times);
  return times;
}

void GraphExecutor::run_steps(std::vector<StepTime>* times) {
  for (size_t i = 0; i < num_inputs(); ++i)
    check(input_set_[i], "input '", artifact_->inputs()[i].name, "' was not set before run()");
  ThreadPool::Scope scope(pool_.get());
  for (size_t i = 0; i < bound_steps_.size(); ++i) {
    const Artifact::Step& step = artifact_->steps_[i];
    const std::string& function = step.reference ? step.reference_op : step.func_name;
    const auto start = times ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    try {
      run_step(step, bound_steps_[i]);
    } catch (Error& e) {
      e.node(step.node_name).op(function);
      throw;
    }
    if (times && !step.alias)  // an alias runs nothing: no row in a profile
      times->push_back({step.node_name, function,
                        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
                        step.flops});
  }
}

void GraphExecutor::run_step(const Artifact::Step& step, BoundStep& bound) {
  if (step.copy) return run_copy(step);
  if (step.alias) return;  // its output is its input's bytes (bind_entries)
  if (step.is_if) return run_if(step);
  if (step.is_loop) return run_loop(step, bound);
  if (step.generated) {
    if (int32_t status = step.generated(bound.args.data()); status != 0)
      throw Error(cat("generated function '", step.func_name, "' failed with status ", status));
    return;
  }
  run_reference(step, bound);
}

// Outputs of run-time shape that the kernel's output function sizes are views of blocks this
// executor keeps per entry; the kernel allocates the others (data-dependent extents, NonZero).
void GraphExecutor::size_dynamic_outputs(const Artifact::Step& step, BoundStep& bound) {
  const GraphPlan& g = artifact_->graph();
  std::vector<OutputSpec> specs;
  if (step.output_fn) {
    specs = (*step.output_fn)(step.attrs, bound.inputs);
    check(specs.size() == bound.outputs.size(), "output function gives ", specs.size(), " outputs for ",
          bound.outputs.size());
  }
  for (size_t k = 0; k < bound.outputs.size(); ++k) {
    const size_t entry = step.output_entries[k];
    if (g.is_dynamic(entry))
      bound.outputs[k] = step.output_fn ? dynamic_tensor(entry, specs[k].shape, specs[k].dtype) : NDArray();
  }
}

void GraphExecutor::run_reference(const Artifact::Step& step, BoundStep& bound) {
  const GraphPlan& g = artifact_->graph();
  for (size_t k = 0; k < bound.inputs.size(); ++k)
    if (g.is_dynamic(step.input_entries[k])) bound.inputs[k] = entries_[step.input_entries[k]];
  size_dynamic_outputs(step, bound);
  (*step.reference)(step.attrs, bound.inputs, bound.outputs);
  // Kernels write into the tensors they are given; one that replaced a tensor is copied back.
  for (size_t k = 0; k < bound.outputs.size(); ++k) {
    if (g.is_dynamic(step.output_entries[k])) {
      keep_dynamic_output(step.output_entries[k], std::exchange(bound.outputs[k], NDArray()), k);
      continue;
    }
    const NDArray& planned = entries_[step.output_entries[k]];
    NDArray produced = std::exchange(bound.outputs[k], planned);
    if (produced.raw() == planned.raw() && produced.shape() == planned.shape()) continue;
    if (!produced.defined() || produced.shape() != planned.shape() || produced.dtype() != planned.dtype())
      throw Error(cat("reference kernel output ", k, " does not match the graph plan"))
          .expected(tensor_type_str(planned.shape(), planned.dtype()),
                    produced.defined() ? tensor_type_str(produced.shape(), produced.dtype()) : "undefined");
    NDArray slot = planned;
    if (planned.nbytes()) std::memcpy(slot.raw(), produced.raw(), planned.nbytes());
  }
}

// The destination device copies: it is the one that can reach both memories.
void GraphExecutor::run_copy(const Artifact::Step& step) {
  const GraphPlan& g = artifact_->graph();
  for (size_t k = 0; k < step.input_entries.size(); ++k) {
    const size_t out = step.output_entries[k];
    const NDArray& from = entries_[step.input_entries[k]];
    Device& to_device = device_of_entry(out);
    if (g.is_dynamic(out)) entries_[out] = dynamic_tensor(out, from.shape(), from.dtype());
    to_device.copy_in(from, entries_[out]);
  }
}

// Only the branch taken runs. Its inputs are this graph's tensors themselves (a graph never
// writes its inputs); its outputs are copied into the node's.
void GraphExecutor::run_if(const Artifact::Step& step) {
  const size_t cond_entry = step.input_entries[0];
  const bool taken = device_of_entry(cond_entry).copy_out(entries_[cond_entry]).int_at(0) != 0;
  GraphExecutor& branch = *subgraph_executors_[taken ? step.then_graph : step.else_graph];
  for (size_t k = 1; k < step.input_entries.size(); ++k) branch.bind_input(k - 1, entries_[step.input_entries[k]]);
  try {
    branch.run_steps(nullptr);
  } catch (Error& e) {
    throw e.file(branch.artifact_->origin());
  }
  const GraphPlan& g = artifact_->graph();
  for (size_t k = 0; k < step.output_entries.size(); ++k) {
    const size_t out = step.output_entries[k];
    const NDArray& result = branch.entries_[branch.artifact_->output_entries_[k]];
    if (g.is_dynamic(out)) entries_[out] = dynamic_tensor(out, result.shape(), result.dtype());
    device_of_entry(out).copy_in(result, entries_[out]);
  }
}

int64_t GraphExecutor::read_int_scalar(size_t entry) const {
  return device_of_entry(entry).copy_out(entries_[entry]).int_at(0);
}

// Points `entry` at `value` in every step that reads or writes it.
void GraphExecutor::rebind_entry(size_t entry, const NDArray& value) {
  if (entries_[entry].raw() == value.raw() && entries_[entry].shape() == value.shape()) return;
  entries_[entry] = value;
  for (const EntryUse& use : uses_[entry]) {
    BoundStep& bound = bound_steps_[use.step];
    bound.args[use.slot] = const_cast<void*>(value.raw());
    if (use.slot < bound.inputs.size())
      bound.inputs[use.slot] = value;
    else
      bound.outputs[use.slot - bound.inputs.size()] = value;
  }
  for (size_t alias : aliases_[entry]) rebind_entry(alias, value.reshaped(artifact_->graph().shape[alias]));
}

// Binds input `index` to `value` itself, which has the input's shape and dtype (as the graph
// plan guarantees for a sub-graph's inputs), re-pointing the steps that read it.
void GraphExecutor::bind_input(size_t index, const NDArray& value) {
  input_set_[index] = true;
  rebind_entry(artifact_->input_entries_[index], value);
}

void GraphExecutor::keep_dynamic_output(size_t entry, NDArray produced, size_t k) {
  const GraphPlan& g = artifact_->graph();
  const Shape& planned = g.shape[entry];
  bool fits = produced.defined() && produced.dtype() == parse_dtype(g.dltype[entry]) &&
              produced.shape().size() == planned.size();
  for (size_t d = 0; fits && d < planned.size(); ++d) fits = planned[d] < 0 || planned[d] == produced.shape()[d];
  if (!fits)
    throw Error(cat("reference kernel output ", k, " does not match the graph plan"))
        .expected(tensor_type_str(planned, parse_dtype(g.dltype[entry])),
                  produced.defined() ? tensor_type_str(produced.shape(), produced.dtype()) : "undefined");
  entries_[entry] = std::move(produced);
}

NDArray GraphExecutor::get_output(size_t index) const {
  output_info(index);
  const size_t entry = artifact_->output_entries_[index];
  return device_of_entry(entry).copy_out(entries_[entry]);
}

NDArray GraphExecutor::get_output(const std::string& name) const { return get_output(output_index(name)); }

}  // namespace kiln
