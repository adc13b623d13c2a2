// kiln export-mlir MODEL -o DIR/NAME: the model as tpu-mlir's chip-independent Top dialect,
// the route of tpu-mlir's model_transform: DIR/NAME_origin.mlir and
// DIR/NAME_TOP_F32_all_weight.npz.
#include <filesystem>
#include <iostream>

#include "cli.h"
#include "kiln/support/error.h"
#include "kiln/tpulang/emit.h"
#include "kiln/tpulang/from_kiln.h"
#include "kiln/transform/pass.h"

namespace kiln::cli {

int cmd_export_mlir(const Args& args) {
  check(args.positionals().size() == 1, "export-mlir takes one model file");
  check(args.has("-o"), "export-mlir needs the output name: -o DIR/NAME");
  LoadedModel model = load_model(args.positionals()[0], args);
  std::filesystem::path out(args.get("-o"));
  check(!out.filename().empty(), "export-mlir needs a name after the folder: -o DIR/NAME");
  try {
    register_builtin_passes();
    // Top has no batch norm or dropout: inference-time ops are decomposed (and what that
    // leaves on constants folded) first, as tpu-mlir's ONNX frontend does.
    IRModule mod = run_passes(model.module, {"InferType", "SimplifyInference", "FoldConstant"});
    tpulang::TopGraph top = tpulang::from_kiln(mod, {}, model.output_names);
    std::string dir = out.has_parent_path() ? out.parent_path().string() : ".";
    std::filesystem::create_directories(dir);
    tpulang::CompiledFiles files = tpulang::compile(*top.graph, out.filename().string(), top.inputs, top.outputs, dir);
    std::cout << "wrote " << files.mlir_path << " and " << files.weight_path << "\n";
  } catch (Error& e) {
    throw e.file(model.path);
  }
  return 0;
}

}  // namespace kiln::cli
