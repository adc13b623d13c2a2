// compile_model MODEL.onnx OUT.kiln: imports an ONNX model, builds it at -O3 for the C target
// and writes the artifact folder (graph.json, lib.so, params.bin), linking kiln::compiler.
#include <cstdio>
#include <exception>

#include "kiln/backend/build.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/op.h"
#include "kiln/transform/pass.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: compile_model MODEL.onnx OUT.kiln\n");
    return 2;
  }
  try {
    // Registration is explicit: nothing relies on static initialisers of the static libraries.
    kiln::register_builtin_ops();
    kiln::register_builtin_passes();
    kiln::OnnxModel model = kiln::from_onnx_file(argv[1]);
    kiln::BuiltModel built = kiln::build(model.module, model.params, model.input_names, model.output_names);
    kiln::write_artifact(built, argv[2]);
    std::printf("wrote %s: %zu kernels\n", argv[2], built.num_kernels);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compile_model: error: %s\n", e.what());
    return 1;
  }
}
