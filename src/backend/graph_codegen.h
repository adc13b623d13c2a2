// Turns the fused @main (a dataflow graph of calls of Primitive functions) into a graph plan:
// one "null" node per input or parameter, one "tvm_op" node per call. A function that can be
// compiled becomes a generated kernel (structurally equal functions share one); any other is
// spread into one node per op call running the op's reference kernel ("kiln_ref.<kernel>").
// A device_copy becomes a "__copy" node (TVM's name), which the executor runs as a copy
// between devices; every entry records its device (device_index, a DLDeviceType code) as
// PlanDevices finds it, values no copy constrains on `fallback_device`. An `if` becomes a
// "kiln_if" node whose branches are sub-graphs built the same way (graph_json.h): its inputs
// are the condition and the values of the enclosing graph that the branches read, and the
// values only a branch needs are computed in that branch's sub-graph, so only when taken.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kiln/ir/module.h"
#include "kiln/op/strategy.h"
#include "kiln/runtime/npy.h"
#include "kiln/tir/stmt.h"
#include "runtime/graph_json.h"

namespace kiln::backend {

struct GraphCodegenResult {
  GraphPlan plan;                      // storage_id not yet planned
  std::vector<tir::PrimFunc> funcs;    // one per distinct kernel
  NamedArrays params;                  // values of the parameter nodes
  std::vector<std::string> fallbacks;  // "<func>: <reason>" for functions run by reference kernels
};

// `main` is type-checked and fused. Its parameters named in `params` become parameter nodes;
// the others are inputs, named by `input_names` (one per input, in order). Constants in the
// graph become parameters named p0, p1, ... `on_lowered` (may be empty) is called after each
// call of a fused function is lowered, with the count so far and the total.
GraphCodegenResult generate_graph(const FunctionNode& main, const NamedArrays& params,
                                  const std::vector<std::string>& input_names,
                                  const std::vector<std::string>& output_names, const Target& target,
                                  const std::string& fallback_device = "cpu",
                                  const std::function<void(size_t, size_t)>& on_lowered = {});

}  // namespace kiln::backend
