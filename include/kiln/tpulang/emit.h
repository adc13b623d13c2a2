// Writing a TpuLang graph as tpu-mlir's chip-independent Top dialect: NAME_origin.mlir (a
// module with func.func @main, one top.Input per graph input, top.Weight for each weight and
// top.None for absent operands, one top.* op per operator, a return) and
// NAME_TOP_F32_all_weight.npz (the weights keyed by their top.Weight's name). The text is what
// MLIR's own printer writes for it (generic op form, sorted attributes, `: i64` / `: f64`
// suffixes, `!quant.uniform` element types for quantized tensors, location aliases at the
// end), so `mlir-opt --allow-unregistered-dialect --mlir-print-debuginfo` prints it back
// unchanged.
#pragma once

#include <string>
#include <vector>

#include "kiln/runtime/npy.h"
#include "kiln/tpulang/graph.h"

namespace kiln::tpulang {

struct TopModule {
  std::string mlir;
  NamedArrays weights;
};

// The module text and the weights; inputs and outputs must be tensors of `graph`.
TopModule emit_top(const Graph& graph, const std::string& name, const std::vector<Tensor>& inputs,
                   const std::vector<Tensor>& outputs);

// The files tpu-mlir's model_transform step writes: DIR/NAME_origin.mlir and
// DIR/NAME_TOP_F32_all_weight.npz.
struct CompiledFiles {
  std::string mlir_path;
  std::string weight_path;
};
CompiledFiles compile(const Graph& graph, const std::string& name, const std::vector<Tensor>& inputs,
                      const std::vector<Tensor>& outputs, const std::string& dir = ".");
// The same for the current graph (init()), as TpuLang's compile(name, inputs, outputs).
CompiledFiles compile(const std::string& name, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                      const std::string& dir = ".");

// MLIR's spelling of a tensor type: tensor<1x3x224x224xf32>, tensor<4x!quant.uniform<u8:f32, 1.000000e-01:128>>.
std::string mlir_type(const Tensor& t);
// MLIR's spelling of a double: %.6e when that reads back exactly, else 17 significant digits.
std::string mlir_float(double v);

}  // namespace kiln::tpulang
