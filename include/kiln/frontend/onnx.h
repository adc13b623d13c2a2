// The ONNX frontend: reads a ModelProto (with ONNX's own protobuf schema and checker) and
// converts its graph into an IRModule whose @main takes the real inputs in ONNX order,
// then the initializers the body uses, plus the initializer values ("params").
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/ir/module.h"
#include "kiln/runtime/ndarray.h"

namespace kiln {

struct OnnxImportOptions {
  // Input shape and dtype overrides by input name (`--shape data=1,3,224,224`).
  std::map<std::string, Shape> shapes;
  std::map<std::string, DType> dtypes;
  // Inputs whose values are known at import time: they become Constants (so e.g. a Reshape
  // shape fed as an input can be read) and are not parameters of @main.
  std::map<std::string, NDArray> fixed_inputs;
  // Sequence-typed inputs: the shape of each element; such an input is a tuple of tensors.
  std::map<std::string, std::vector<Shape>> sequence_shapes;
  // Optional-typed inputs that hold no value.
  std::set<std::string> absent_inputs;
  // Initializers become Constants in the body instead of parameters of @main.
  bool freeze_params = false;
  // Run onnx::checker::check_model before converting.
  bool run_checker = true;
};

struct OnnxModel {
  IRModule module;  // type-checked, entry @main
  // Initializer values for the parameters of @main after the real inputs, in that order.
  std::vector<std::pair<std::string, NDArray>> params;
  std::vector<std::string> input_names;   // real inputs, ONNX order (the first params of @main)
  std::vector<std::string> output_names;  // graph outputs, ONNX order
  std::vector<std::string> warnings;      // e.g. inputs left with unknown dimensions
};

// Errors are kiln::Error naming the file and, when it concerns one node, the node and op.
OnnxModel from_onnx_file(const std::string& path, const OnnxImportOptions& options = {});
// `source` names the model in error messages; `base_dir` is where external data files live.
OnnxModel from_onnx_bytes(std::string_view bytes, const OnnxImportOptions& options = {},
                          const std::string& source = "<memory>", const std::string& base_dir = "");

// @main with the named parameters replaced by Constants of the given values (names not
// among its parameters are an error); the other parameters stay.
IRModule bind_params(const IRModule& mod, const std::vector<std::pair<std::string, NDArray>>& params);

// "data=1,3,224,224" -> {"data", {1, 3, 224, 224}}; "x=" is a scalar. Throws on bad text, naming `flag`.
std::pair<std::string, Shape> parse_shape_override(const std::string& text, const std::string& flag = "--shape");

// A serialized TensorProto file, e.g. test_data_set_0/input_0.pb.
NDArray read_onnx_tensor_file(const std::string& path);

// The value in a backend test's .pb file of the given kind ("tensor", "sequence" or
// "optional", as OnnxValueInfo::kind says): kind "tensor" with one tensor, "sequence" with
// its elements, or "none" (an optional without value) with none.
struct OnnxTestValue {
  std::string kind;
  std::vector<NDArray> tensors;
};
OnnxTestValue read_onnx_value_file(const std::string& path, const std::string& kind);

// What a model's graph declares, without converting it (used by the conformance runner).
struct OnnxValueInfo {
  std::string name;
  std::string kind;       // "tensor", "sequence", "optional", "map", "sparse_tensor" or "unknown"
  std::string elem_type;  // ONNX element type name of a tensor: "float", "int64", "string" ...
  Shape shape;            // of a tensor; unknown dimensions are kAnyDim (-1)
  bool has_shape = false;
};
struct OnnxGraphSummary {
  std::vector<OnnxValueInfo> inputs;  // real inputs (initializers excluded), ONNX order
  std::vector<OnnxValueInfo> outputs;
  std::vector<std::string> op_types;  // distinct, in order of first use
};
OnnxGraphSummary summarize_onnx_file(const std::string& path);

// "Add", "Conv" ... every (domain, op_type) a converter exists for, as "domain:op" for
// domains other than the default one.
std::vector<std::string> supported_onnx_ops();

struct OnnxConverterVersions {
  std::string domain;  // "ai.onnx", "com.microsoft" ...
  std::string op_type;
  std::vector<int> since_versions;  // an implementation per opset where semantics changed
};
std::vector<OnnxConverterVersions> onnx_converter_versions();

}  // namespace kiln
