// The reverse of to_kiln: a kiln program (an imported ONNX model, say) as a TpuLang graph,
// so it can be written as Top MLIR (tpu-mlir's model_transform route). @main's parameters
// named in `params`, and its tensor constants, become weights; the others are the graph
// inputs. Ops without a Top counterpart here throw a kiln::Error naming the op; decompose
// inference-time ops first (SimplifyInference turns nn.batch_norm into multiply and add).
#pragma once

#include <memory>
#include <vector>

#include "kiln/ir/module.h"
#include "kiln/runtime/npy.h"
#include "kiln/tpulang/graph.h"

namespace kiln::tpulang {

struct TopGraph {
  std::unique_ptr<Graph> graph;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
};

// `output_names` name @main's results in order (an ONNX model's output names), so the
// tensors keep them in Top MLIR; results without a name are named by their source node.
TopGraph from_kiln(const IRModule& module, const NamedArrays& params = {},
                   const std::vector<std::string>& output_names = {});

}  // namespace kiln::tpulang
