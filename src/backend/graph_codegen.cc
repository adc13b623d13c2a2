#include "backend/graph_codegen.h"

#include <map>
#include <set>
#include <unordered_map>

#include "backend/lower_primitive.h"
#include "kiln/ir/op.h"
#include "kiln/ir/structural.h"
#include "kiln/ir/visit.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"
#include "runtime/attrs_json.h"

namespace kiln::backend {
namespace {

// Longer kernel names are cut and made unique with a hash: C compilers and readers both suffer.
constexpr size_t kMaxKernelName = 64;

using Entries = std::vector<GraphEntry>;

std::string c_identifier(const std::string& text) {
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

void flatten_tensor_types(const Type& type, std::vector<const TensorTypeNode*>& out, const std::string& what) {
  if (const auto* tuple = as_tuple(type)) {
    for (const Type& field : tuple->fields) flatten_tensor_types(field, out, what);
    return;
  }
  out.push_back(&expect_tensor(type, what));
}

size_t flat_size(const Type& type) {
  std::vector<const TensorTypeNode*> fields;
  flatten_tensor_types(type, fields, "a value");
  return fields.size();
}

// "fused_nn_conv2d_add_nn_relu": the ops of the function in evaluation order.
std::string kernel_base_name(const FunctionNode& fn) {
  std::string name = "fused";
  post_order_visit(
      fn.body,
      [&name](const Expr& e) {
        const auto* call = as<CallNode>(e);
        if (call && call->op()) name += "_" + c_identifier(call->op()->name);
      },
      /*enter_functions=*/false);
  if (name.size() > kMaxKernelName) {
    std::string hash = cat(std::hex, structural_hash(std::static_pointer_cast<const ExprNode>(fn.body)));
    name = name.substr(0, kMaxKernelName - 9) + "_" + hash.substr(0, 8);
  }
  return name;
}

class GraphBuilder {
 public:
  GraphBuilder(const NamedArrays& params, const Target& target) : target_(target) {
    for (const auto& [name, value] : params) param_values_.emplace(name, value);
    result_.plan.node_row_ptr.push_back(0);
  }

  GraphCodegenResult run(const FunctionNode& main, const std::vector<std::string>& input_names,
                         const std::vector<std::string>& output_names) {
    add_variables(main, input_names);
    post_order_visit(main.body, [this](const Expr& e) { visit(e, values_, false); }, /*enter_functions=*/false);
    result_.plan.heads = values_.at(main.body.get());
    result_.plan.output_names = output_names;
    check(output_names.size() == result_.plan.heads.size(), "the model has ", result_.plan.heads.size(),
          " outputs but ", output_names.size(), " output names");
    result_.plan.device_index.assign(result_.plan.num_entries(), 1);  // kDLCPU, as TVM writes
    return std::move(result_);
  }

 private:
  void add_variables(const FunctionNode& main, const std::vector<std::string>& input_names) {
    size_t next_input = 0;
    for (const Var& p : main.params) {
      auto param = param_values_.find(p->name);
      std::string name;
      if (param != param_values_.end()) {
        name = p->name;
        result_.params.emplace_back(name, param->second);
      } else {
        check(next_input < input_names.size(), "more inputs than input names");
        name = input_names[next_input++];
        result_.plan.input_names.push_back(name);
      }
      values_[p.get()] = {variable(name, p->type_annotation)};
    }
  }

  GraphEntry variable(const std::string& name, const Type& type) {
    GraphNode node;
    node.op = "null";
    node.name = name;
    result_.plan.arg_nodes.push_back(static_cast<int64_t>(result_.plan.nodes.size()));
    return add_node(std::move(node), type).at(0);
  }

  Entries add_node(GraphNode node, const Type& type) {
    std::vector<const TensorTypeNode*> outputs;
    flatten_tensor_types(type, outputs, "a graph value");
    if (node.is_variable()) check(outputs.size() == 1, "input '", node.name, "' is not a tensor");
    GraphPlan& plan = result_.plan;
    const auto id = static_cast<int64_t>(plan.nodes.size());
    for (const TensorTypeNode* t : outputs) {
      if (!t->is_static())
        throw std::move(Error(cat("a tensor of shape ", shape_str(t->shape),
                                  " has dimensions unknown at compile time; give the input shapes with --shape"))
                            .node(node.name));
      plan.dltype.emplace_back(dtype_name(t->dtype));
      plan.shape.push_back(t->shape);
    }
    plan.nodes.push_back(std::move(node));
    plan.node_row_ptr.push_back(plan.node_row_ptr.back() + static_cast<int64_t>(outputs.size()));
    Entries entries;
    for (size_t i = 0; i < outputs.size(); ++i) entries.push_back({id, static_cast<int64_t>(i), 0});
    return entries;
  }

  std::string unique_node_name(const std::string& base) {
    int n = node_names_[base]++;
    return n == 0 ? base : cat(base, n);
  }

  using ValueMap = std::unordered_map<const ExprNode*, Entries>;

  // Main's dataflow, and (with `in_function`) the body of a function spread into reference nodes.
  void visit(const Expr& e, ValueMap& values, bool in_function) {
    if (values.count(e.get()) || as<FunctionNode>(e) || as<OpNode>(e)) return;
    if (const auto* c = as<ConstantNode>(e)) {
      std::string name = cat("p", next_constant_++);
      result_.params.emplace_back(name, c->data);
      values[e.get()] = {variable(name, e->checked_type())};
    } else if (const auto* call = as<CallNode>(e)) {
      values[e.get()] = in_function || call->op() ? reference_node(e, *call, call_inputs(*call, values))
                                                  : lower_call(e, *call);
    } else if (const auto* tuple = as<TupleNode>(e)) {
      Entries fields;
      for (const Expr& f : tuple->fields) append(fields, values.at(f.get()));
      values[e.get()] = fields;
    } else if (const auto* item = as<TupleGetItemNode>(e)) {
      values[e.get()] = tuple_item(*item, values.at(item->tuple.get()));
    } else if (!as<VarNode>(e)) {
      throw Error(
          "the graph executor runs dataflow graphs only: this model keeps control flow (If, Let or a call of a global "
          "function); run it with --engine interp");
    }
  }

  static void append(Entries& to, const Entries& from) { to.insert(to.end(), from.begin(), from.end()); }

  static Entries tuple_item(const TupleGetItemNode& item, const Entries& all) {
    const auto* tuple = as_tuple(item.tuple->checked_type());
    check(tuple != nullptr, "tuple index of a value that is not a tuple");
    size_t offset = 0;
    for (int i = 0; i < item.index; ++i) offset += flat_size(tuple->fields[static_cast<size_t>(i)]);
    size_t count = flat_size(tuple->fields[static_cast<size_t>(item.index)]);
    return Entries(all.begin() + static_cast<std::ptrdiff_t>(offset),
                   all.begin() + static_cast<std::ptrdiff_t>(offset + count));
  }

  static Entries call_inputs(const CallNode& call, const ValueMap& values) {
    Entries inputs;
    for (const Expr& a : call.args) append(inputs, values.at(a.get()));
    return inputs;
  }

  Entries lower_call(const Expr& e, const CallNode& call) {
    Function fn = as_function(call.callee);
    if (!fn || !fn->is_primitive())
      throw Error("the graph executor runs calls of fused functions only; run this model with --engine interp");
    std::vector<Entries> args;
    for (const Expr& a : call.args) args.push_back(values_.at(a.get()));
    std::string obstacle = compile_obstacle(*fn);
    if (!obstacle.empty()) {
      result_.fallbacks.push_back(cat(kernel_base_name(*fn), ": ", obstacle));
      return expand_into_reference_nodes(*fn, args);
    }
    std::string func_name = kernel_for(fn);
    GraphNode node;
    node.op = "tvm_op";
    node.name = unique_node_name(func_name);
    Entries inputs;
    for (const Entries& a : args) append(inputs, a);
    node.inputs = inputs;
    size_t num_outputs = flat_size(e->checked_type());
    node.attrs = {{"func_name", func_name},
                  {"num_inputs", std::to_string(inputs.size())},
                  {"num_outputs", std::to_string(num_outputs)},
                  {"flatten_data", "0"}};
    return add_node(std::move(node), e->checked_type());
  }

  // The generated kernel for `fn`: an earlier one when structurally equal, else a new one.
  std::string kernel_for(const Function& fn) {
    const Expr as_expr = fn;
    size_t hash = structural_hash(as_expr);
    for (const auto& [other, name] : kernels_[hash])
      if (structural_equal(other, as_expr)) return name;
    std::string base = kernel_base_name(*fn), name = base;
    for (int n = 1; !kernel_names_.insert(name).second; ++n) name = cat(base, n);
    try {
      result_.funcs.push_back(lower_primitive(*fn, name, target_));
    } catch (Error& e) {
      throw e.op(name);
    }
    kernels_[hash].emplace_back(as_expr, name);
    return name;
  }

  Entries reference_node(const Expr& e, const CallNode& call, Entries inputs) {
    const OpDef& def = *call.op();
    GraphNode node;
    node.op = "tvm_op";
    node.name = unique_node_name("ref_" + c_identifier(def.name));
    node.attrs = {{"func_name", std::string(kReferenceFuncPrefix) + def.kernel},
                  {"num_inputs", std::to_string(inputs.size())},
                  {"num_outputs", std::to_string(flat_size(e->checked_type()))},
                  {"flatten_data", "0"},
                  {"op_attrs", attrs_to_json(def.normalize(call.attrs))}};
    node.inputs = std::move(inputs);
    return add_node(std::move(node), e->checked_type());
  }

  Entries expand_into_reference_nodes(const FunctionNode& fn, const std::vector<Entries>& args) {
    ValueMap values;
    for (size_t i = 0; i < fn.params.size(); ++i) values[fn.params[i].get()] = args[i];
    post_order_visit(fn.body, [&](const Expr& e) { visit(e, values, true); }, /*enter_functions=*/false);
    return values.at(fn.body.get());
  }

  const Target& target_;
  GraphCodegenResult result_;
  std::map<std::string, NDArray> param_values_;
  ValueMap values_;
  std::unordered_map<size_t, std::vector<std::pair<Expr, std::string>>> kernels_;
  std::set<std::string> kernel_names_;
  std::map<std::string, int> node_names_;
  int next_constant_ = 0;
};

}  // namespace

GraphCodegenResult generate_graph(const FunctionNode& main, const NamedArrays& params,
                                  const std::vector<std::string>& input_names,
                                  const std::vector<std::string>& output_names, const Target& target) {
  return GraphBuilder(params, target).run(main, input_names, output_names);
}

}  // namespace kiln::backend
