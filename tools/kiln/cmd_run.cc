// kiln run FILE --inputs DIR --outputs DIR: runs @main on .npy tensors named after its
// inputs and writes one .npy per output.
#include <filesystem>
#include <iostream>
#include <random>

#include "cli.h"
#include "kiln/interp/interpreter.h"
#include "kiln/runtime/npy.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

NDArray random_tensor(const TensorTypeNode& t, const std::string& name, std::mt19937_64& rng) {
  check(t.is_static(), "--random-inputs cannot fill input '", name, "' of unknown shape ", shape_str(t.shape));
  NDArray a = NDArray::empty(t.shape, t.dtype);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small_int(0, 9);
  for (int64_t i = 0; i < a.numel(); ++i)
    a.set(i, is_float(t.dtype) ? real(rng) : t.dtype == DType::kBool ? small_int(rng) % 2 : small_int(rng));
  return a;
}

std::vector<Value> read_inputs(const LoadedModel& model, const Args& args) {
  const Function& main = model.module.lookup("main");
  std::string dir = args.get("--inputs");
  bool random = args.has("--random-inputs");
  std::mt19937_64 rng(static_cast<uint64_t>(args.get_int("--random-inputs", 0)));
  std::vector<Value> values;
  std::vector<std::string> missing;
  for (size_t i = 0; i < main->params.size(); ++i) {
    const std::string& name = model.input_names[i];
    fs::path file = fs::path(dir.empty() ? "." : dir) / (sanitize_tensor_name(name) + ".npy");
    if (!dir.empty() && fs::exists(file)) {
      values.emplace_back(read_npy(file.string()));
    } else if (random) {
      values.emplace_back(random_tensor(expect_tensor(main->params[i]->type_annotation, name), name, rng));
    } else {
      missing.push_back(file.string());
    }
  }
  if (!missing.empty()) throw Error(cat("missing input tensors: ", join(missing)));
  return values;
}

void write_outputs(const LoadedModel& model, const Value& result, const std::string& dir) {
  std::vector<NDArray> outputs = result.flatten();
  check(outputs.size() == model.output_names.size(), "model produced ", outputs.size(), " outputs, expected ",
        model.output_names.size());
  fs::create_directories(dir);
  for (size_t i = 0; i < outputs.size(); ++i) {
    fs::path file = fs::path(dir) / (sanitize_tensor_name(model.output_names[i]) + ".npy");
    write_npy(file.string(), outputs[i]);
    std::cout << model.output_names[i] << ": " << file.string() << "\n";
  }
}

}  // namespace

int cmd_run(const Args& args) {
  check(args.positionals().size() == 1, "run takes one model file");
  std::string engine = args.get("--engine", "interp");
  if (engine != "interp") throw std::move(Error("unsupported engine").expected("interp", engine));
  LoadedModel model = load_model(args.positionals()[0], args);
  Value result = interpret(model.module, "main", read_inputs(model, args));
  write_outputs(model, result, args.get("--outputs", "."));
  return 0;
}

}  // namespace kiln::cli
