// What graph_executor.cc and graph_executor_loop.cc share: a step resolved at load time, its
// tensors in one executor, and the blocks kept for values of run-time shape.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "kiln/runtime/graph_executor.h"
#include "kiln/runtime/kernel_abi.h"
#include "kiln/runtime/kernel_registry.h"

namespace kiln {

// One node of the graph with everything resolved at load time.
struct Artifact::Step {
  std::string node_name;
  std::string func_name;
  double flops = 0;                     // of one call, from the node's "flops" (generated code)
  kiln_kernel_fn generated = nullptr;   // set for nodes with code in lib.so
  const KernelFn* reference = nullptr;  // set for "kiln_ref.<op>" nodes
  const OutputFn* output_fn = nullptr;  // a reference kernel's, when an output has a run-time shape
  bool copy = false;                    // a "__copy" node
  bool alias = false;                   // a "__alias" node: its output views its input's bytes
  bool is_if = false;                   // a "kiln_if" node: runs sub-graph then_graph or else_graph
  size_t then_graph = 0, else_graph = 0;
  bool is_loop = false;  // a "kiln_loop" node: runs sub-graph body_graph once per iteration
  size_t body_graph = 0, num_carried = 0;
  std::string reference_op;
  Attrs attrs;
  std::vector<size_t> input_entries, output_entries;
};

// A step's tensors in one executor's memory.
struct GraphExecutor::BoundStep {
  std::vector<void*> args;               // generated code: data pointers, inputs then outputs
  std::vector<NDArray> inputs, outputs;  // reference kernels
  // A loop node's: the two blocks each carried value alternates between, and the body's
  // iteration number and condition inputs, all kept across executions.
  std::vector<std::array<NDArray, 2>> carried_blocks;
  std::vector<bool> carried_in_place;  // per carried value: whether the body writes it in a block
  NDArray iteration, body_cond;
};

// Where a step reads or writes an entry: args[slot], and inputs[slot] or outputs[slot - inputs].
struct GraphExecutor::EntryUse {
  size_t step = 0, slot = 0;
};

// `block`, grown geometrically on `device` when it holds fewer than `bytes` bytes.
NDArray& reserve_block(NDArray& block, size_t bytes, Device& device);

size_t tensor_bytes(const Shape& shape, DType dtype);

}  // namespace kiln
