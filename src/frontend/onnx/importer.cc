// GraphProto -> IRModule, in the order ONNX defines: initializers, graph inputs, nodes
// (topologically), graph outputs. Each node is typed as it is converted, and a node whose
// inputs are all known at import time is evaluated on the spot, so shape computations
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) fold away when input shapes are static.
#include <filesystem>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/graph_eval.h"
#include "frontend/onnx/model_proto.h"
#include "frontend/onnx/tensor_proto.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/support/error.h"
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

bool is_int_or_bool(DType t) { return is_int(t) || t == DType::kBool; }

class GraphImporter {
 public:
  GraphImporter(const onnx::ModelProto& model, const OnnxImportOptions& options, std::string base_dir)
      : model_(model), graph_(model.graph()), options_(options), base_dir_(std::move(base_dir)) {}
  GraphImporter(const GraphImporter&) = delete;
  GraphImporter& operator=(const GraphImporter&) = delete;

  // Nodes free their operands recursively; releasing the latest first keeps that shallow
  // however deep the graph is.
  ~GraphImporter() {
    values_.clear();
    while (!bound_.empty()) bound_.pop_back();
  }

  OnnxModel run() {
    read_opsets();
    check_ops_supported();  // before the checker, which would name only the first unknown op
    if (options_.run_checker) run_onnx_checker(model_);
    add_initializers();
    add_inputs();
    for (int index : topological_order()) convert_node(index);
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
    for (int i = 0; i < graph_.node_size(); ++i) {
      const auto& node = graph_.node(i);
      std::string why = unsupported_reason(node);
      if (why.empty()) continue;
      std::string domain = canonical_domain(node.domain());
      auto it = std::find_if(unsupported.begin(), unsupported.end(),
                             [&](const UnsupportedOp& u) { return u.op_type == node.op_type() && u.domain == domain; });
      if (it == unsupported.end()) it = unsupported.insert(unsupported.end(), {node.op_type(), domain, why, {}, 0});
      if (it->nodes.size() < kNodesNamedPerOp) it->nodes.push_back(node_label(node, i));
      ++it->count;
    }
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
      check(!values_.count(init.name()), "initializer '", init.name(), "' is defined twice");
      NDArray value;
      try {
        value = ndarray_from_tensor_proto(init, base_dir_);
      } catch (const Error& e) {
        throw Error(cat("initializer '", init.name(), "': ", e.what()));
      }
      if (options_.freeze_params) {
        values_[init.name()] = make_constant(value);
        continue;
      }
      Var var = make_var(init.name(), tensor_type(value.shape(), value.dtype()));
      values_[init.name()] = var;
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
      check(!values_.count(in.name()), "graph input '", in.name(), "' is declared twice");
      auto fixed = options_.fixed_inputs.find(in.name());
      if (fixed != options_.fixed_inputs.end()) {
        values_[in.name()] = fixed_input(in, fixed->second);
        continue;
      }
      Var var = make_var(in.name(), input_type(in));
      values_[in.name()] = var;
      input_vars_.push_back(var);
      input_names_.push_back(in.name());
    }
    check_overrides_name_inputs(options_.shapes, "--shape", real_inputs, initializers);
    check_overrides_name_inputs(options_.dtypes, "a dtype override", real_inputs, initializers);
    check_overrides_name_inputs(options_.fixed_inputs, "a fixed input value", real_inputs, initializers);
  }

  // A Constant for an input whose value the caller gives; it must fit the declared type.
  Expr fixed_input(const onnx::ValueInfoProto& in, const NDArray& value) {
    const std::string what = cat("input '", in.name(), "'");
    check(in.type().has_tensor_type(), what, " is a ", value_kind(in.type()), "; kiln supports tensor inputs only");
    DType declared = expect_dtype_from_onnx(in.type().tensor_type().elem_type(), what);
    if (declared != value.dtype())
      throw std::move(Error(cat("the fixed value of ", what, " has the wrong dtype"))
                          .expected(std::string(dtype_name(declared)), std::string(dtype_name(value.dtype()))));
    DeclaredShape shape = declared_shape(in.type().tensor_type());
    if (shape.known_rank && shape.dims.size() != value.shape().size())
      throw std::move(Error(cat("the fixed value of ", what, " has the wrong rank"))
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
    if (!in.type().has_tensor_type())
      throw Error(cat(what, " is a ", value_kind(in.type()), "; kiln supports tensor inputs only"));
    const auto& tensor = in.type().tensor_type();
    auto dtype_override = options_.dtypes.find(in.name());
    DType dtype = dtype_override != options_.dtypes.end() ? dtype_override->second
                                                          : expect_dtype_from_onnx(tensor.elem_type(), what);
    DeclaredShape declared = declared_shape(tensor);
    auto shape_override = options_.shapes.find(in.name());
    if (shape_override != options_.shapes.end())
      return tensor_type(overridden_shape(what, declared, shape_override->second), dtype);
    if (!declared.known_rank)
      throw Error(cat(what, " declares no shape, not even a rank; give it with --shape ", in.name(), "=D0,D1,..."));
    if (std::find(declared.dims.begin(), declared.dims.end(), kAnyDim) != declared.dims.end())
      state_.warnings.push_back(cat(what, " has unknown dimensions (", join(declared.names),
                                    "); they stay unknown ('?'). Give static ones with --shape ", in.name(), "=..."));
    return tensor_type(declared.dims, dtype);
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

  // Node indices in an order where every input is produced before it is read: ONNX's own
  // order when it is already sorted. Dangling names and cycles are errors naming nodes.
  std::vector<int> topological_order() const {
    const int n = graph_.node_size();
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < n; ++i) {
      for (const auto& out : graph_.node(i).output()) {
        if (out.empty()) continue;
        if (values_.count(out))
          throw Error(cat("node '", node_label(graph_.node(i), i), "' writes '", out,
                          "', which is already a graph input or initializer"));
        auto [it, fresh] = producer.emplace(out, i);
        if (!fresh)
          throw Error(cat("tensor '", out, "' is written by two nodes, '",
                          node_label(graph_.node(it->second), it->second), "' and '", node_label(graph_.node(i), i),
                          "'"));
      }
    }
    std::vector<int> waiting_for(n, 0);
    std::vector<std::vector<int>> readers(n);
    for (int i = 0; i < n; ++i) {
      std::set<std::string> names(graph_.node(i).input().begin(), graph_.node(i).input().end());
      for (const auto& name : names) {
        if (name.empty() || values_.count(name)) continue;
        auto p = producer.find(name);
        if (p == producer.end())
          throw std::move(Error(cat("input '", name, "' is not produced by any node, initializer or graph input"))
                              .node(node_label(graph_.node(i), i))
                              .op(graph_.node(i).op_type()));
        ++waiting_for[i];
        readers[p->second].push_back(i);
      }
    }
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (int i = 0; i < n; ++i)
      if (waiting_for[i] == 0) ready.push(i);
    std::vector<int> order;
    while (!ready.empty()) {
      int i = ready.top();
      ready.pop();
      order.push_back(i);
      for (int r : readers[i])
        if (--waiting_for[r] == 0) ready.push(r);
    }
    if (static_cast<int>(order.size()) < n) {
      std::vector<std::string> stuck;
      for (int i = 0; i < n && stuck.size() < kNodesNamedPerOp; ++i)
        if (waiting_for[i] > 0) stuck.push_back(node_label(graph_.node(i), i));
      throw Error(cat("the graph has a cycle: ", n - static_cast<int>(order.size()),
                      " nodes wait on each other's outputs, among them ", quoted_list(stuck)));
    }
    return order;
  }

  void convert_node(int index) {
    const onnx::NodeProto& node = graph_.node(index);
    std::string label = node_label(node, index);
    try {
      std::vector<Expr> inputs;
      for (const auto& name : node.input()) inputs.push_back(name.empty() ? nullptr : values_.at(name));
      OnnxAttrs attrs(node.attribute(), base_dir_);
      std::string domain = canonical_domain(node.domain());
      int64_t opset = opsets_.at(domain);
      ConvertContext ctx(node, label, opset, inputs, attrs, state_);
      ConvertResult result = (*registry().find(domain, node.op_type(), opset).fn)(ctx);
      bind_outputs(node, spread_tuple(node, std::move(result.outputs)), foldable(inputs));
    } catch (Error& e) {
      e.node(label).op(node.op_type());
      throw;
    }
  }

  // A converter may return one tuple for a node with several outputs.
  static std::vector<Expr> spread_tuple(const onnx::NodeProto& node, std::vector<Expr> outputs) {
    if (outputs.size() != 1 || node.output_size() <= 1 || !outputs[0]) return outputs;
    const TupleTypeNode* tuple = as_tuple(infer_type_incrementally(outputs[0]));
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
      Expr value = outputs[k];
      infer_type_incrementally(value);
      if (fold) value = fold_constant(value);
      values_[name] = value;
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
    infer_type_incrementally(folded);
    return folded;
  }

  Expr collect_outputs() {
    check(graph_.output_size() > 0, "the graph has no outputs");
    std::vector<Expr> outputs;
    for (const auto& out : graph_.output()) {
      auto it = values_.find(out.name());
      check(it != values_.end(), "graph output '", out.name(), "' is not produced by any node, initializer or input");
      outputs.push_back(it->second);
      output_names_.push_back(out.name());
    }
    return outputs.size() == 1 ? outputs[0] : make_tuple(outputs);
  }

  OnnxModel finish(const Expr& body) {
    infer_type_incrementally(body);
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
  std::unordered_map<std::string, Expr> values_;     // ONNX tensor name -> its expression
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
    return frontend::import_bytes(frontend::read_model_bytes(path), options, base_dir.empty() ? "." : base_dir);
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
    auto it = std::find_if(main->params.begin(), main->params.end(), [&](const Var& p) { return p->name == name; });
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

std::pair<std::string, Shape> parse_shape_override(const std::string& text) {
  size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0)
    throw std::move(Error("malformed --shape").expected("NAME=D0,D1,... such as data=1,3,224,224", "'" + text + "'"));
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
        throw std::move(Error(cat("malformed --shape for '", text.substr(0, eq), "'"))
                            .expected("non-negative integers or ? separated by commas", "'" + dims + "'"));
      shape.push_back(v);
    }
  }
  return {text.substr(0, eq), shape};
}

NDArray read_onnx_tensor_file(const std::string& path) {
  try {
    std::string bytes = frontend::read_model_bytes(path);
    onnx::TensorProto tensor;
    check(tensor.ParseFromString(bytes), "not a serialized onnx.TensorProto (truncated or corrupt)");
    std::string dir = std::filesystem::path(path).parent_path().string();
    return frontend::ndarray_from_tensor_proto(tensor, dir.empty() ? "." : dir);
  } catch (Error& e) {
    e.file(path);
    throw;
  }
}

OnnxGraphSummary summarize_onnx_file(const std::string& path) {
  try {
    onnx::ModelProto model = frontend::parse_model_proto(frontend::read_model_bytes(path));
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
