#include "compiled_model.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <random>

#include "kiln/frontend/onnx.h"
#include "kiln/runtime/npy.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"
#include "progress.h"
#include "shape_variants.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

// A --pass-option value: true / false, an integer, or else a string.
AttrValue option_value(const std::string& text) {
  if (text == "true" || text == "false") return text == "true";
  try {
    size_t used = 0;
    int64_t n = std::stoll(text, &used);
    if (used == text.size()) return n;
  } catch (const std::exception&) {
  }
  return text;
}

// --pass-option PASS.KEY=VALUE into ctx.options[PASS][KEY].
void add_pass_option(PassContext& ctx, const std::string& option) {
  size_t dot = option.find('.');
  size_t eq = option.find('=', dot == std::string::npos ? 0 : dot);
  if (dot == 0 || dot == std::string::npos || eq == std::string::npos || eq == dot + 1)
    throw std::move(Error("option --pass-option needs PASS.KEY=VALUE")
                        .expected("e.g. CombineParallelDense.to_batch=false", "'" + option + "'"));
  std::string pass = option.substr(0, dot);
  PassRegistry::global().get(pass);  // an unknown name is an error listing the passes
  ctx.options[pass].set(option.substr(dot + 1, eq - dot - 1), option_value(option.substr(eq + 1)));
}

}  // namespace

PassContext pass_context(const Args& args) {
  register_builtin_passes();
  PassContext ctx;
  ctx.opt_level = static_cast<int>(args.get_int("-O", 3));
  for (const std::string& name : args.all("--disable-pass")) {
    PassRegistry::global().get(name);  // an unknown name is an error listing the passes
    ctx.disabled_passes.insert(name);
  }
  for (const std::string& option : args.all("--pass-option")) add_pass_option(ctx, option);
  return ctx;
}

namespace {

class PassProgress : public PassInstrument {
 public:
  void after_pass(const PassInfo& info, const IRModule&, double) override {
    show_progress(cat("optimizing: ", ++passes_, " passes run (", info.name, ")"));
  }

 private:
  int passes_ = 0;
};

}  // namespace

void write_artifact_with_progress(const BuiltModel& built, const std::string& dir) {
  if (!built.kernels_c.empty()) {
    bool cached = codegen::CCompiler().is_cached(built.kernels_c);
    show_progress(cached ? cat(built.num_kernels, " kernels found in the compile cache")
                         : cat("compiling ", built.num_kernels, " kernels with the C compiler"));
  }
  write_artifact(built, dir);
  clear_progress();
}

BuiltModel build_model(const LoadedModel& model, const Args& args, const std::shared_ptr<PassInstrument>& stats) {
  try {
    BuildOptions options;
    std::string target = args.get("--target", "c");
    if (target != "c") throw std::move(Error("unsupported target").expected("c", target));
    options.passes = pass_context(args);
    auto timings = std::make_shared<PassTimings>();
    if (args.has("--verbose")) options.passes.instruments.push_back(timings);
    if (stats) options.passes.instruments.push_back(stats);
    options.passes.instruments.push_back(std::make_shared<PassProgress>());
    options.on_lowered = [](size_t lowered, size_t total) {
      show_progress(cat("lowered ", lowered, "/", total, " functions"));
    };
    BuiltModel built = build(model.module, {}, model.input_names, model.output_names, options);
    for (const auto& [pass, seconds] : timings->timings())
      std::cerr << "kiln: note: pass " << pass << " took " << seconds * 1e3 << " ms\n";
    return built;
  } catch (Error& e) {
    throw e.file(model.path);
  }
}

namespace {

// A folder of our own under the temp dir, removed when it goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kiln-XXXXXX").string();
    check(mkdtemp(pattern.data()) != nullptr, "cannot create a temporary folder");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

NDArray random_tensor(const TensorInfo& t, std::mt19937_64& rng) {
  check(num_elements(t.shape) >= 0, "--random-inputs cannot fill input '", t.name, "' of unknown shape ",
        shape_str(t.shape));
  NDArray a = NDArray::empty(t.shape, t.dtype);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small_int(0, 9);
  for (int64_t i = 0; i < a.numel(); ++i)
    a.set(i, is_float(t.dtype) ? real(rng) : t.dtype == DType::kBool ? small_int(rng) % 2 : small_int(rng));
  return a;
}

}  // namespace

std::shared_ptr<const Artifact> compile_and_load(const LoadedModel& model, const Args& args) {
  BuiltModel built = build_model(model, args);
  TempDir dir;
  std::string artifact_dir = (dir.path() / "model.kiln").string();
  write_artifact_with_progress(built, artifact_dir);
  // lib.so stays mapped after its file is removed.
  return Artifact::load(artifact_dir);
}

bool is_artifact_dir(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::exists(fs::path(path) / "graph.json", ec);
}

std::vector<NDArray> run_executor(GraphExecutor& executor, const std::vector<NDArray>& inputs) {
  check(inputs.size() == executor.num_inputs(), "the model has ", executor.num_inputs(), " inputs, ", inputs.size(),
        " given");
  for (size_t i = 0; i < inputs.size(); ++i) executor.set_input(i, inputs[i]);
  executor.run();
  std::vector<NDArray> outputs;
  for (size_t i = 0; i < executor.num_outputs(); ++i) outputs.push_back(executor.get_output(i));
  return outputs;
}

std::vector<NDArray> read_inputs(const std::vector<TensorInfo>& inputs, const Args& args, bool random_by_default) {
  std::string dir = args.get("--inputs");
  bool random = args.has("--random-inputs") || random_by_default;
  std::mt19937_64 rng(static_cast<uint64_t>(args.get_int("--random-inputs", 0)));
  std::vector<NDArray> values;
  std::vector<std::string> missing;
  for (const TensorInfo& input : inputs) {
    fs::path file = fs::path(dir.empty() ? "." : dir) / (sanitize_tensor_name(input.name) + ".npy");
    if (!dir.empty() && fs::exists(file))
      values.push_back(read_npy(file.string()));
    else if (random)
      values.push_back(random_tensor(input, rng));
    else
      missing.push_back(file.string());
  }
  if (!missing.empty()) throw Error(cat("missing input tensors: ", join(missing)));
  return values;
}

std::vector<TensorInfo> model_inputs(const LoadedModel& model) {
  const Function& main = model.module.lookup("main");
  std::vector<TensorInfo> inputs;
  for (size_t i = 0; i < main->params.size(); ++i) {
    const TensorTypeNode& t = expect_tensor(main->params[i]->type_annotation, "input '" + model.input_names[i] + "'");
    inputs.push_back({model.input_names[i], t.shape, t.dtype});
  }
  return inputs;
}

PreparedRun prepare_run(const std::string& path, const Args& args, bool random_by_default) {
  if (!ShapeVariants::is_variants_dir(path)) {
    std::shared_ptr<const Artifact> artifact = load_or_compile(path, args);
    return {artifact, read_inputs(artifact->inputs(), args, random_by_default)};
  }
  check(args.all("--bind").empty(), "--bind applies when compiling a model; artifact '", path, "' is compiled");
  ShapeVariants variants = ShapeVariants::load(path);
  std::vector<TensorInfo> inputs = variants.inputs();
  for (const std::string& text : args.all("--shape")) {
    auto [name, shape] = parse_shape_override(text);
    auto it =
        std::find_if(inputs.begin(), inputs.end(), [&name = name](const TensorInfo& t) { return t.name == name; });
    check(it != inputs.end(), "--shape names '", name, "', which is not an input of ", path);
    it->shape = shape;
  }
  PreparedRun run;
  run.inputs = read_inputs(inputs, args, random_by_default);
  std::vector<Shape> shapes;
  for (const NDArray& a : run.inputs) shapes.push_back(a.shape());
  run.artifact = variant_for(variants, shapes);
  return run;
}

std::shared_ptr<const Artifact> load_or_compile(const std::string& path, const Args& args) {
  if (is_artifact_dir(path)) {
    check(args.all("--bind").empty(), "--bind applies when compiling a model; the inputs of artifact '", path,
          "' were fixed when it was compiled");
    return Artifact::load(path);
  }
  return compile_and_load(load_model(path, args), args);
}

}  // namespace kiln::cli
