// An artifact for a model whose inputs have dimensions known only at run time (a dynamic
// batch or sequence axis): kiln compiles one static artifact per set of input shapes it meets
// and keeps them side by side, so each shape is compiled once and then only loaded.
//   DIR/variants.json   inputs and outputs (-1 for a run-time dimension), the model file the
//                       compiler specialises, and the compile options to replay
//   DIR/model.txt       the model as kiln IR text, before any pass (what the compiler reads)
//   DIR/shapes/KEY/     one ordinary artifact per input shapes, KEY naming them ("4x3x224x224",
//                       several inputs joined by '_', a scalar "s")
// The runtime alone loads the variants that exist; compiling a missing one needs the compiler
// (`kiln run` / `kiln bench` do it and add it to the folder).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/runtime/graph_executor.h"

namespace kiln {

class ShapeVariants {
 public:
  // True when DIR holds variants.json.
  static bool is_variants_dir(const std::string& dir);
  // Reads DIR/variants.json; throws kiln::Error naming the file and the field that is wrong.
  static ShapeVariants load(const std::string& dir);
  // The text of variants.json for a model with these inputs and outputs, compiled with
  // `compile_args` (kiln's command-line flags, replayed for each new shape).
  static std::string to_json(const std::vector<TensorInfo>& inputs, const std::vector<TensorInfo>& outputs,
                             const std::vector<std::string>& compile_args);

  const std::string& dir() const { return dir_; }
  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }
  const std::vector<std::string>& compile_args() const { return compile_args_; }
  std::string model_path() const;

  // The key of these input shapes (one per input, in order); throws kiln::Error naming the
  // input whose shape does not fit (rank, a static dimension, a negative one).
  std::string key(const std::vector<Shape>& shapes) const;
  // DIR/shapes/KEY: where the variant for `shapes` is or will be.
  std::string variant_dir(const std::vector<Shape>& shapes) const;
  // The keys of the variants compiled so far, sorted.
  std::vector<std::string> compiled() const;
  // The variant for `shapes`; throws kiln::Error listing the compiled ones when it is absent.
  std::shared_ptr<const Artifact> load_variant(const std::vector<Shape>& shapes) const;

 private:
  std::string dir_;
  std::vector<TensorInfo> inputs_, outputs_;
  std::vector<std::string> compile_args_;
};

}  // namespace kiln
