// graph.json, the execution plan of an artifact, in TVM's graph-executor schema:
//   {"nodes": [{"op": "null" | "tvm_op", "name": ..., "attrs": {"func_name": ..., "num_inputs": "1",
//               "num_outputs": "1", "flatten_data": "0", ["op_attrs": "<Attrs as JSON>"],
//               ["flops": "<floating-point operations of one call, for profiles>"]},
//               "inputs": [[node, index, version], ...]}, ...],
//    "arg_nodes": [...], "heads": [[node, index, version], ...], "node_row_ptr": [...],
//    "attrs": {"dltype": ["list_str", [...]], "shape": ["list_shape", [[...], ...]],
//              "storage_id": ["list_int", [...]], "device_index": ["list_int", [...]]},
//    "kiln": {"input_names": [...], "output_names": [...], "abi_version": 1}}
// Node outputs are numbered into "entries": entry id = node_row_ptr[node] + output index;
// dltype, shape, storage_id and device_index hold one value per entry.
// A tvm_op whose func_name is "kiln_ref.<op>" runs the reference kernel of <op>; one named
// "__copy" copies its inputs to its outputs between devices. device_index is a DLDeviceType
// code per entry (1: cpu); entries of different devices never share a storage_id.
// An entry whose shape is known only at run time (data-dependent: NonZero, Unique, NMS) has -1
// for those dimensions and storage_id -1; only reference kernels produce or read it, and the
// executor keeps the tensor the kernel allocated.
// Control flow: a node {"op": "kiln_if", "attrs": {"then_graph": "T", "else_graph": "E",
// "num_inputs", "num_outputs"}, "inputs": [cond, v1, ..., vn]} runs one of two sub-graphs,
// kiln.subgraphs[T] when the one-element bool tensor cond is true, else kiln.subgraphs[E].
// A sub-graph is a graph object of this same schema (its own nodes, entries, storage ids and
// "kiln" section, which may hold sub-graphs of its own); its kiln.input_names are bound to
// v1..vn in order, and its heads give the node's outputs, with equal shapes and dtypes.
// A node {"op": "kiln_loop", "attrs": {"body_graph": "B", "num_carried": "n", "num_inputs",
// "num_outputs"}, "inputs": [trip_count, cond, c1, ..., cn, v1, ..., vm]} (ONNX Loop) runs
// kiln.subgraphs[B] while the iteration number is below the one-element int64 trip_count and
// the condition (at first the one-element bool cond) holds. The body's kiln.input_names are
// bound to (iteration number: int64 (), condition: bool (), carried values, v1..vm) and its
// heads are (condition, carried values, scan outputs): each carried head has its input's
// type and is the next iteration's input, the node's first n outputs are the final carried
// values (c1..cn when no iteration runs), and output n+j stacks scan head j of every
// iteration along a new axis 0 (shape [iterations, ...head], iterations -1 unless known).
// Parameters of every sub-graph live in the artifact's one params.bin, under names unique
// across the whole tree.
// The backend fills a GraphPlan and writes it; the runtime reads and validates it, so the
// schema lives here only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/runtime/ndarray.h"

namespace kiln {

inline constexpr std::string_view kReferenceFuncPrefix = "kiln_ref.";
// A tvm_op with this func_name copies each input to the output of the same index, from the
// input's device to the output's (TVM's graph executor convention).
inline constexpr std::string_view kCopyFuncName = "__copy";
// A tvm_op with this func_name has one input and one output of the same dtype and element count
// that share one storage block: the output is the input's bytes under another shape (a reshape),
// and running the node does nothing (TVM's "__nop").
inline constexpr std::string_view kAliasFuncName = "__alias";

// The node op of an If: it runs one of two sub-graphs on its inputs.
inline constexpr std::string_view kIfNodeOp = "kiln_if";
// The node op of a Loop: it runs a body sub-graph once per iteration.
inline constexpr std::string_view kLoopNodeOp = "kiln_loop";

struct GraphEntry {
  int64_t node = 0;
  int64_t index = 0;
  int64_t version = 0;
  bool operator==(const GraphEntry&) const = default;
};

struct GraphNode {
  std::string op;  // "null" (an input or a parameter), "tvm_op", "kiln_if" or "kiln_loop"
  std::string name;
  std::map<std::string, std::string> attrs;  // TVM keeps every node attribute as a string
  std::vector<GraphEntry> inputs;
  bool operator==(const GraphNode&) const = default;

  bool is_variable() const { return op == "null"; }
  bool is_if() const { return op == kIfNodeOp; }
  bool is_loop() const { return op == kLoopNodeOp; }
  // attrs["func_name"], or "" when absent.
  std::string func_name() const;
};

struct GraphPlan {
  std::vector<GraphNode> nodes;
  std::vector<int64_t> arg_nodes;
  std::vector<GraphEntry> heads;
  std::vector<int64_t> node_row_ptr;
  // One per entry.
  std::vector<std::string> dltype;
  std::vector<Shape> shape;
  std::vector<int64_t> storage_id;
  std::vector<int64_t> device_index;  // may be empty
  // The "kiln" section; empty name lists when the file has none (a plain TVM graph).
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  int64_t abi_version = 1;
  // kiln.subgraphs: the branches of this graph's "kiln_if" nodes and the bodies of its "kiln_loop" nodes.
  std::vector<GraphPlan> subgraphs;
  bool operator==(const GraphPlan&) const = default;

  size_t num_entries() const { return node_row_ptr.empty() ? 0 : static_cast<size_t>(node_row_ptr.back()); }
  size_t entry_id(int64_t node, int64_t index) const { return static_cast<size_t>(node_row_ptr[node] + index); }
  size_t entry_id(const GraphEntry& e) const { return entry_id(e.node, e.index); }
  int64_t num_node_outputs(int64_t node) const { return node_row_ptr[node + 1] - node_row_ptr[node]; }
  bool is_dynamic(size_t entry) const {
    for (int64_t d : shape[entry])
      if (d < 0) return true;
    return false;
  }
};

// Parses and validates; throws kiln::Error naming `what` (the file) and the offending field,
// e.g. "nodes[3].inputs[0]: node 7 is not before node 3".
GraphPlan parse_graph_json(std::string_view text, const std::string& what);
GraphPlan read_graph_json(const std::string& path);
// Checks the plan is consistent: node order, entry references, per-entry attribute lengths,
// dtypes, shapes, storage ids, kiln input/output names. Throws kiln::Error naming the field.
void validate_graph(const GraphPlan& plan);
// Validates, then writes pretty-printed JSON.
std::string graph_to_json(const GraphPlan& plan);
void write_graph_json(const std::string& path, const GraphPlan& plan);

}  // namespace kiln
