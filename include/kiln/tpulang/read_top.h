// Reading tpu-mlir's Top dialect back: NAME_origin.mlir in MLIR's generic op form (what
// kiln's emitter writes, and what tpu-mlir's model_transform writes for the same ops) and
// its weights (NAME_TOP_F32_all_weight.npz) become a TpuLang graph again, the inverse of
// emit_top: one tensor per top.Input / top.Weight / op result, named by its location, with
// shape, dtype and quantization from its type, and one Operator per top.* op with the
// attributes as written. to_kiln (kiln/tpulang/to_kiln.h) then gives the kiln program.
// Errors are kiln::Error naming the file, `line L:C` and the op: malformed text, an unknown
// top op, a weight missing from the npz or of another shape, operand types that disagree.
#pragma once

#include <string>

#include "kiln/runtime/npy.h"
#include "kiln/tpulang/from_kiln.h"

namespace kiln::tpulang {

// The weight file the module names (its module.weight_file attribute), or "" when it names
// none. `source` names the text in errors.
std::string top_weight_file(const std::string& mlir_text, const std::string& source = "<memory>");

// The graph of the module text; `weights` holds every top.Weight's array by name.
TopGraph read_top(const std::string& mlir_text, const NamedArrays& weights, const std::string& source = "<memory>");

// The graph of a .mlir file; the weights come from `weights_path`, or when that is empty from
// the file the module names, beside the .mlir.
TopGraph read_top_file(const std::string& mlir_path, const std::string& weights_path = "");

}  // namespace kiln::tpulang
