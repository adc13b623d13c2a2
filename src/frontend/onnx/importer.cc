// GraphProto -> IRModule, in the order ONNX defines: initializers, graph inputs, nodes
// (topologically), graph outputs. Each node is typed as it is converted, and a node whose
// inputs are all known at import time is evaluated on the spot, so shape computations
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) fold away when input shapes are static.
#include <onnx/onnx-data_pb.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/graph_eval.h"
#include "frontend/onnx/model_proto.h"
#include "frontend/onnx/node_order.h"
#include "frontend/onnx/tensor_proto.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/limits.h"
#include "kiln/support/strings.h"
#include "transform/substitute.h"

namespace kiln {

namespace frontend {

namespace {

// Folding a result larger than this would copy weights into the module, not shapes.
constexpr int64_t kFoldElementLimit = int64_t{1} << 16;
// How many node names an unsupported-op report lists per op.
constexpr size_t kNodesNamedPerOp = 3;

struct UnsupportedOp {
  std::string op_type, domain, why;
  std::vector<std::string> nodes;
  size_t count = 0;
};

std::string quoted_list(const std::vector<std::string>& names) {
  std::vector<std::string> quoted;
  for (const auto& n : names) quoted.push_back("'" + n + "'");
  return join(quoted);
}

// ONNX's declared shape of a tensor value: extents, with unknown dims as kAnyDim and their
// printable names ("batch", "?").
struct DeclaredShape {
  bool known_rank = false;
  Shape dims;
  std::vector<std::string> names;
};

DeclaredShape declared_shape(const onnx::TypeProto_Tensor& t) {
  DeclaredShape out;
  if (!t.has_shape()) return out;
  out.known_rank = true;
  for (const auto& d : t.shape().dim()) {
    bool known = d.has_dim_value() && d.dim_value() >= 0;
    out.dims.push_back(known ? d.dim_value() : kAnyDim);
    out.names.push_back(known ? cat(d.dim_value()) : d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : "?");
  }
  return out;
}

std::string value_kind(const onnx::TypeProto& t) {
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType: return "tensor";
    case onnx::TypeProto::kSequenceType: return "sequence";
    case onnx::TypeProto::kOptionalType: return "optional";
    case onnx::TypeProto::kMapType: return "map";
    case onnx::TypeProto::kSparseTensorType: return "sparse_tensor";
    default: return "unknown";
  }
}

// How deep subgraphs nest inside `graph` (0: none). Protobuf's own recursion limit bounds
// the recursion here.
int64_t subgraph_depth(const onnx::GraphProto& graph) {
  int64_t deepest = 0;
  for (const auto& node : graph.node())
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) deepest = std::max(deepest, 1 + subgraph_depth(attr.g()));
      for (const auto& g : attr.graphs()) deepest = std::max(deepest, 1 + subgraph_depth(g));
    }
  return deepest;
}

bool is_int_or_bool(DType t) { return is_int(t) || t == DType::kBool; }

// Whether `shape` has the declared rank and every declared static extent.
bool fits(const Shape& declared, const Shape& shape) {
  if (declared.size() != shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i)
    if (declared[i] != kAnyDim && declared[i] != shape[i]) return false;
  return true;
}

// The names one graph defines. A subgraph (the body of If, Loop, Scan) sees the names of
// the graphs around it. A name bound to nullptr is an optional without a value.
struct Scope {
  std::unordered_map<std::string, Expr> values;
  const Scope* parent = nullptr;

  const Expr* find(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent) {
      auto it = s->values.find(name);
      if (it != s->values.end()) return &it->second;
    }
    return nullptr;
  }
  bool defines(const std::string& name) const { return find(name) != nullptr; }
};

class GraphImporter {
 public:
  GraphImporter(const onnx::ModelProto& model, const OnnxImportOptions& options, std::string base_dir)
      : model_(model), graph_(model.graph()), options_(options), base_dir_(std::move(base_dir)) {}
  GraphImporter(const GraphImporter&) = delete;
  GraphImporter& operator=(const GraphImporter&) = delete;

  // Nodes free their operands recursively; releasing the latest first keeps that shallow
  // however deep the graph is.
  ~GraphImporter() {
    root_.values.clear();
    while (!bound_.empty()) bound_.pop_back();
  }

  OnnxModel run() {
    check_nesting_depth(subgraph_depth(graph_), "subgraphs (bodies of If, Loop, Scan)");
    read_opsets();
    check_ops_supported();  // before the checker, which would name only the first unknown op
    if (options_.run_checker) run_onnx_checker(model_);
    add_initializers();
    add_inputs();
    for (int index : checked_node_order(graph_)) convert_node(graph_, index);
    return finish(collect_outputs());
  }

 private:
  void read_opsets() {
    for (const auto& entry : model_.opset_import()) opsets_[canonical_domain(entry.domain())] = entry.version();
    // Models before IR version 3 have no opset_import and mean opset 1.
    if (model_.opset_import_size() == 0) opsets_[""] = 1;
  }

  const ConverterRegistry& registry() const { return ConverterRegistry::builtin(); }

  // Every op the model uses that kiln cannot convert, reported together before any work.
  void check_ops_supported() {
    std::vector<UnsupportedOp> unsupported;
    for_each_node(graph_, [&](const onnx::NodeProto& node, int i) {
      std::string why = unsupported_reason(node);
      if (why.empty()) return;
      std::string domain = canonical_domain(node.domain());
      auto it = std::find_if(unsupported.begin(), unsupported.end(),
                             [&](const UnsupportedOp& u) { return u.op_type == node.op_type() && u.domain == domain; });
      if (it == unsupported.end()) it = unsupported.insert(unsupported.end(), {node.op_type(), domain, why, {}, 0});
      if (it->nodes.size() < kNodesNamedPerOp) it->nodes.push_back(node_label(node, i));
      ++it->count;
    });
    if (unsupported.empty()) return;
    std::vector<std::string> parts;
    for (const auto& u : unsupported) {
      std::string nodes = cat(u.count == 1 ? "node " : "nodes ", quoted_list(u.nodes));
      if (u.count > u.nodes.size()) nodes += cat(" and ", u.count - u.nodes.size(), " more");
      parts.push_back(cat(u.op_type, " (domain ", domain_label(u.domain), ", ", u.why, "; ", nodes, ")"));
    }
    throw Error(
        cat(unsupported.size() == 1 ? "unsupported ONNX op: " : cat(unsupported.size(), " unsupported ONNX ops: "),
            join(parts, "; ")));
  }

  // "" when the node can be converted.
  std::string unsupported_reason(const onnx::NodeProto& node) const {
    std::string domain = canonical_domain(node.domain());
    auto opset = opsets_.find(domain);
    if (opset == opsets_.end()) return "the model imports no opset for this domain";
    auto found = registry().find(domain, node.op_type(), opset->second);
    switch (found.match) {
      case ConverterRegistry::Match::kFound: return "";
      case ConverterRegistry::Match::kUnknownOp: return cat("opset ", opset->second, ": no converter");
      case ConverterRegistry::Match::kOpsetTooLow:
        return cat("opset ", opset->second, ": kiln converts it from opset ", found.lowest_version, " on");
    }
    return "";
  }

  void add_initializers() {
    check(graph_.sparse_initializer_size() == 0, "sparse initializers are not supported");
    for (int i = 0; i < graph_.initializer_size(); ++i) {
      const auto& init = graph_.initializer(i);
      if (init.name().empty()) throw Error(cat("initializer #", i, " has no name; every initializer needs one"));
      check(!scope_->defines(init.name()), "initializer '", init.name(), "' is defined twice");
      NDArray value;
      try {
        value = ndarray_from_tensor_proto(init, base_dir_);
      } catch (const Error& e) {
        throw Error(cat("initializer '", init.name(), "': ", e.what()));
      }
      if (options_.freeze_params) {
        scope_->values[init.name()] = make_constant(value);
        continue;
      }
      Var var = make_var(init.name(), tensor_type(value.shape(), value.dtype()));
      scope_->values[init.name()] = var;
      state_.param_values[var.get()] = value;
      params_.push_back({init.name(), var});
    }
  }

  void add_inputs() {
    std::set<std::string> initializers;
    for (const auto& init : graph_.initializer()) initializers.insert(init.name());
    std::vector<std::string> real_inputs;
    for (const auto& in : graph_.input()) {
      check(!in.name().empty(), "a graph input has no name");
      if (initializers.count(in.name())) continue;  // an initializer with a declared input: a param
      real_inputs.push_back(in.name());
      check(!scope_->defines(in.name()), "graph input '", in.name(), "' is declared twice");
      if (options_.absent_inputs.count(in.name())) {
        check(in.type().has_optional_type(), "input '", in.name(), "' is given no value but is a ",
              value_kind(in.type()), ", not an optional");
        scope_->values[in.name()] = nullptr;
        continue;
      }
      auto fixed = options_.fixed_inputs.find(in.name());
      if (fixed != options_.fixed_inputs.end()) {
        scope_->values[in.name()] = fixed_input(in, fixed->second);
        continue;
      }
      Var var = make_var(in.name(), input_type(in));
      scope_->values[in.name()] = var;
      input_vars_.push_back(var);
      input_names_.push_back(in.name());
    }
    check_overrides_name_inputs(options_.shapes, "--shape", real_inputs, initializers);
    check_overrides_name_inputs(options_.dtypes, "a dtype override", real_inputs, initializers);
    check_overrides_name_inputs(options_.fixed_inputs, "a fixed input value", real_inputs, initializers);
    check_overrides_name_inputs(options_.sequence_shapes, "a sequence shape", real_inputs, initializers);
    std::map<std::string, bool> absent;
    for (const auto& name : options_.absent_inputs) absent[name] = true;
    check_overrides_name_inputs(absent, "an absent input", real_inputs, initializers);
  }

  // An optional input with a value is that value.
  static const onnx::TypeProto& value_type(const onnx::ValueInfoProto& in) {
    return in.type().has_optional_type() ? in.type().optional_type().elem_type() : in.type();
  }

  // A sequence input is a tuple of its elements, whose shapes the caller gives.
  Type sequence_input_type(const onnx::ValueInfoProto& in, const onnx::TypeProto_Sequence& sequence) {
    const std::string what = cat("input '", in.name(), "'");
    check(sequence.elem_type().has_tensor_type(), what, " is a sequence of ", value_kind(sequence.elem_type()),
          " values; kiln supports sequences of tensors only");
    const auto& tensor = sequence.elem_type().tensor_type();
    DType dtype = expect_dtype_from_onnx(tensor.elem_type(), what);
    auto given = options_.sequence_shapes.find(in.name());
    if (given == options_.sequence_shapes.end())
      throw Error(cat(what, " is a sequence: kiln needs the number and shapes of its elements"));
    DeclaredShape declared = declared_shape(tensor);
    std::vector<Type> fields;
    for (const Shape& shape : given->second) {
      if (declared.known_rank && declared.dims.size() != shape.size())
        throw std::move(Error(cat("an element of sequence ", what, " has the wrong rank"))
                            .expected(cat("(", join(declared.names), ")"), shape_str(shape)));
      fields.push_back(tensor_type(shape, dtype));
    }
    return tuple_type(std::move(fields));
  }

  // A Constant for an input whose value the caller gives; it must fit the declared type.
  Expr fixed_input(const onnx::ValueInfoProto& in, const NDArray& value) {
    const std::string what = cat("input '", in.name(), "'");
    const onnx::TypeProto& type = value_type(in);
    check(type.has_tensor_type(), what, " is a ", value_kind(type), "; kiln fixes tensor inputs only");
    DType declared = expect_dtype_from_onnx(type.tensor_type().elem_type(), what);
    if (declared != value.dtype())
      throw std::move(Error(cat("the fixed value of ", what, " has the wrong dtype"))
                          .expected(std::string(dtype_name(declared)), std::string(dtype_name(value.dtype()))));
    DeclaredShape shape = declared_shape(type.tensor_type());
    if (shape.known_rank && !fits(shape.dims, value.shape()))
      throw std::move(Error(cat("the fixed value of ", what, " has the wrong shape"))
                          .expected(cat("(", join(shape.names), ")"), shape_str(value.shape())));
    return make_constant(value);
  }

  template <class Map>
  static void check_overrides_name_inputs(const Map& overrides, const std::string& flag,
                                          const std::vector<std::string>& real_inputs,
                                          const std::set<std::string>& initializers) {
    for (const auto& entry : overrides) {
      const std::string& name = entry.first;
      if (std::find(real_inputs.begin(), real_inputs.end(), name) != real_inputs.end()) continue;
      if (initializers.count(name))
        throw Error(cat(flag, " names '", name, "', which is an initializer, not an input"));
      throw std::move(Error(cat(flag, " names '", name, "', which is not an input of the model"))
                          .expected("one of " + quoted_list(real_inputs), "'" + name + "'"));
    }
  }

  Type input_type(const onnx::ValueInfoProto& in) {
    const std::string what = cat("input '", in.name(), "'");
    const onnx::TypeProto& type = value_type(in);
    if (type.has_sequence_type()) return sequence_input_type(in, type.sequence_type());
    if (!type.has_tensor_type())
      throw Error(cat(what, " is a ", value_kind(type), "; kiln supports tensor, sequence and optional inputs only"));
    const auto& tensor = type.tensor_type();
    auto dtype_override = options_.dtypes.find(in.name());
    DType dtype = dtype_override != options_.dtypes.end() ? dtype_override->second
                                                          : expect_dtype_from_onnx(tensor.elem_type(), what);
    DeclaredShape declared = declared_shape(tensor);
    auto shape_override = options_.shapes.find(in.name());
    if (shape_override != options_.shapes.end())
      return limited_tensor_type(overridden_shape(what, declared, shape_override->second), dtype, what);
    if (!declared.known_rank)
      throw Error(cat(what, " declares no shape, not even a rank; give it with --shape ", in.name(), "=D0,D1,..."));
    if (std::find(declared.dims.begin(), declared.dims.end(), kAnyDim) != declared.dims.end())
      state_.warnings.push_back(cat(what, " has unknown dimensions (", join(declared.names),
                                    "); they stay unknown ('?'). Give static ones with --shape ", in.name(), "=..."));
    return limited_tensor_type(declared.dims, dtype, what);
  }

  // An input too large to hold (its known dimensions alone) is refused here, before any
  // pass plans memory for it (kiln/support/limits.h).
  static Type limited_tensor_type(const Shape& shape, DType dtype, const std::string& what) {
    Shape known;
    std::copy_if(shape.begin(), shape.end(), std::back_inserter(known), [](int64_t d) { return d != kAnyDim; });
    check_rank(static_cast<int64_t>(shape.size()), what);
    checked_tensor_elements(known, static_cast<int64_t>(dtype_bytes(dtype)), what);
    return tensor_type(shape, dtype);
  }

  Shape overridden_shape(const std::string& what, const DeclaredShape& declared, const Shape& given) {
    if (!declared.known_rank) return given;
    if (declared.dims.size() != given.size())
      throw std::move(Error(cat("--shape for ", what, " has the wrong rank"))
                          .expected(cat("rank ", declared.dims.size(), " like (", join(declared.names), ")"),
                                    cat("rank ", given.size(), " ", shape_str(given))));
    for (size_t i = 0; i < given.size(); ++i)
      if (declared.dims[i] != kAnyDim && given[i] != declared.dims[i])
        state_.warnings.push_back(cat("--shape for ", what, " sets dimension ", i, " to ", given[i],
                                      " where the model declares ", declared.dims[i]));
    return given;
  }

  // The nodes in an order where every input is produced before it is read (ONNX's own
  // order when it is already sorted), after checking that every name read is defined once.
  std::vector<int> checked_node_order(const onnx::GraphProto& graph) const {
    check_node_count(graph.node_size(), graph.name().empty() ? "the graph" : cat("graph '", graph.name(), "'"));
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < graph.node_size(); ++i) {
      for (const auto& out : graph.node(i).output()) {
        if (out.empty()) continue;
        if (scope_->defines(out))
          throw Error(cat("node '", node_label(graph.node(i), i), "' writes '", out,
                          "', which is already a graph input or initializer"));
        auto [it, fresh] = producer.emplace(out, i);
        if (!fresh)
          throw Error(cat("tensor '", out, "' is written by two nodes, '",
                          node_label(graph.node(it->second), it->second), "' and '", node_label(graph.node(i), i),
                          "'"));
      }
    }
    for (int i = 0; i < graph.node_size(); ++i)
      for (const auto& name : graph.node(i).input())
        if (!name.empty() && !scope_->defines(name) && !producer.count(name))
          throw std::move(Error(cat("input '", name, "' is not produced by any node, initializer or graph input"))
                              .node(node_label(graph.node(i), i))
                              .op(graph.node(i).op_type()));
    return topological_order(graph);
  }

  void convert_node(const onnx::GraphProto& graph, int index) {
    const onnx::NodeProto& node = graph.node(index);
    std::string label = node_label(node, index);
    SourceScope source(label);
    try {
      std::vector<Expr> inputs;
      for (const auto& name : node.input()) inputs.push_back(name.empty() ? nullptr : *scope_->find(name));
      OnnxAttrs attrs(node.attribute(), base_dir_);
      std::string domain = canonical_domain(node.domain());
      int64_t opset = opsets_.at(domain);
      ConvertContext ctx(node, label, opset, inputs, attrs, state_);
      ctx.set_subgraph_converter(
          [this](const onnx::GraphProto& body, const std::vector<Expr>& args) { return convert_subgraph(body, args); });
      ConvertResult result = (*registry().find(domain, node.op_type(), opset).fn)(ctx);
      bind_outputs(node, spread_tuple(node, std::move(result.outputs)), foldable(inputs));
    } catch (Error& e) {
      e.node(label).op(node.op_type());
      throw;
    }
  }

  // The body of If, Loop or Scan, converted with its inputs bound to `args` in a scope
  // nested in the current one; one expression per graph output, nullptr for "no value".
  std::vector<Expr> convert_subgraph(const onnx::GraphProto& graph, const std::vector<Expr>& args) {
    if (static_cast<size_t>(graph.input_size()) != args.size())
      throw std::move(Error(cat("subgraph '", graph.name(), "' has the wrong number of inputs"))
                          .expected(cat(args.size()), cat(graph.input_size())));
    check_nesting_depth(subgraph_depth_ + 1, "subgraphs (bodies of If, Loop, Scan)");
    Scope inner;
    inner.parent = scope_;
    Scope* outer = scope_;
    scope_ = &inner;
    ++subgraph_depth_;
    struct Restore {
      Scope*& current;
      Scope* saved;
      int& depth;
      ~Restore() {
        current = saved;
        --depth;
      }
    } restore{scope_, outer, subgraph_depth_};
    for (const auto& init : graph.initializer())
      inner.values[init.name()] = make_constant(ndarray_from_tensor_proto(init, base_dir_));
    for (int i = 0; i < graph.input_size(); ++i) inner.values[graph.input(i).name()] = args[i];
    for (int index : checked_node_order(graph)) convert_node(graph, index);
    std::vector<Expr> outputs;
    for (const auto& out : graph.output()) {
      const Expr* value = scope_->find(out.name());
      check(value != nullptr, "output '", out.name(), "' of subgraph '", graph.name(),
            "' is not produced by any node, initializer or input");
      outputs.push_back(*value);
    }
    return outputs;
  }

  // A converter may return one tuple for a node with several outputs.
  static std::vector<Expr> spread_tuple(const onnx::NodeProto& node, std::vector<Expr> outputs) {
    if (outputs.size() != 1 || node.output_size() <= 1 || !outputs[0]) return outputs;
    const TupleTypeNode* tuple = as_tuple(infer_untyped_nodes(outputs[0]));
    if (!tuple) return outputs;
    std::vector<Expr> fields;
    for (size_t i = 0; i < tuple->fields.size(); ++i)
      fields.push_back(make_tuple_get_item(outputs[0], static_cast<int>(i)));
    return fields;
  }

  // True when every input is known now: a Constant, or an integer initializer (shapes,
  // indices). Float initializers stay parameters.
  bool foldable(const std::vector<Expr>& inputs) const {
    for (const auto& in : inputs) {
      if (!in || as<ConstantNode>(in)) continue;
      const auto* var = as<VarNode>(in);
      auto it = var ? state_.param_values.find(var) : state_.param_values.end();
      if (it == state_.param_values.end() || !is_int_or_bool(it->second.dtype())) return false;
    }
    return true;
  }

  void bind_outputs(const onnx::NodeProto& node, const std::vector<Expr>& outputs, bool fold) {
    for (int k = 0; k < node.output_size(); ++k) {
      const std::string& name = node.output(k);
      if (name.empty()) continue;
      if (static_cast<size_t>(k) >= outputs.size() || !outputs[k])
        throw Error(cat("output ", k, " ('", name, "') is not produced by kiln's converter, which gives ",
                        outputs.size(), " outputs"));
      if (is_optional_none(outputs[k])) {
        scope_->values[name] = nullptr;
        continue;
      }
      Expr value = outputs[k];
      infer_untyped_nodes(value);
      if (fold) value = fold_constant(value);
      scope_->values[name] = value;
      bound_.push_back(value);
    }
  }

  Expr fold_constant(const Expr& e) const {
    if (as<ConstantNode>(e)) return e;
    const TensorTypeNode* t = as_tensor(e->checked_type());
    if (!t || !t->is_static() || num_elements(t->shape) > kFoldElementLimit) return e;
    std::optional<NDArray> value = evaluate_at_import(e, state_.param_values);
    if (!value) return e;
    Expr folded = make_constant(*value);
    infer_untyped_nodes(folded);
    return folded;
  }

  Expr collect_outputs() {
    check(graph_.output_size() > 0, "the graph has no outputs");
    std::vector<Expr> outputs;
    for (const auto& out : graph_.output()) {
      const Expr* value = scope_->find(out.name());
      check(value != nullptr, "graph output '", out.name(), "' is not produced by any node, initializer or input");
      // An optional without a value is an output of no tensors.
      outputs.push_back(*value ? *value : make_tuple({}));
      output_names_.push_back(out.name());
    }
    return outputs.size() == 1 ? outputs[0] : make_tuple(outputs);
  }

  OnnxModel finish(const Expr& body) {
    infer_untyped_nodes(body);
    std::unordered_set<const VarNode*> used;
    post_order_visit(body, [&](const Expr& e) {
      if (const auto* v = as<VarNode>(e)) used.insert(v);
    });
    OnnxModel model;
    std::vector<Var> params = input_vars_;
    for (const auto& [name, var] : params_) {
      if (!used.count(var.get())) continue;
      params.push_back(var);
      model.params.emplace_back(name, state_.param_values.at(var.get()));
    }
    model.module = infer_types(IRModule::from_function(make_function(params, body)));
    model.input_names = input_names_;
    model.output_names = output_names_;
    model.warnings = state_.warnings;
    return model;
  }

  const onnx::ModelProto& model_;
  const onnx::GraphProto& graph_;
  const OnnxImportOptions& options_;
  std::string base_dir_;
  std::map<std::string, int64_t> opsets_;
  Scope root_;                                       // ONNX names of the main graph -> expressions
  Scope* scope_ = &root_;                            // where names are looked up and bound now
  int subgraph_depth_ = 0;                           // bodies of If / Loop / Scan being converted
  std::vector<Expr> bound_;                          // node outputs in conversion order
  std::vector<std::pair<std::string, Var>> params_;  // initializer params, ONNX order
  std::vector<Var> input_vars_;
  std::vector<std::string> input_names_, output_names_;
  ImportState state_;
};

OnnxModel import_bytes(std::string_view bytes, const OnnxImportOptions& options, const std::string& base_dir) {
  onnx::ModelProto model = parse_model_proto(bytes);
  return GraphImporter(model, options, base_dir).run();
}

OnnxValueInfo value_info(const onnx::ValueInfoProto& v) {
  OnnxValueInfo out;
  out.name = v.name();
  out.kind = value_kind(v.type());
  if (v.type().has_tensor_type()) {
    out.elem_type = onnx_elem_type_name(v.type().tensor_type().elem_type());
    DeclaredShape shape = declared_shape(v.type().tensor_type());
    out.has_shape = shape.known_rank;
    out.shape = shape.dims;
  }
  return out;
}

}  // namespace

}  // namespace frontend

OnnxModel from_onnx_file(const std::string& path, const OnnxImportOptions& options) {
  try {
    std::string base_dir = std::filesystem::path(path).parent_path().string();
    return frontend::import_bytes(FileBytes(path).view(), options, base_dir.empty() ? "." : base_dir);
  } catch (Error& e) {
    e.file(path);
    throw;
  }
}

OnnxModel from_onnx_bytes(std::string_view bytes, const OnnxImportOptions& options, const std::string& source,
                          const std::string& base_dir) {
  try {
    return frontend::import_bytes(bytes, options, base_dir);
  } catch (Error& e) {
    e.file(source);
    throw;
  }
}

IRModule bind_params(const IRModule& mod, const std::vector<std::pair<std::string, NDArray>>& params) {
  const Function& main = mod.lookup("main");
  std::map<const VarNode*, Expr> binding;
  for (const auto& [name, value] : params) {
    // Clang 14 cannot capture a structured binding in a lambda (a C++20 feature it lacks).
    auto it = std::find_if(main->params.begin(), main->params.end(),
                           [&param_name = name](const Var& p) { return p->name == param_name; });
    check(it != main->params.end(), "cannot bind '", name, "': @main has no parameter of that name");
    Type given = tensor_type(value.shape(), value.dtype());
    if (!type_equal((*it)->type_annotation, given))
      throw std::move(Error(cat("cannot bind '", name, "': the value has the wrong type"))
                          .expected(type_str((*it)->type_annotation), type_str(given)));
    binding[it->get()] = make_constant(value);
  }
  std::vector<Var> remaining;
  for (const auto& p : main->params)
    if (!binding.count(p.get())) remaining.push_back(p);
  IRModule out = mod;
  out.add("main", make_function(remaining, substitute(main->body, binding), main->ret_type, main->attrs));
  return infer_types(out);
}

std::pair<std::string, Shape> parse_shape_override(const std::string& text, const std::string& flag) {
  size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0)
    throw std::move(Error("malformed " + flag).expected("NAME=D0,D1,... such as data=1,3,224,224", "'" + text + "'"));
  Shape shape;
  std::string dims = text.substr(eq + 1);
  if (!dims.empty()) {
    for (const std::string& d : split(dims, ',')) {
      if (d == "?") {
        shape.push_back(kAnyDim);
        continue;
      }
      size_t used = 0;
      int64_t v = -1;
      try {
        v = std::stoll(d, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != d.size() || d.empty() || v < 0)
        throw std::move(Error(cat("malformed ", flag, " for '", text.substr(0, eq), "'"))
                            .expected("non-negative integers or ? separated by commas", "'" + dims + "'"));
      shape.push_back(v);
    }
  }
  return {text.substr(0, eq), shape};
}

namespace {

// Protobuf takes an int size; the files read here are test values, far below 2 GiB.
bool parse_message(std::string_view bytes, google::protobuf::MessageLite& message) {
  return bytes.size() < static_cast<size_t>(INT_MAX) &&
         message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

}  // namespace

NDArray read_onnx_tensor_file(const std::string& path) {
  try {
    const FileBytes bytes(path);
    onnx::TensorProto tensor;
    check(parse_message(bytes.view(), tensor), "not a serialized onnx.TensorProto (truncated or corrupt)");
    std::string dir = std::filesystem::path(path).parent_path().string();
    return frontend::ndarray_from_tensor_proto(tensor, dir.empty() ? "." : dir);
  } catch (Error& e) {
    e.file(path);
    throw;
  }
}

namespace {

std::vector<NDArray> sequence_tensors(const onnx::SequenceProto& sequence, const std::string& dir) {
  check(sequence.elem_type() == onnx::SequenceProto::TENSOR || sequence.tensor_values_size() > 0 ||
            sequence.elem_type() == onnx::SequenceProto::UNDEFINED,
        "only sequences of tensors are supported");
  std::vector<NDArray> out;
  for (const auto& t : sequence.tensor_values()) out.push_back(frontend::ndarray_from_tensor_proto(t, dir));
  return out;
}

}  // namespace

OnnxTestValue read_onnx_value_file(const std::string& path, const std::string& kind) {
  try {
    const FileBytes bytes(path);
    std::string dir = std::filesystem::path(path).parent_path().string();
    if (dir.empty()) dir = ".";
    OnnxTestValue out;
    if (kind == "tensor") {
      onnx::TensorProto tensor;
      check(parse_message(bytes.view(), tensor), "not a serialized onnx.TensorProto (truncated or corrupt)");
      out.kind = "tensor";
      out.tensors.push_back(frontend::ndarray_from_tensor_proto(tensor, dir));
    } else if (kind == "sequence") {
      onnx::SequenceProto sequence;
      check(parse_message(bytes.view(), sequence), "not a serialized onnx.SequenceProto (truncated or corrupt)");
      out.kind = "sequence";
      out.tensors = sequence_tensors(sequence, dir);
    } else if (kind == "optional") {
      onnx::OptionalProto optional;
      check(parse_message(bytes.view(), optional), "not a serialized onnx.OptionalProto (truncated or corrupt)");
      if (optional.has_tensor_value()) {
        out.kind = "tensor";
        out.tensors.push_back(frontend::ndarray_from_tensor_proto(optional.tensor_value(), dir));
      } else if (optional.has_sequence_value()) {
        out.kind = "sequence";
        out.tensors = sequence_tensors(optional.sequence_value(), dir);
      } else {
        check(optional.elem_type() != onnx::OptionalProto::MAP && optional.elem_type() != onnx::OptionalProto::OPTIONAL,
              "only optionals of tensors and sequences are supported");
        out.kind = "none";
      }
    } else {
      throw Error(cat("values of kind '", kind, "' are not supported"));
    }
    return out;
  } catch (Error& e) {
    e.file(path);
    throw;
  }
}

OnnxGraphSummary summarize_onnx_file(const std::string& path) {
  try {
    onnx::ModelProto model = frontend::parse_model_proto(FileBytes(path).view());
    const auto& graph = model.graph();
    std::set<std::string> initializers;
    for (const auto& init : graph.initializer()) initializers.insert(init.name());
    OnnxGraphSummary out;
    for (const auto& in : graph.input())
      if (!initializers.count(in.name())) out.inputs.push_back(frontend::value_info(in));
    for (const auto& o : graph.output()) out.outputs.push_back(frontend::value_info(o));
    for (const auto& node : graph.node())
      if (std::find(out.op_types.begin(), out.op_types.end(), node.op_type()) == out.op_types.end())
        out.op_types.push_back(node.op_type());
    return out;
  } catch (Error& e) {
    e.file(path);
    throw;
  }
}

std::vector<std::string> supported_onnx_ops() { return frontend::ConverterRegistry::builtin().op_names(); }

}  // namespace kiln
