// kiln run MODEL.onnx|FILE|OUT.kiln --inputs DIR --outputs DIR [--engine compiled|interp]:
// runs the model on .npy tensors named after its inputs and writes one .npy per output.
#include <filesystem>
#include <iostream>

#include "cli.h"
#include "compiled_model.h"
#include "kiln/interp/interpreter.h"
#include "kiln/runtime/npy.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

void write_outputs(const std::vector<std::string>& names, const std::vector<NDArray>& outputs, const std::string& dir) {
  check(outputs.size() == names.size(), "model produced ", outputs.size(), " outputs, expected ", names.size());
  fs::create_directories(dir);
  for (size_t i = 0; i < outputs.size(); ++i) {
    fs::path file = fs::path(dir) / (sanitize_tensor_name(names[i]) + ".npy");
    write_npy(file.string(), outputs[i]);
    std::cout << names[i] << ": " << file.string() << "\n";
  }
}

std::vector<std::string> output_names_of(const Artifact& artifact) {
  std::vector<std::string> names;
  for (const TensorInfo& t : artifact.outputs()) names.push_back(t.name);
  return names;
}

}  // namespace

int cmd_run(const Args& args) {
  check(args.positionals().size() == 1, "run takes one model file");
  const std::string& path = args.positionals()[0];
  std::string engine = args.get("--engine", "compiled");
  std::string out_dir = args.get("--outputs", ".");
  if (engine == "interp") {
    check(!is_artifact_dir(path), "--engine interp runs a model file, not a compiled artifact");
    LoadedModel model = load_model(path, args);
    std::vector<Value> inputs;
    for (NDArray& a : read_inputs(model_inputs(model), args)) inputs.emplace_back(std::move(a));
    write_outputs(model.output_names, interpret(model.module, "main", inputs).flatten(), out_dir);
    return 0;
  }
  if (engine != "compiled") throw std::move(Error("unsupported engine").expected("compiled or interp", engine));
  PreparedRun prepared = prepare_run(path, args);
  GraphExecutor executor(prepared.artifact, args.get_int("--threads", 1));
  std::vector<NDArray> outputs = run_executor(executor, prepared.inputs);
  write_outputs(output_names_of(*prepared.artifact), outputs, out_dir);
  return 0;
}

}  // namespace kiln::cli
