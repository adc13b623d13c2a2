// Converters turn one ONNX node into IR. A converter is a function of a ConvertContext
// (the node's inputs, typed attributes, opset, and services: types of expressions, input
// values known at import time, warnings) returning one expression per node output.
// They are kept in a registry keyed by (domain, op_type), with one implementation per
// opset version where the op changed; the model's opset picks the highest version not
// above it (the rule of TVM's get_converter).
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "frontend/onnx/attributes.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/expr.h"

namespace kiln::frontend {

// What one import knows besides the expressions: initializer values behind the param
// variables (so converters can read e.g. a Reshape shape stored as an initializer) and the
// warnings collected so far.
struct ImportState {
  std::unordered_map<const VarNode*, NDArray> param_values;
  std::vector<std::string> warnings;
};

// One expression per output of the node. A converter may also return a single expression
// of tuple type for a node with several outputs; the importer splits it.
struct ConvertResult {
  std::vector<Expr> outputs;
  ConvertResult(Expr e) : outputs{std::move(e)} {}
  ConvertResult(std::vector<Expr> es) : outputs(std::move(es)) {}
};

class ConvertContext {
 public:
  ConvertContext(const onnx::NodeProto& node, std::string label, int64_t opset, std::vector<Expr> inputs,
                 const OnnxAttrs& attrs, ImportState& state);

  const std::string& op_type() const { return node_.op_type(); }
  // The node's name, or a description of it when it has none.
  const std::string& node_label() const { return label_; }
  int64_t opset() const { return opset_; }
  const OnnxAttrs& attrs() const { return attrs_; }

  // Inputs as written in the node; an empty name is an absent optional input.
  size_t num_inputs() const { return inputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  Expr input(size_t i) const;           // throws when absent
  Expr optional_input(size_t i) const;  // nullptr when absent
  const std::vector<Expr>& inputs() const { return inputs_; }
  size_t num_outputs() const { return static_cast<size_t>(node_.output_size()); }

  // Types. Inference is incremental (types are cached on nodes), so asking is cheap.
  Type type_of(const Expr& e) const;
  const TensorTypeNode& tensor_type_of(const Expr& e, const std::string& what) const;
  const TensorTypeNode& input_type(size_t i) const;
  const Shape& input_shape(size_t i) const { return input_type(i).shape; }
  int64_t input_rank(size_t i) const { return input_type(i).ndim(); }
  DType input_dtype(size_t i) const { return input_type(i).dtype; }

  // Values known at import time: Constants and initializer params.
  std::optional<NDArray> constant_value(const Expr& e) const;
  std::optional<NDArray> constant_input(size_t i) const;
  // Throws "input i (what) of OP must be known at import time" otherwise.
  NDArray require_constant_input(size_t i, const std::string& what) const;
  std::vector<int64_t> require_ints_input(size_t i, const std::string& what) const;

  void warn(const std::string& message);

  // Converts a graph attribute (the body of If, Loop, Scan) with its inputs bound to `args`
  // (one per graph input); names of the enclosing graphs stay visible. One expression per
  // graph output, nullptr for an optional without a value. Set by the importer.
  using SubgraphConverter = std::function<std::vector<Expr>(const onnx::GraphProto&, const std::vector<Expr>&)>;
  void set_subgraph_converter(SubgraphConverter fn) { subgraph_converter_ = std::move(fn); }
  std::vector<Expr> convert_subgraph(const onnx::GraphProto& graph, const std::vector<Expr>& args) const;

 private:
  const onnx::NodeProto& node_;
  std::string label_;
  int64_t opset_;
  std::vector<Expr> inputs_;
  const OnnxAttrs& attrs_;
  ImportState& state_;
  SubgraphConverter subgraph_converter_;
};

// What a converter returns for an ONNX optional without a value (Optional() with no
// input): the importer binds the name to nothing, so readers see an absent input.
const Expr& optional_none();
bool is_optional_none(const Expr& e);

using ConvertFn = std::function<ConvertResult(ConvertContext&)>;

class ConverterRegistry {
 public:
  // Adds the implementation used from opset `since_version` on, for the default domain
  // (ai.onnx) or a named one.
  ConverterRegistry& add(const std::string& op_type, int since_version, ConvertFn fn);
  ConverterRegistry& add(const std::string& domain, const std::string& op_type, int since_version, ConvertFn fn);

  enum class Match { kFound, kUnknownOp, kOpsetTooLow };
  struct Lookup {
    Match match = Match::kUnknownOp;
    const ConvertFn* fn = nullptr;
    int since_version = 0;   // of the chosen implementation
    int lowest_version = 0;  // of the oldest implementation (for the opset-too-low message)
  };
  Lookup find(const std::string& domain, const std::string& op_type, int64_t opset) const;

  // "Add", "com.microsoft:FusedConv" ...
  std::vector<std::string> op_names() const;
  // The opset versions each (domain, op_type) has an implementation from, ascending.
  std::vector<OnnxConverterVersions> versions() const;

  // The registry with every built-in converter family, built on first use.
  static const ConverterRegistry& builtin();

 private:
  std::map<std::pair<std::string, std::string>, std::map<int, ConvertFn>> table_;
};

// "" for ai.onnx (both spellings name the default domain).
std::string canonical_domain(const std::string& domain);
// "ai.onnx" for the default domain, else the domain itself (for messages).
std::string domain_label(const std::string& domain);

// The list of converter families (src/frontend/onnx/converters/register_converters.cc).
void register_builtin_converters(ConverterRegistry& registry);

}  // namespace kiln::frontend
