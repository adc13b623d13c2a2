// The kiln command line: a subcommand table and the small argument parser they share.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/ir/module.h"

namespace kiln::cli {

// Parsed arguments: positionals in order, and flags (a flag may repeat).
class Args {
 public:
  // `value_flags` take a value (`--shape x=1,2` or `--shape=x=1,2`), `bool_flags` do not;
  // any other flag is an error.
  Args(const std::vector<std::string>& argv, const std::vector<std::string>& value_flags,
       const std::vector<std::string>& bool_flags = {});

  const std::vector<std::string>& positionals() const { return positionals_; }
  bool has(const std::string& flag) const { return flags_.count(flag) > 0; }
  // The last value given, or `fallback`.
  std::string get(const std::string& flag, const std::string& fallback = "") const;
  std::vector<std::string> all(const std::string& flag) const;
  int get_int(const std::string& flag, int fallback) const;

 private:
  std::vector<std::string> positionals_;
  std::multimap<std::string, std::string> flags_;
};

// A model loaded from IR text or (with the ONNX frontend) an .onnx file.
struct LoadedModel {
  IRModule module;
  std::vector<std::string> input_names;   // of @main's parameters that are real inputs
  std::vector<std::string> output_names;  // one per output of @main
  std::string path;                       // the file it was read from, for messages
};

LoadedModel load_model(const std::string& path, const Args& args);

int cmd_print(const Args& args);
int cmd_run(const Args& args);
int cmd_compile(const Args& args);
int cmd_bench(const Args& args);
// Runs ONNX backend test cases (model.onnx + test_data_set_*/); ends with the line
// "N passed, N failed, N skipped".
int cmd_onnx_test(const Args& args);
int cmd_onnx_ops(const Args& args);
// Writes the model as tpu-mlir's Top dialect (NAME_origin.mlir) and its weights (npz).
int cmd_export_mlir(const Args& args);
// Writes a self-contained HTML page drawing the graph before and after fusion (-o FILE).
int cmd_viz(const Args& args);

}  // namespace kiln::cli
