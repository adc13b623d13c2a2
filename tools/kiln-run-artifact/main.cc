// kiln-run-artifact ARTIFACT_DIR INPUT_DIR OUTPUT_DIR [--threads N]
// Runs a compiled artifact with nothing but the kiln runtime: reads every graph input from
// INPUT_DIR/<name>.npy and writes every output to OUTPUT_DIR/<name>.npy, names made safe as
// file names (characters outside [A-Za-z0-9._-] become '_'). A folder of shape variants
// (kiln/runtime/shape_variants.h) runs the variant compiled for the inputs' shapes.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "kiln/runtime/graph_executor.h"
#include "kiln/runtime/npy.h"
#include "kiln/runtime/shape_variants.h"
#include "kiln/support/error.h"

namespace {

struct Options {
  std::string artifact, inputs, outputs;
  int threads = 1;
};

constexpr const char* kUsage = "usage: kiln-run-artifact ARTIFACT_DIR INPUT_DIR OUTPUT_DIR [--threads N]";

Options parse_options(int argc, char** argv) {
  Options options;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads") {
      kiln::check(i + 1 < argc, "--threads needs a value");
      try {
        options.threads = std::stoi(argv[++i]);
      } catch (const std::exception&) {
        throw kiln::Error(kiln::cat("--threads: '", argv[i], "' is not a number"));
      }
    } else {
      positional.push_back(arg);
    }
  }
  kiln::check(positional.size() == 3, kUsage);
  options.artifact = positional[0];
  options.inputs = positional[1];
  options.outputs = positional[2];
  return options;
}

std::string npy_path(const std::string& dir, const std::string& tensor) {
  return (std::filesystem::path(dir) / (kiln::sanitize_tensor_name(tensor) + ".npy")).string();
}

std::vector<kiln::NDArray> read_inputs(const std::vector<kiln::TensorInfo>& inputs, const std::string& dir) {
  std::vector<kiln::NDArray> values;
  for (const kiln::TensorInfo& input : inputs) {
    const std::string path = npy_path(dir, input.name);
    if (!std::filesystem::exists(path)) throw kiln::Error(kiln::cat("no file for input '", input.name, "'")).file(path);
    values.push_back(kiln::read_npy(path));
  }
  return values;
}

// A folder of shape variants runs the variant compiled for the inputs' shapes.
std::shared_ptr<const kiln::Artifact> load_for(const std::string& dir, std::vector<kiln::NDArray>& inputs,
                                               const std::string& input_dir) {
  if (!kiln::ShapeVariants::is_variants_dir(dir)) {
    auto artifact = kiln::Artifact::load(dir);
    inputs = read_inputs(artifact->inputs(), input_dir);
    return artifact;
  }
  kiln::ShapeVariants variants = kiln::ShapeVariants::load(dir);
  inputs = read_inputs(variants.inputs(), input_dir);
  std::vector<kiln::Shape> shapes;
  for (const kiln::NDArray& a : inputs) shapes.push_back(a.shape());
  return variants.load_variant(shapes);
}

void run(const Options& options) {
  std::vector<kiln::NDArray> inputs;
  kiln::GraphExecutor executor(load_for(options.artifact, inputs, options.inputs), options.threads);
  for (size_t i = 0; i < inputs.size(); ++i) executor.set_input(i, inputs[i]);
  executor.run();
  std::filesystem::create_directories(options.outputs);
  for (size_t i = 0; i < executor.num_outputs(); ++i)
    kiln::write_npy(npy_path(options.outputs, executor.output_info(i).name), executor.get_output(i));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    run(parse_options(argc, argv));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln-run-artifact: error: %s\n", e.what());
    return 1;
  }
}
