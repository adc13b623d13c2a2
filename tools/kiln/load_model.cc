#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/type_infer.h"
#include "kiln/runtime/npy.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln::cli {

namespace {

namespace fs = std::filesystem;

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open file").file(path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

LoadedModel load_ir_text(const std::string& path) {
  LoadedModel m;
  m.module = parse_module(read_text_file(path), path);
  try {
    infer_types(m.module);
  } catch (Error& e) {
    throw e.file(path);
  }
  const Function& main = m.module.lookup("main");
  for (const auto& p : main->params) m.input_names.push_back(p->name);
  const Type& ret = as_func(main->checked_type())->ret;
  size_t outputs = as_tuple(ret) ? as_tuple(ret)->fields.size() : 1;
  for (size_t i = 0; i < outputs; ++i) m.output_names.push_back(cat("output_", i));
  return m;
}

std::map<std::string, Shape> shape_overrides(const Args& args) {
  std::map<std::string, Shape> shapes;
  for (const std::string& text : args.all("--shape")) {
    auto [name, shape] = parse_shape_override(text);
    check(shapes.emplace(name, shape).second, "--shape is given twice for '", name, "'");
  }
  return shapes;
}

// `run --inputs DIR` on a model with unknown dimensions takes them from the .npy files
// given, as a user expects; --shape still wins.
void add_shapes_of_given_inputs(const std::string& path, const Args& args, std::map<std::string, Shape>& shapes) {
  if (!args.has("--inputs")) return;
  fs::path dir = args.get("--inputs");
  for (const OnnxValueInfo& in : summarize_onnx_file(path).inputs) {
    bool unknown = !in.has_shape || std::find(in.shape.begin(), in.shape.end(), kAnyDim) != in.shape.end();
    fs::path file = dir / (sanitize_tensor_name(in.name) + ".npy");
    if (unknown && !shapes.count(in.name) && fs::exists(file)) shapes[in.name] = read_npy(file.string()).shape();
  }
}

LoadedModel load_onnx(const std::string& path, const Args& args) {
  OnnxImportOptions options;
  options.shapes = shape_overrides(args);
  add_shapes_of_given_inputs(path, args, options.shapes);
  options.run_checker = !args.has("--no-check");
  options.freeze_params = true;  // the command line feeds only the real inputs
  OnnxModel onnx = from_onnx_file(path, options);
  for (const std::string& w : onnx.warnings) std::cerr << "kiln: warning: " << w << "\n";
  return {onnx.module, onnx.input_names, onnx.output_names};
}

}  // namespace

LoadedModel load_model(const std::string& path, const Args& args) {
  if (ends_with(path, ".onnx")) return load_onnx(path, args);
  check(args.all("--shape").empty(), "--shape applies to ONNX models only");
  check(!args.has("--no-check"), "--no-check applies to ONNX models only");
  return load_ir_text(path);
}

}  // namespace kiln::cli
