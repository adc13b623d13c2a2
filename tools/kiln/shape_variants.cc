#include "shape_variants.h"

#include <filesystem>
#include <iostream>

#include "compiled_model.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/type_infer.h"
#include "kiln/support/file.h"
#include "kiln/support/interrupt.h"
#include "kiln/support/strings.h"
#include "kiln/transform/specialize_inputs.h"

namespace kiln::cli {

namespace {

namespace fs = std::filesystem;

// The flags that change what a build makes; a variants folder records them to replay.
const std::vector<std::string> kBuildFlags = {"-O", "--target", "--disable-pass", "--pass-option"};

std::vector<std::string> build_args_of(const Args& args) {
  std::vector<std::string> recorded;
  for (const std::string& flag : kBuildFlags)
    for (const std::string& value : args.all(flag)) recorded.insert(recorded.end(), {flag, value});
  return recorded;
}

std::vector<TensorInfo> tensor_infos(const std::vector<std::string>& names, const Type& type) {
  std::vector<Type> types;
  if (const TupleTypeNode* tuple = as_tuple(type))
    types = tuple->fields;
  else
    types = {type};
  std::vector<TensorInfo> infos;
  for (size_t i = 0; i < names.size() && i < types.size(); ++i) {
    const TensorTypeNode& t = expect_tensor(types[i], cat("'", names[i], "'"));
    infos.push_back({names[i], t.shape, t.dtype});
  }
  return infos;
}

// "x=1,3,224,224 mask=1,128": one shape per input of the model, in the model's order.
std::vector<Shape> parse_variant(const std::string& text, const std::vector<TensorInfo>& inputs) {
  std::map<std::string, Shape> given;
  for (const std::string& part : split(text, ' ')) {
    if (part.empty()) continue;
    auto [name, shape] = parse_shape_override(part, "--variant");
    check(std::find(shape.begin(), shape.end(), kAnyDim) == shape.end(), "--variant '", text,
          "': a variant's dimensions are numbers, not ?");
    check(given.emplace(name, shape).second, "--variant '", text, "' names an input twice");
  }
  std::vector<Shape> shapes;
  for (const TensorInfo& input : inputs) {
    auto it = given.find(input.name);
    check(it != given.end() || std::find(input.shape.begin(), input.shape.end(), -1) == input.shape.end(),
          "--variant '", text, "' gives no shape for input '", input.name, "'");
    shapes.push_back(it != given.end() ? it->second : input.shape);
    given.erase(input.name);
  }
  check(given.empty(), "--variant '", text, "' names '", given.empty() ? "" : given.begin()->first,
        "', which is not an input of the model");
  return shapes;
}

// The model of a variants folder specialised to `shapes` (one per input, in order).
LoadedModel specialized_model(const ShapeVariants& variants, const std::vector<Shape>& shapes) {
  const std::string path = variants.model_path();
  LoadedModel model;
  model.path = path;
  IRModule generic = parse_module(read_file(path), path);
  const Function& main = generic.lookup("main");
  check(main->params.size() == variants.inputs().size(), path, ": @main has ", main->params.size(),
        " parameters but variants.json lists ", variants.inputs().size(), " inputs");
  std::map<std::string, Shape> by_param;
  for (size_t i = 0; i < shapes.size(); ++i) by_param[main->params[i]->name] = shapes[i];
  try {
    model.module = specialize_inputs(generic, by_param);
  } catch (Error& e) {
    throw std::move(e.file(path));
  }
  for (const TensorInfo& t : variants.inputs()) model.input_names.push_back(t.name);
  for (const TensorInfo& t : variants.outputs()) model.output_names.push_back(t.name);
  return model;
}

void compile_variant(const ShapeVariants& variants, const std::vector<Shape>& shapes) {
  std::vector<std::string> argv = variants.compile_args();
  Args build_args(argv, kBuildFlags);
  BuiltModel built = build_model(specialized_model(variants, shapes), build_args);
  write_artifact_with_progress(built, variants.variant_dir(shapes));
}

}  // namespace

bool has_run_time_dims(const LoadedModel& model) {
  for (const TensorInfo& t : model_inputs(model))
    if (std::find(t.shape.begin(), t.shape.end(), -1) != t.shape.end()) return true;
  return false;
}

void write_shape_variants(const LoadedModel& model, const Args& args, const std::string& dir) {
  fs::path target = fs::absolute(dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  std::error_code ec;
  if (fs::exists(target, ec) && !ShapeVariants::is_variants_dir(target.string()) &&
      !fs::exists(target / "graph.json", ec))
    throw Error("the output folder exists and is not a kiln artifact; not overwriting it").file(target.string());
  fs::create_directories(target.parent_path());
  remove_partials_of_dead_processes(target.parent_path().string());
  const PartialPath staging(partial_name_for(target.string()));
  fs::create_directories(staging.path());
  IRModule typed = infer_types(model.module);
  std::vector<TensorInfo> inputs = model_inputs(model);
  std::vector<TensorInfo> outputs =
      tensor_infos(model.output_names, as_func(typed.lookup("main")->checked_type())->ret);
  write_file((fs::path(staging.path()) / "model.txt").string(), print_module(model.module));
  write_file((fs::path(staging.path()) / "variants.json").string(),
             ShapeVariants::to_json(inputs, outputs, build_args_of(args)));
  ShapeVariants variants = ShapeVariants::load(staging.path());
  for (const std::string& text : args.all("--variant")) compile_variant(variants, parse_variant(text, inputs));
  fs::remove_all(target, ec);
  fs::rename(staging.path(), target);
}

std::shared_ptr<const Artifact> variant_for(const ShapeVariants& variants, const std::vector<Shape>& shapes) {
  std::error_code ec;
  if (!fs::exists(fs::path(variants.variant_dir(shapes)) / "graph.json", ec)) {
    std::cerr << "kiln: compiling " << variants.dir() << " for input shapes " << variants.key(shapes)
              << " (the first run with them)\n";
    compile_variant(variants, shapes);
  }
  return variants.load_variant(shapes);
}

}  // namespace kiln::cli
