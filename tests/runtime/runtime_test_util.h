// Helpers of the runtime tests: temporary folders, error capture, kernel libraries built
// from C source with the system compiler at test time, graph plans written node by node.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kiln/runtime/ndarray.h"
#include "kiln/support/error.h"
#include "runtime/graph_json.h"
#include "test_util.h"

namespace kiln::runtime_test {

// A float32 tensor whose element i is (i % period) * scale + offset: varied inputs whose values a
// failing test's message shows plainly.
inline NDArray ramp(const Shape& shape, float scale, float offset, int64_t period = 7) {
  std::vector<float> values(static_cast<size_t>(num_elements(shape)));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(static_cast<int64_t>(i) % period) * scale + offset;
  return NDArray::from_vector<float>(shape, values);
}

// A fresh directory under /tmp, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln_runtime_XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Runs a shell command; returns its exit status and, in *output, its stdout and stderr.
inline int run_command(const std::string& command, std::string* output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed");
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output->append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Compiles C `source` into the shared library `library` against kiln's kernel ABI header.
inline void compile_library(const std::string& source, const std::string& library) {
  const std::string source_path = library + ".c";
  write_text(source_path, source);
  std::string output;
  const int status = run_command(
      cat("cc -shared -fPIC -O1 -Wall -Werror -I", KILN_SOURCE_DIR, "/include -o ", library, " ", source_path),
      &output);
  std::filesystem::remove(source_path);
  if (status != 0) throw std::runtime_error("cc failed:\n" + output);
}

// A graph plan written node by node, as graph codegen would plan it without sharing storage:
// every entry has a block of its own, or none when its shape is known only at run time.
//
//   PlanBuilder b;
//   int64_t x = b.input("x", {3});
//   b.output(b.call("e", "kiln_ref.exp", {x}, {3}), "y");
//   GraphPlan plan = b.plan();
class PlanBuilder {
 public:
  struct EntryType {
    Shape shape;
    std::string dtype = "float32";
  };

  // A graph input (listed in kiln.inputs); returns its node.
  int64_t input(const std::string& name, Shape shape, const std::string& dtype = "float32") {
    plan_.input_names.push_back(name);
    return param(name, std::move(shape), dtype);
  }
  // A parameter: a "null" node that is not an input, filled from params.bin.
  int64_t param(const std::string& name, Shape shape, const std::string& dtype = "float32") {
    plan_.arg_nodes.push_back(next_node());
    return node(GraphNode{"null", name, {}, {}}, {{std::move(shape), dtype}});
  }
  // A node calling `func` (a generated function or "kiln_ref.<op>") on the first outputs of
  // `inputs`; `op_attrs` is the reference op's attributes as JSON.
  int64_t call(const std::string& name, const std::string& func, const std::vector<int64_t>& inputs, Shape shape,
               const std::string& dtype = "float32", const std::string& op_attrs = "") {
    GraphNode n{"tvm_op", name, {{"func_name", func}, {"num_outputs", "1"}, {"flatten_data", "0"}}, {}};
    if (!op_attrs.empty()) n.attrs["op_attrs"] = op_attrs;
    return node(with_inputs(std::move(n), inputs), {{std::move(shape), dtype}});
  }
  // A "kiln_if" node reading `cond` then `inputs`, running sub-graph then_graph or else_graph.
  int64_t if_node(const std::string& name, int64_t cond, const std::vector<int64_t>& inputs, size_t then_graph,
                  size_t else_graph, std::vector<EntryType> outputs) {
    std::vector<int64_t> all{cond};
    all.insert(all.end(), inputs.begin(), inputs.end());
    GraphNode n{"kiln_if",
                name,
                {{"then_graph", std::to_string(then_graph)},
                 {"else_graph", std::to_string(else_graph)},
                 {"num_outputs", std::to_string(outputs.size())}},
                {}};
    return node(with_inputs(std::move(n), all), std::move(outputs));
  }
  // A "kiln_loop" node reading (trip count, condition, initial carried..., captured...).
  int64_t loop_node(const std::string& name, const std::vector<int64_t>& inputs, size_t body_graph, size_t num_carried,
                    std::vector<EntryType> outputs) {
    GraphNode n{"kiln_loop",
                name,
                {{"body_graph", std::to_string(body_graph)},
                 {"num_carried", std::to_string(num_carried)},
                 {"num_outputs", std::to_string(outputs.size())}},
                {}};
    return node(with_inputs(std::move(n), inputs), std::move(outputs));
  }
  // Makes output `index` of `node` the graph's next output; a sub-graph's are unnamed.
  void output(int64_t node, const std::string& name = "", int64_t index = 0) {
    plan_.heads.push_back({node, index, 0});
    if (!name.empty()) plan_.output_names.push_back(name);
  }
  GraphPlan plan(std::vector<GraphPlan> subgraphs = {}) const {
    GraphPlan plan = plan_;
    plan.subgraphs = std::move(subgraphs);
    return plan;
  }

 private:
  int64_t next_node() const { return static_cast<int64_t>(plan_.nodes.size()); }

  static GraphNode with_inputs(GraphNode n, const std::vector<int64_t>& inputs) {
    n.attrs["num_inputs"] = std::to_string(inputs.size());
    for (int64_t input : inputs) n.inputs.push_back({input, 0, 0});
    return n;
  }

  int64_t node(GraphNode n, std::vector<EntryType> outputs) {
    const int64_t id = next_node();
    plan_.nodes.push_back(std::move(n));
    if (plan_.node_row_ptr.empty()) plan_.node_row_ptr.push_back(0);
    plan_.node_row_ptr.push_back(plan_.node_row_ptr.back() + static_cast<int64_t>(outputs.size()));
    for (EntryType& out : outputs) {
      const bool dynamic = std::any_of(out.shape.begin(), out.shape.end(), [](int64_t d) { return d < 0; });
      plan_.storage_id.push_back(dynamic ? -1 : static_cast<int64_t>(plan_.shape.size()));
      plan_.shape.push_back(std::move(out.shape));
      plan_.dltype.push_back(std::move(out.dtype));
    }
    return id;
  }

  GraphPlan plan_;
};

}  // namespace kiln::runtime_test
