#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/type_infer.h"
#include "kiln/runtime/npy.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/strings.h"
#include "kiln/tpulang/read_top.h"
#include "kiln/tpulang/to_kiln.h"

namespace kiln::cli {

namespace {

namespace fs = std::filesystem;

LoadedModel load_ir_text(const std::string& path) {
  LoadedModel m;
  m.module = parse_module(read_file(path), path);
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

// --bind NAME=VALUE fixes an input at import, as relay's bind_params_by_name does: an If
// switching on that input folds to the branch taken, so a model whose control flow depends
// on a flag (a sample rate) compiles to a dataflow graph that takes the remaining inputs.
struct Binding {
  std::string name, value;
};

Binding parse_binding(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw std::move(Error("malformed --bind").expected("NAME=VALUE such as sr=16000 or h=h0.npy", "'" + text + "'"));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

const OnnxValueInfo& input_named(const std::vector<OnnxValueInfo>& inputs, const std::string& name) {
  auto it = std::find_if(inputs.begin(), inputs.end(), [&](const OnnxValueInfo& in) { return in.name == name; });
  if (it != inputs.end()) return *it;
  std::vector<std::string> names;
  for (const auto& in : inputs) names.push_back("'" + in.name + "'");
  throw std::move(Error(cat("--bind names '", name, "', which is not an input of the model"))
                      .expected("one of " + join(names), "'" + name + "'"));
}

DType declared_dtype(const OnnxValueInfo& input, const std::string& what) {
  check(input.kind == "tensor", what, ": the input is a ", input.kind, "; --bind fixes tensor inputs only");
  std::string name = input.elem_type == "float" ? "float32" : input.elem_type == "double" ? "float64" : input.elem_type;
  DType dtype;
  check(try_parse_dtype(name, &dtype), what, ": kiln has no dtype for the input's element type ", input.elem_type);
  return dtype;
}

bool fits_declared(const OnnxValueInfo& input, const Shape& shape) {
  if (!input.has_shape) return true;
  if (input.shape.size() != shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i)
    if (input.shape[i] != kAnyDim && input.shape[i] != shape[i]) return false;
  return true;
}

NDArray bound_npy(const OnnxValueInfo& input, DType dtype, const std::string& path, const std::string& what) {
  check(fs::exists(path), what, ": no such file '", path, "'");
  NDArray value;
  try {
    value = read_npy(path);
  } catch (const Error& e) {
    throw Error(cat(what, ": ", e.what()));
  }
  if (value.dtype() != dtype)
    throw std::move(Error(cat(what, ": '", path, "' has the wrong dtype"))
                        .expected(std::string(dtype_name(dtype)), std::string(dtype_name(value.dtype()))));
  if (!fits_declared(input, value.shape()))
    throw std::move(Error(cat(what, ": '", path, "' has the wrong shape"))
                        .expected(shape_str(input.shape), shape_str(value.shape())));
  return value;
}

double parse_number(const std::string& text, DType dtype, const std::string& what) {
  if (dtype == DType::kBool && (text == "true" || text == "false")) return text == "true" ? 1 : 0;
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    throw std::move(Error(cat(what, ": not a number")).expected(cat(dtype_name(dtype), " values"), "'" + text + "'"));
  return v;
}

// The shape comma-separated values fill: the declared one, or a vector when only its length is open.
Shape shape_for_values(const OnnxValueInfo& input, size_t count, const std::string& what) {
  check(input.has_shape, what, ": the input declares no shape; give its value as a .npy file");
  bool open = std::find(input.shape.begin(), input.shape.end(), kAnyDim) != input.shape.end();
  if (open && input.shape.size() == 1) return {static_cast<int64_t>(count)};
  check(!open, what, ": the input has unknown dimensions ", shape_str(input.shape), "; give its value as a .npy file");
  if (num_elements(input.shape) != static_cast<int64_t>(count))
    throw std::move(Error(cat(what, " has the wrong number of values for shape ", shape_str(input.shape)))
                        .expected(cat(num_elements(input.shape)), cat(count)));
  return input.shape;
}

NDArray bound_numbers(const OnnxValueInfo& input, DType dtype, const std::string& text, const std::string& what) {
  std::vector<double> values;
  for (const std::string& part : split(text, ',')) values.push_back(parse_number(part, dtype, what));
  NDArray value = NDArray::from_doubles(shape_for_values(input, values.size(), what), dtype, values);
  for (size_t i = 0; i < values.size(); ++i)
    if (!is_float(dtype) && value.at(static_cast<int64_t>(i)) != values[i])
      throw std::move(Error(cat(what, ": a value does not fit the input's dtype"))
                          .expected(std::string(dtype_name(dtype)), cat(values[i])));
  return value;
}

std::map<std::string, NDArray> bound_inputs(const std::string& path, const Args& args) {
  std::map<std::string, NDArray> values;
  std::vector<std::string> texts = args.all("--bind");
  if (texts.empty()) return values;
  std::vector<OnnxValueInfo> inputs = summarize_onnx_file(path).inputs;
  for (const std::string& text : texts) {
    Binding b = parse_binding(text);
    const OnnxValueInfo& input = input_named(inputs, b.name);
    std::string what = cat("--bind for input '", b.name, "'");
    DType dtype = declared_dtype(input, what);
    NDArray value = ends_with(b.value, ".npy") ? bound_npy(input, dtype, b.value, what)
                                               : bound_numbers(input, dtype, b.value, what);
    check(values.emplace(b.name, value).second, "--bind is given twice for input '", b.name, "'");
  }
  return values;
}

LoadedModel load_onnx(const std::string& path, const Args& args) {
  OnnxImportOptions options;
  options.shapes = shape_overrides(args);
  add_shapes_of_given_inputs(path, args, options.shapes);
  options.run_checker = !args.has("--no-check");
  options.freeze_params = true;  // the command line feeds only the real inputs
  options.fixed_inputs = bound_inputs(path, args);
  OnnxModel onnx = from_onnx_file(path, options);
  for (const std::string& w : onnx.warnings) std::cerr << "kiln: warning: " << w << "\n";
  return {onnx.module, onnx.input_names, onnx.output_names, path};
}

// Top MLIR (tpu-mlir's NAME_origin.mlir, as `kiln export-mlir` writes it): read as a TpuLang
// graph, converted, and its weights bound as constants like an ONNX model's initializers.
LoadedModel load_top_mlir(const std::string& path, const Args& args) {
  tpulang::TopGraph top = tpulang::read_top_file(path, args.get("--weights"));
  LoadedModel m;
  try {
    tpulang::KilnProgram program = tpulang::to_kiln(*top.graph, top.inputs, top.outputs);
    m.module = infer_types(bind_params(program.module, program.params));
  } catch (Error& e) {
    throw e.file(path);
  }
  for (const tpulang::Tensor& t : top.inputs) m.input_names.push_back(t.name());
  for (const tpulang::Tensor& t : top.outputs) m.output_names.push_back(t.name());
  return m;
}

}  // namespace

LoadedModel load_model(const std::string& path, const Args& args) {
  LoadedModel model;
  check(!args.has("--weights") || ends_with(path, ".mlir"), "--weights applies to Top MLIR (.mlir) models only");
  if (ends_with(path, ".onnx")) {
    model = load_onnx(path, args);
  } else {
    check(args.all("--shape").empty(), "--shape applies to ONNX models only");
    check(!args.has("--no-check"), "--no-check applies to ONNX models only");
    check(args.all("--bind").empty(), "--bind applies to ONNX models only");
    model = ends_with(path, ".mlir") ? load_top_mlir(path, args) : load_ir_text(path);
  }
  model.path = path;
  return model;
}

}  // namespace kiln::cli
