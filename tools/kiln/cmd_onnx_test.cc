// kiln onnx-test CASE_DIR...: runs ONNX backend test cases (model.onnx plus
// test_data_set_*/input_*.pb and output_*.pb) through the frontend and the interpreter and
// compares with ONNX's tolerances. A directory holding case directories runs them all.
// Inputs are given at run time, as a user gives them. With --bake-inputs a case that fails so
// is retried with its input values baked into the model (backend cases feed shapes, axes and
// pads as inputs where real models have constants) and, if it passes then, counted apart.
// Prints one line per failing case and ends with "N passed, N failed, N skipped", with
// "N passed only with baked inputs" after the passes when --bake-inputs is given.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "compiled_model.h"
#include "kiln/frontend/onnx.h"
#include "kiln/interp/interpreter.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln::cli {

namespace {

namespace fs = std::filesystem;

enum class Outcome { kPassed, kPassedBaked, kFailed, kSkipped };

struct CaseResult {
  Outcome outcome;
  std::string reason;
};

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

bool is_case_dir(const fs::path& dir) { return fs::exists(dir / "model.onnx") || fs::exists(dir / "data.json"); }

// The case directories named on the command line, or found one level below them.
std::vector<fs::path> collect_cases(const std::vector<std::string>& paths) {
  std::vector<fs::path> cases;
  for (const std::string& p : paths) {
    fs::path dir(p);
    check(fs::is_directory(dir), "onnx-test: '", p, "' is not a directory");
    if (is_case_dir(dir)) {
      cases.push_back(dir);
      continue;
    }
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.is_directory() && is_case_dir(entry.path())) found.push_back(entry.path());
    check(!found.empty(), "onnx-test: '", p, "' holds no model.onnx and no test case directories");
    std::sort(found.begin(), found.end());
    cases.insert(cases.end(), found.begin(), found.end());
  }
  return cases;
}

// file_<i>.pb in index order (input_10 after input_9).
std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<int, fs::path>> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (!starts_with(name, prefix) || !ends_with(name, ".pb")) continue;
    std::string index = name.substr(prefix.size(), name.size() - prefix.size() - 3);
    if (index.empty() || !std::all_of(index.begin(), index.end(), ::isdigit)) continue;
    files.emplace_back(std::stoi(index), entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<fs::path> out;
  for (auto& f : files) out.push_back(f.second);
  return out;
}

std::vector<fs::path> data_sets(const fs::path& dir) {
  std::vector<fs::path> sets;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_directory() && starts_with(entry.path().filename().string(), "test_data_set_"))
      sets.push_back(entry.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

Tolerance read_tolerance(const fs::path& dir) {
  Tolerance tol;
  std::ifstream in(dir / "data.json");
  if (!in) return tol;
  nlohmann::json data = nlohmann::json::parse(in, nullptr, false);
  if (data.is_discarded()) return tol;
  if (data.contains("rtol") && data["rtol"].is_number()) tol.rtol = data["rtol"].get<double>();
  if (data.contains("atol") && data["atol"].is_number()) tol.atol = data["atol"].get<double>();
  return tol;
}

// Why the case is out of scope, or "".
std::string skip_reason(const fs::path& dir, const OnnxGraphSummary& summary) {
  std::string name = dir.filename().string();
  if (name.find("training") != std::string::npos) return "training case";
  for (const char* op : {"Adagrad", "Adam", "Momentum", "Gradient"})
    if (std::find(summary.op_types.begin(), summary.op_types.end(), op) != summary.op_types.end())
      return cat("training op ", op);
  // The expected values come from numpy's generator, which no other implementation reproduces.
  for (const char* op :
       {"Bernoulli", "RandomUniform", "RandomUniformLike", "RandomNormal", "RandomNormalLike", "Multinomial"})
    if (std::find(summary.op_types.begin(), summary.op_types.end(), op) != summary.op_types.end())
      return cat("random output (", op, "): the expected values depend on numpy's random generator");
  for (const auto* values : {&summary.inputs, &summary.outputs}) {
    for (const OnnxValueInfo& v : *values) {
      if (v.kind != "tensor" && v.kind != "sequence" && v.kind != "optional")
        return cat(v.kind, " value '", v.name, "'");
      if (v.elem_type == "string") return cat("string tensor '", v.name, "'");
    }
  }
  return "";
}

std::string element_str(const NDArray& a, int64_t i) {
  return is_float(a.dtype()) ? format_double(a.at(i)) : cat(a.int_at(i));
}

// "" when `actual` matches `expected` (numpy's assert_allclose for floats, NaN equal to NaN;
// exact for integers and bools), else what differs.
std::string compare(const NDArray& expected, const NDArray& actual, const Tolerance& tol) {
  if (expected.shape() != actual.shape())
    return cat("shape ", shape_str(actual.shape()), ", expected ", shape_str(expected.shape()));
  if (expected.dtype() != actual.dtype())
    return cat("dtype ", dtype_name(actual.dtype()), ", expected ", dtype_name(expected.dtype()));
  int64_t mismatches = 0, worst = -1;
  double worst_excess = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    bool equal;
    double excess = 1;
    if (is_float(expected.dtype())) {
      double e = expected.at(i), a = actual.at(i);
      if (std::isnan(e) || std::isnan(a) || std::isinf(e) || std::isinf(a)) {
        equal = (std::isnan(e) && std::isnan(a)) || e == a;
      } else {
        double allowed = tol.atol + tol.rtol * std::abs(e);
        excess = std::abs(a - e) - allowed;
        equal = excess <= 0;
      }
    } else {
      equal = expected.int_at(i) == actual.int_at(i);
    }
    if (equal) continue;
    ++mismatches;
    if (worst < 0 || excess > worst_excess) worst = i, worst_excess = excess;
  }
  if (mismatches == 0) return "";
  return cat(mismatches, " of ", expected.numel(), " elements differ; worst at flat index ", worst, ": ",
             element_str(actual, worst), ", expected ", element_str(expected, worst));
}

std::string without_file_prefix(const std::string& text, const fs::path& model) {
  std::string prefix = model.string() + ": ";
  return starts_with(text, prefix) ? text.substr(prefix.size()) : text;
}

// ONNX 1.12's test data stores some bfloat16 tensors as uint16 bit patterns.
NDArray as_declared(NDArray value, const OnnxValueInfo* declared) {
  if (!declared || declared->elem_type != "bfloat16" || value.dtype() != DType::kUInt16) return value;
  NDArray out = NDArray::empty(value.shape(), DType::kBFloat16);
  std::memcpy(out.raw(), value.raw(), value.nbytes());
  return out;
}

const OnnxValueInfo* declared_at(const std::vector<OnnxValueInfo>& values, size_t i) {
  return i < values.size() ? &values[i] : nullptr;
}

// One input of a data set: a tensor, a sequence of tensors, or an optional without value.
struct TestInput {
  std::string name;
  OnnxTestValue value;
};

// CastLike cases of ONNX 1.12 feed 'like' as shape (1) to an input declared (3, 4). ONNX's
// runners do not enforce declared input shapes, so here the data set's shape wins: an input
// whose data has another rank than declared is declared with the data's shape before the
// import (the importer rightly refuses a --shape of another rank from a user).
OnnxModel import_with_data_ranks(const fs::path& model_path, const OnnxImportOptions& options) {
  onnx::ModelProto model;
  std::ifstream in(model_path, std::ios::binary);
  if (!in || !model.ParseFromIstream(&in)) return from_onnx_file(model_path.string(), options);
  bool changed = false;
  for (auto& input : *model.mutable_graph()->mutable_input()) {
    auto given = options.shapes.find(input.name());
    if (given == options.shapes.end() || !input.type().has_tensor_type() || !input.type().tensor_type().has_shape())
      continue;
    if (static_cast<size_t>(input.type().tensor_type().shape().dim_size()) == given->second.size()) continue;
    auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t d : given->second) shape->add_dim()->set_dim_value(d);
    changed = true;
  }
  if (!changed) return from_onnx_file(model_path.string(), options);
  return from_onnx_bytes(model.SerializeAsString(), options, model_path.string(), model_path.parent_path().string());
}

// Imports with the data set's input shapes; the tensor inputs from `first_baked` on are
// fixed to the data set's values instead (baked). Sequences stay inputs (their element
// shapes are given); absent optionals are declared absent.
OnnxModel import_baking_from(const fs::path& model_path, const std::vector<TestInput>& inputs, size_t first_baked) {
  OnnxImportOptions options;
  options.freeze_params = true;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& [name, value] = inputs[i];
    if (value.kind == "none") {
      options.absent_inputs.insert(name);
    } else if (value.kind == "sequence") {
      for (const NDArray& t : value.tensors) options.sequence_shapes[name].push_back(t.shape());
      options.sequence_shapes.emplace(name, std::vector<Shape>{});
    } else if (i < first_baked) {
      options.shapes[name] = value.tensors[0].shape();
    } else {
      options.fixed_inputs[name] = value.tensors[0];
    }
  }
  return import_with_data_ranks(model_path, options);
}

// The flat outputs of a compiled model regrouped as `type` (tuples for sequences and several outputs).
Value unflatten(const Type& type, const std::vector<NDArray>& flat, size_t& next) {
  if (const auto* tuple = as_tuple(type)) {
    std::vector<Value> fields;
    for (const Type& field : tuple->fields) fields.push_back(unflatten(field, flat, next));
    return Value(std::move(fields));
  }
  check(next < flat.size(), "the compiled model gives fewer outputs than its type has");
  return Value(flat[next++]);
}

Value run_compiled(const OnnxModel& model, const std::vector<Value>& args, const Args& cli_args) {
  std::shared_ptr<const Artifact> artifact =
      compile_and_load({model.module, model.input_names, model.output_names, "model.onnx"}, cli_args);
  GraphExecutor executor(artifact);
  std::vector<NDArray> inputs;
  for (const Value& v : args)
    for (const NDArray& t : v.flatten()) inputs.push_back(t);  // a sequence is one input per element
  std::vector<NDArray> outputs = run_executor(executor, inputs);
  size_t next = 0;
  return unflatten(as_func(model.module.lookup("main")->checked_type())->ret, outputs, next);
}

// Runs one data set and compares every output; "" when all match.
std::string run_data_set(const fs::path& model_path, const fs::path& set, const OnnxGraphSummary& summary,
                         const Tolerance& tol, const Args& cli_args, size_t first_baked) {
  std::vector<fs::path> input_files = numbered_files(set, "input_");
  std::vector<fs::path> output_files = numbered_files(set, "output_");
  if (input_files.size() != summary.inputs.size())
    return cat("the data set has ", input_files.size(), " inputs, the model ", summary.inputs.size());
  std::vector<TestInput> inputs;
  for (size_t i = 0; i < input_files.size(); ++i) {
    OnnxTestValue value = read_onnx_value_file(input_files[i].string(), summary.inputs[i].kind);
    for (NDArray& t : value.tensors) t = as_declared(std::move(t), &summary.inputs[i]);
    inputs.push_back({summary.inputs[i].name, std::move(value)});
  }
  OnnxModel model = import_baking_from(model_path, inputs, first_baked);
  std::vector<Value> args;
  for (const std::string& name : model.input_names)
    for (const auto& [input_name, value] : inputs) {
      if (input_name != name) continue;
      if (value.kind == "sequence")
        args.emplace_back(std::vector<Value>(value.tensors.begin(), value.tensors.end()));
      else
        args.emplace_back(value.tensors.at(0));
    }
  Value result = cli_args.get("--engine", "interp") == "compiled" ? run_compiled(model, args, cli_args)
                                                                  : interpret(model.module, "main", args);
  // Sequence outputs are tuples, and with several outputs the result is a tuple of them.
  std::vector<Value> outputs = output_files.size() == 1 ? std::vector<Value>{result} : result.tuple();
  if (output_files.size() > 1 && outputs.size() != output_files.size())
    return cat("the model gives ", outputs.size(), " outputs, the data set has ", output_files.size());
  for (size_t i = 0; i < output_files.size(); ++i) {
    const OnnxValueInfo* declared = declared_at(summary.outputs, i);
    OnnxTestValue expected = read_onnx_value_file(output_files[i].string(), declared ? declared->kind : "tensor");
    std::vector<NDArray> actual = outputs[i].flatten();
    std::string name = i < model.output_names.size() ? model.output_names[i] : cat(i);
    if (actual.size() != expected.tensors.size())
      return cat("output '", name, "' (", set.filename().string(), ") holds ", actual.size(), " tensors, expected ",
                 expected.tensors.size());
    for (size_t k = 0; k < actual.size(); ++k) {
      std::string diff = compare(as_declared(expected.tensors[k], declared), actual[k], tol);
      if (!diff.empty())
        return cat("output '", name, "'", expected.kind == "sequence" ? cat(" element ", k) : "", " (",
                   set.filename().string(), "): ", diff);
    }
  }
  return "";
}

// Runs every data set of the case with the tensor inputs from `first_baked` on baked into the
// model; "" when all pass.
std::string run_data_sets(const fs::path& model_path, const std::vector<fs::path>& sets,
                          const OnnxGraphSummary& summary, const Tolerance& tol, const Args& args, size_t first_baked) {
  try {
    for (const fs::path& set : sets) {
      std::string failure = run_data_set(model_path, set, summary, tol, args, first_baked);
      if (!failure.empty()) return failure;
    }
    return "";
  } catch (const Error& e) {
    return without_file_prefix(e.what(), model_path);
  } catch (const std::bad_alloc&) {
    return "out of memory";
  } catch (const std::exception& e) {
    return e.what();
  }
}

CaseResult run_case(const fs::path& dir, const Args& args) {
  fs::path model_path = dir / "model.onnx";
  if (!fs::exists(model_path)) return {Outcome::kSkipped, "no model.onnx (the model is downloaded separately)"};
  OnnxGraphSummary summary;
  std::vector<fs::path> sets;
  Tolerance tol;
  try {
    summary = summarize_onnx_file(model_path.string());
    std::string skip = skip_reason(dir, summary);
    if (!skip.empty()) return {Outcome::kSkipped, skip};
    sets = data_sets(dir);
    if (sets.empty()) return {Outcome::kSkipped, "no test_data_set_* directory"};
    tol = read_tolerance(dir);
  } catch (const Error& e) {
    return {Outcome::kFailed, without_file_prefix(e.what(), model_path)};
  }
  const size_t num_inputs = summary.inputs.size();
  std::string failure = run_data_sets(model_path, sets, summary, tol, args, num_inputs);
  if (failure.empty()) return {Outcome::kPassed, ""};
  if (!args.has("--bake-inputs")) return {Outcome::kFailed, failure};
  // The inputs after the first (backend cases put the data first), then all of them.
  for (size_t first_baked : {size_t{1}, size_t{0}})
    if (first_baked < num_inputs && run_data_sets(model_path, sets, summary, tol, args, first_baked).empty())
      return {Outcome::kPassedBaked, failure};
  return {Outcome::kFailed, failure};
}

}  // namespace

int cmd_onnx_test(const Args& args) {
  check(!args.positionals().empty(), "onnx-test takes one or more test case directories");
  std::string engine = args.get("--engine", "interp");
  if (engine != "interp" && engine != "compiled")
    throw std::move(Error("unsupported engine").expected("interp or compiled", engine));
  bool verbose = args.has("--verbose");
  int passed = 0, baked = 0, failed = 0, skipped = 0;
  for (const fs::path& dir : collect_cases(args.positionals())) {
    CaseResult r = run_case(dir, args);
    std::string name = dir.filename().string();
    switch (r.outcome) {
      case Outcome::kPassed:
        ++passed;
        if (verbose) std::cout << "PASS " << name << "\n";
        break;
      case Outcome::kPassedBaked:
        ++baked;
        if (verbose) std::cout << "BAKED " << name << ": with inputs at run time: " << r.reason << "\n";
        break;
      case Outcome::kFailed:
        ++failed;
        std::cout << "FAIL " << name << ": " << r.reason << "\n";
        break;
      case Outcome::kSkipped:
        ++skipped;
        if (verbose) std::cout << "SKIP " << name << ": " << r.reason << "\n";
        break;
    }
    std::cout.flush();
  }
  std::cout << passed << " passed, ";
  if (args.has("--bake-inputs")) std::cout << baked << " passed only with baked inputs, ";
  std::cout << failed << " failed, " << skipped << " skipped\n";
  return 0;
}

}  // namespace kiln::cli
