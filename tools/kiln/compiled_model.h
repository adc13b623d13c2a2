// The compiled engine as the commands use it: building a loaded model, writing or loading an
// artifact, and running one with a GraphExecutor.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "kiln/backend/build.h"
#include "kiln/runtime/graph_executor.h"

namespace kiln::cli {

// The pass context of the command's -O (default 3), --disable-pass and --pass-option
// PASS.KEY=VALUE flags (VALUE true / false, an integer or a string).
PassContext pass_context(const Args& args);
// build() with the command's pass context and --target (only "c").
// `stats`, when given, watches every pass (kiln compile --stats).
BuiltModel build_model(const LoadedModel& model, const Args& args,
                       const std::shared_ptr<PassInstrument>& stats = nullptr);
// write_artifact() with a progress line (progress.h) saying whether the C compiler runs.
void write_artifact_with_progress(const BuiltModel& built, const std::string& dir);
// Builds into a private temporary folder, loads it and removes the folder.
std::shared_ptr<const Artifact> compile_and_load(const LoadedModel& model, const Args& args);
bool is_artifact_dir(const std::string& path);
// The artifact at `path`, or the model file at `path` compiled.
std::shared_ptr<const Artifact> load_or_compile(const std::string& path, const Args& args);

// One tensor per input from --inputs DIR (NAME.npy, the name sanitised), or random values with
// --random-inputs SEED (or seed 0 when `random_by_default`); throws naming every missing file.
std::vector<NDArray> read_inputs(const std::vector<TensorInfo>& inputs, const Args& args,
                                 bool random_by_default = false);

// An artifact and the inputs to run it on: `path` loaded (a variants folder: the variant for
// the inputs' shapes, compiled when absent) or compiled, and the inputs read as read_inputs
// does. For a variants folder, --shape NAME=D0,... gives the shape of random inputs.
struct PreparedRun {
  std::shared_ptr<const Artifact> artifact;
  std::vector<NDArray> inputs;
};
PreparedRun prepare_run(const std::string& path, const Args& args, bool random_by_default = false);

// The inputs of @main, named as the model names them, with their declared shapes and dtypes
// ('?' dimensions as -1).
std::vector<TensorInfo> model_inputs(const LoadedModel& model);

// Runs the executor on `inputs` (one per graph input, in order) and returns the outputs.
std::vector<NDArray> run_executor(GraphExecutor& executor, const std::vector<NDArray>& inputs);

}  // namespace kiln::cli
