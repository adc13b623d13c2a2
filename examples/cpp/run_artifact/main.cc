// run_artifact ARTIFACT_DIR INPUT_DIR OUTPUT_DIR: loads an artifact folder written by
// `kiln compile` (or kiln.build(...).export_library), sets each input from INPUT_DIR/NAME.npy,
// runs it once and writes each output to OUTPUT_DIR/NAME.npy. It links kiln::runtime only.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "kiln/runtime/graph_executor.h"
#include "kiln/runtime/npy.h"

namespace fs = std::filesystem;

namespace {

// Tensor names may hold '/' or ':' (ONNX names); sanitize_tensor_name makes them file names.
fs::path npy_path(const fs::path& dir, const std::string& tensor) {
  return dir / (kiln::sanitize_tensor_name(tensor) + ".npy");
}

void run(const fs::path& artifact_dir, const fs::path& input_dir, const fs::path& output_dir) {
  kiln::GraphExecutor executor(kiln::Artifact::load(artifact_dir.string()));
  for (size_t i = 0; i < executor.num_inputs(); ++i)
    executor.set_input(i, kiln::read_npy(npy_path(input_dir, executor.input_info(i).name).string()));
  executor.run();
  fs::create_directories(output_dir);
  for (size_t i = 0; i < executor.num_outputs(); ++i) {
    const std::string& name = executor.output_info(i).name;
    kiln::write_npy(npy_path(output_dir, name).string(), executor.get_output(i));
    std::printf("wrote %s\n", name.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: run_artifact ARTIFACT_DIR INPUT_DIR OUTPUT_DIR\n");
    return 2;
  }
  try {
    run(argv[1], argv[2], argv[3]);
    return 0;
  } catch (const std::exception& e) {  // kiln::Error names the file, node and op
    std::fprintf(stderr, "run_artifact: error: %s\n", e.what());
    return 1;
  }
}
