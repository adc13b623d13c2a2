// A TpuLang graph as a kiln program: an IRModule whose @main takes the graph inputs, then the
// weights, as parameters (like an ONNX model imported without freezing), and the weights'
// values as params, so it prints, optimises (build() binds the params), compiles and runs
// like an imported model. Each Top operator becomes kiln's op of the same meaning
// (top.Conv -> nn.conv2d (+ add of the bias), top.MatMul -> nn.matmul, top.Add -> add, ...).
// Quantized and integer tensors keep their storage dtype and go through kiln's qnn ops:
// requant_fp_to_int -> qnn.quantize, dequant_int_to_fp -> qnn.dequantize, integer conv_v2 ->
// qnn.conv2d (int32 accumulator, + bias), requant_int (MultiplierShift) -> qnn.requantize,
// quantized add / sub / mul -> dequantize, the float op, quantize; data movement as for
// floats. Other ops on them (dequant_int, TFLite requant modes) are refused by name.
// The ops are looked up by name in the op registry, which register_builtin_ops() (op layer)
// fills, as every tool and the test main do first.
#pragma once

#include <string>
#include <vector>

#include "kiln/ir/module.h"
#include "kiln/runtime/npy.h"
#include "kiln/tpulang/graph.h"

namespace kiln::tpulang {

struct KilnProgram {
  IRModule module;
  NamedArrays params;  // the weights, in @main's parameter order after the inputs
};

KilnProgram to_kiln(const Graph& graph, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs);

}  // namespace kiln::tpulang
