#include "backend/graph_codegen.h"

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "backend/lower_primitive.h"
#include "kiln/ir/op.h"
#include "kiln/ir/structural.h"
#include "kiln/ir/visit.h"
#include "kiln/runtime/device.h"
#include "kiln/runtime/kernel_registry.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"
#include "kiln/transform/pass.h"
#include "runtime/attrs_json.h"

namespace kiln::backend {
namespace {

// Longer kernel names are cut and made unique with a hash: C compilers and readers both suffer.
constexpr size_t kMaxKernelName = 64;
// DLDeviceType's kDLCPU: the device of values PlanDevices did not place.
constexpr int64_t kCpuDeviceCode = 1;

using Entries = std::vector<GraphEntry>;

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

// "fused_nn_conv2d_add_nn_relu": the ops of the function in evaluation order; a long name ends
// in a hash of the whole function (its parameters bound, so that the name is the same in every
// build).
std::string kernel_base_name(const Function& fn) {
  std::string name = "fused";
  post_order_visit(
      fn->body,
      [&name](const Expr& e) {
        const auto* call = as<CallNode>(e);
        if (call && call->op()) name += "_" + c_identifier(call->op()->name);
      },
      /*enter_functions=*/false);
  if (name.size() > kMaxKernelName) {
    std::string hash = cat(std::hex, structural_hash(Expr(fn)));
    name = name.substr(0, kMaxKernelName - 9) + "_" + hash.substr(0, 8);
  }
  return name;
}

class GraphBuilder {
 public:
  GraphBuilder(const NamedArrays& params, const Target& target, const std::function<void(size_t, size_t)>& on_lowered)
      : target_(target), on_lowered_(on_lowered) {
    for (const auto& [name, value] : params) param_values_.emplace(name, value);
    result_.plan.node_row_ptr.push_back(0);
    plan_ = &result_.plan;
  }

  GraphCodegenResult run(const FunctionNode& main, const std::vector<std::string>& input_names,
                         const std::vector<std::string>& output_names, const std::string& fallback_device) {
    for (const auto& [node, device] : plan_devices(main, fallback_device))
      device_codes_[node] = device_type_code(device);
    add_variables(main, input_names);
    post_order_visit(
        main.body,
        [this](const Expr& e) {
          const auto* call = as<CallNode>(e);
          if (call && !call->op()) ++calls_total_;
        },
        /*enter_functions=*/false);
    visit_graph(main.body, values_);
    result_.plan.heads = values_.at(main.body.get());
    result_.plan.output_names = flat_output_names(main, output_names);
    return std::move(result_);
  }

 private:
  // A tuple-typed input (an ONNX sequence) becomes one graph input per tensor, "name.0", "name.1", ...
  void add_variables(const FunctionNode& main, const std::vector<std::string>& input_names) {
    size_t next_input = 0;
    for (const Var& p : main.params) {
      auto param = param_values_.find(p->name);
      if (param != param_values_.end()) {
        result_.params.emplace_back(p->name, param->second);
        values_[p.get()] = {variable(p->name, p->type_annotation, device_code(p.get()))};
        continue;
      }
      check(next_input < input_names.size(), "more inputs than input names");
      const std::string& name = input_names[next_input++];
      Entries entries;
      std::vector<const TensorTypeNode*> fields;
      flatten_tensor_types(p->type_annotation, fields, "input '" + name + "'");
      const bool is_tuple = as_tuple(p->type_annotation) != nullptr;
      for (size_t i = 0; i < fields.size(); ++i) {
        std::string field_name = is_tuple ? cat(name, ".", i) : name;
        plan_->input_names.push_back(field_name);
        entries.push_back(variable(field_name, tensor_type(fields[i]->shape, fields[i]->dtype), device_code(p.get())));
      }
      values_[p.get()] = entries;
    }
  }

  // Output names, one per graph head: an output that is a tuple (an ONNX sequence) gives "name.0", ...
  static std::vector<std::string> flat_output_names(const FunctionNode& main, const std::vector<std::string>& names) {
    const Type& ret = main.body->checked_type();
    std::vector<Type> per_output;
    if (names.size() == 1)
      per_output = {ret};
    else if (const auto* tuple = as_tuple(ret); tuple && tuple->fields.size() == names.size())
      per_output = tuple->fields;
    else
      throw Error(cat("the model has ", names.size(), " output names for a result of type ", type_str(ret)));
    std::vector<std::string> flat;
    for (size_t i = 0; i < names.size(); ++i) {
      if (!as_tuple(per_output[i])) {
        flat.push_back(names[i]);
        continue;
      }
      for (size_t k = 0; k < flat_size(per_output[i]); ++k) flat.push_back(cat(names[i], ".", k));
    }
    return flat;
  }

  int64_t device_code(const ExprNode* e) const {
    const auto it = device_codes_.find(e);
    return it == device_codes_.end() ? kCpuDeviceCode : it->second;
  }

  // `bound_by_parent`: a sub-graph's parameter, bound to its parent's tensors, may have a
  // run-time shape (a loop's carried value whose extents change across iterations).
  GraphEntry variable(const std::string& name, const Type& type, int64_t device, bool bound_by_parent = false) {
    const TensorTypeNode* tensor = as_tensor(type);
    if (tensor && !tensor->is_static() && !bound_by_parent)
      throw std::move(Error(cat("a tensor of shape ", shape_str(tensor->shape),
                                " has dimensions unknown at compile time; give the input shapes with --shape"))
                          .node(name));
    GraphNode node;
    node.op = "null";
    node.name = name;
    plan_->arg_nodes.push_back(static_cast<int64_t>(plan_->nodes.size()));
    return add_node(std::move(node), type, device).at(0);
  }

  Entries add_node(GraphNode node, const Type& type, int64_t device) {
    std::vector<const TensorTypeNode*> outputs;
    flatten_tensor_types(type, outputs, "a graph value");
    if (node.is_variable()) check(outputs.size() == 1, "input '", node.name, "' is not a tensor");
    GraphPlan& plan = *plan_;
    const auto id = static_cast<int64_t>(plan.nodes.size());
    for (const TensorTypeNode* t : outputs) {
      // Only reference kernels meet run-time shapes (compile_obstacle keeps them from kernels).
      plan.dltype.emplace_back(dtype_name(t->dtype));
      plan.shape.push_back(t->shape);
      plan.device_index.push_back(device);
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

  // The values of the graph being built that `root` needs, in dependency order: not those
  // already in `values` (a sub-graph's inputs), nor those inside an if's branches, which
  // become sub-graphs of their own.
  void visit_graph(const Expr& root, ValueMap& values) {
    const std::unordered_set<const ExprNode*> region = region_of(root, values);
    post_order_visit(
        root,
        [&](const Expr& e) {
          if (region.count(e.get())) visit(e, values, false);
        },
        /*enter_functions=*/false);
  }

  static std::unordered_set<const ExprNode*> region_of(const Expr& root, const ValueMap& values) {
    std::unordered_set<const ExprNode*> region;
    std::vector<Expr> stack{root};
    while (!stack.empty()) {
      const Expr e = std::move(stack.back());
      stack.pop_back();
      if (values.count(e.get()) || !region.insert(e.get()).second || as<FunctionNode>(e)) continue;
      if (const auto* branch = as<IfNode>(e)) {
        stack.push_back(branch->cond);
        continue;
      }
      for (Expr& c : children(e)) stack.push_back(std::move(c));
    }
    return region;
  }

  // The values of the enclosing graph that `roots` (an if's branches, a loop's body) read,
  // in a fixed order.
  static std::vector<const ExprNode*> captured_values(std::vector<Expr> roots, const ValueMap& values) {
    std::vector<const ExprNode*> captured;
    std::unordered_set<const ExprNode*> seen;
    std::vector<Expr> stack(roots.rbegin(), roots.rend());
    while (!stack.empty()) {
      const Expr e = std::move(stack.back());
      stack.pop_back();
      if (!seen.insert(e.get()).second || as<FunctionNode>(e)) continue;
      if (values.count(e.get())) {
        captured.push_back(e.get());
        continue;
      }
      std::vector<Expr> kids = children(e);
      for (auto k = kids.rbegin(); k != kids.rend(); ++k) stack.push_back(*k);
    }
    return captured;
  }

  // An `if` becomes a "kiln_if" node running one of two sub-graphs, whose inputs are the
  // values of this graph that the branches read (the node's inputs after the condition).
  Entries if_node(const Expr& e, const IfNode& branch, const ValueMap& values) {
    GraphNode node;
    node.op = std::string(kIfNodeOp);
    node.name = unique_node_name("if");
    node.inputs = values.at(branch.cond.get());
    check_invariant(node.inputs.size() == 1, "graph codegen: an if condition that is not one tensor");
    const std::vector<const ExprNode*> captured = captured_values({branch.then_branch, branch.else_branch}, values);
    for (const ExprNode* v : captured) append(node.inputs, values.at(v));
    const int64_t then_graph = add_subgraph(branch.then_branch, {}, captured, values, node.name);
    const int64_t else_graph = add_subgraph(branch.else_branch, {}, captured, values, node.name);
    node.attrs = {{"then_graph", std::to_string(then_graph)},
                  {"else_graph", std::to_string(else_graph)},
                  {"num_inputs", std::to_string(node.inputs.size())},
                  {"num_outputs", std::to_string(flat_size(e->checked_type()))}};
    return add_node(std::move(node), e->checked_type(), device_code(e.get()));
  }

  // A loop becomes a "kiln_loop" node running its body's sub-graph once per iteration; the
  // body's inputs are its parameters (iteration, condition, carried values), then the values
  // of this graph it reads (the node's inputs after the trip count, condition and initial
  // carried values).
  Entries loop_node(const Expr& e, const LoopNode& loop, const ValueMap& values) {
    GraphNode node;
    node.op = std::string(kLoopNodeOp);
    node.name = unique_node_name("loop");
    for (const Expr& operand : {loop.trip_count, loop.cond}) append(node.inputs, values.at(operand.get()));
    for (const Expr& init : loop.inits) {
      if (!as_tensor(init->checked_type()))
        throw std::move(Error(cat("the graph executor runs loops whose carried values are tensors, found ",
                                  type_str(init->checked_type()), "; run this model with --engine interp"))
                            .node(e->source.empty() ? node.name : e->source));
      append(node.inputs, values.at(init.get()));
    }
    const std::vector<const ExprNode*> captured = captured_values({loop.body->body}, values);
    for (const ExprNode* v : captured) append(node.inputs, values.at(v));
    const int64_t body_graph = add_subgraph(loop.body->body, loop.body->params, captured, values, node.name);
    node.attrs = {{"body_graph", std::to_string(body_graph)},
                  {"num_carried", std::to_string(loop.inits.size())},
                  {"num_inputs", std::to_string(node.inputs.size())},
                  {"num_outputs", std::to_string(flat_size(e->checked_type()))}};
    return add_node(std::move(node), e->checked_type(), device_code(e.get()));
  }

  // Builds `root` into a new sub-graph of the current one: its inputs, named "<node>.0",
  // "<node>.1", ..., are `params` (tensors), then the `captured` values of the outer graph.
  int64_t add_subgraph(const Expr& root, const std::vector<Var>& params, const std::vector<const ExprNode*>& captured,
                       const ValueMap& outer, const std::string& if_name) {
    GraphPlan subgraph;
    subgraph.node_row_ptr.push_back(0);
    GraphPlan* const parent = std::exchange(plan_, &subgraph);
    ValueMap values;
    for (const Var& p : params) {
      std::string name = cat(if_name, ".", subgraph.input_names.size());
      subgraph.input_names.push_back(name);
      values[p.get()] = {variable(name, p->type_annotation, kCpuDeviceCode, true)};
    }
    for (const ExprNode* v : captured) {
      Entries inputs;
      for (const GraphEntry& entry : outer.at(v)) {
        const size_t id = parent->entry_id(entry);
        std::string name = cat(if_name, ".", subgraph.input_names.size());
        subgraph.input_names.push_back(name);
        inputs.push_back(
            variable(name, tensor_type(parent->shape[id], parse_dtype(parent->dltype[id])), parent->device_index[id]));
      }
      values[v] = std::move(inputs);
    }
    try {
      visit_graph(root, values);
    } catch (...) {
      plan_ = parent;
      throw;
    }
    subgraph.heads = values.at(root.get());
    compute_aliased_heads(subgraph);
    plan_ = parent;
    plan_->subgraphs.push_back(std::move(subgraph));
    return static_cast<int64_t>(plan_->subgraphs.size()) - 1;
  }

  // Main's dataflow, and (with `in_function`) the body of a function spread into reference nodes.
  void visit(const Expr& e, ValueMap& values, bool in_function) {
    if (values.count(e.get()) || as<FunctionNode>(e) || as<OpNode>(e)) return;
    if (const auto* c = as<ConstantNode>(e)) {
      std::string name = cat("p", next_constant_++);
      result_.params.emplace_back(name, c->data);
      values[e.get()] = {variable(name, e->checked_type(), in_function ? expansion_device_ : device_code(e.get()))};
    } else if (const auto* call = as<CallNode>(e)) {
      const int64_t device = in_function ? expansion_device_ : device_code(e.get());
      values[e.get()] = in_function || call->op() ? reference_node(e, *call, call_inputs(*call, values), device)
                                                  : lower_call(e, *call, values);
      if (!in_function && !call->op() && on_lowered_) on_lowered_(++calls_lowered_, calls_total_);
    } else if (const auto* tuple = as<TupleNode>(e)) {
      Entries fields;
      for (const Expr& f : tuple->fields) append(fields, values.at(f.get()));
      values[e.get()] = fields;
    } else if (const auto* item = as<TupleGetItemNode>(e)) {
      values[e.get()] = tuple_item(*item, values.at(item->tuple.get()));
    } else if (const auto* branch = as<IfNode>(e)) {
      values[e.get()] = if_node(e, *branch, values);
    } else if (const auto* loop = as<LoopNode>(e)) {
      values[e.get()] = loop_node(e, *loop, values);
    } else if (!as<VarNode>(e)) {
      Error error(
          "the graph executor runs dataflow graphs, If and Loop only: this model keeps a let or a call of a global "
          "function; run it with --engine interp");
      if (!e->source.empty()) error.node(e->source);
      throw error.op(as<LetNode>(e) ? "let" : "function call");
    }
  }

  static void append(Entries& to, const Entries& from) { to.insert(to.end(), from.begin(), from.end()); }

  static Entries tuple_item(const TupleGetItemNode& item, const Entries& all) {
    const auto* tuple = as_tuple(item.tuple->checked_type());
    check_invariant(tuple != nullptr, "graph codegen: tuple index of a value that is not a tuple");
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

  Entries lower_call(const Expr& e, const CallNode& call, const ValueMap& values) {
    Function fn = as_function(call.callee);
    if (!fn || !fn->is_primitive())
      throw Error("the graph executor runs calls of fused functions only; run this model with --engine interp");
    std::vector<Entries> args;
    for (const Expr& a : call.args) args.push_back(values.at(a.get()));
    const int64_t device = device_code(e.get());
    if (is_op_call(fn->body, "device_copy")) return copy_node(e, call_inputs(call, values), device);
    if (keeps_bytes(*fn)) {
      Entries entries = alias_node(e, call_inputs(call, values), device);
      aliased_[{plan_, entries[0].node}] = fn;
      return entries;
    }
    std::string obstacle = compile_obstacle(*fn);
    if (!obstacle.empty()) {
      result_.fallbacks.push_back(cat(kernel_base_name(fn), ": ", obstacle));
      expansion_device_ = device;
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
    if (const double flops = function_flops(*fn); flops > 0)
      node.attrs["flops"] = std::to_string(static_cast<int64_t>(flops));
    return add_node(std::move(node), e->checked_type(), device);
  }

  // Floating-point operations of one run of a fused function: the sum over its calls of ops
  // that count them (OpDef::flops).
  static double function_flops(const FunctionNode& fn) {
    double flops = 0;
    post_order_visit(fn.body, [&](const Expr& e) {
      const auto* call = as<CallNode>(e);
      if (!call || !call->op() || !call->op()->flops) return;
      std::vector<Type> arg_types;
      for (const Expr& a : call->args) arg_types.push_back(a->checked_type());
      flops += call->op()->flops(arg_types, e->checked_type(), call->attrs);
    });
    return flops;
  }

  static bool is_op_call(const Expr& e, std::string_view op) {
    const auto* call = as<CallNode>(e);
    return call && call->op() && call->op()->name == op;
  }

  // A device_copy: the executor copies each input into the output of the same index, on the
  // output's device.
  Entries copy_node(const Expr& e, Entries inputs, int64_t device) {
    GraphNode node;
    node.op = "tvm_op";
    node.name = unique_node_name(std::string(kCopyFuncName));
    node.attrs = {{"func_name", std::string(kCopyFuncName)},
                  {"num_inputs", std::to_string(inputs.size())},
                  {"num_outputs", std::to_string(flat_size(e->checked_type()))},
                  {"flatten_data", "0"}};
    node.inputs = std::move(inputs);
    return add_node(std::move(node), e->checked_type(), device);
  }

  // Whether `fn` only gives its one tensor parameter another shape: a chain of calls whose ops keep
  // the bytes (OpDef::keeps_bytes), static shapes, the same dtype.
  static bool keeps_bytes(const FunctionNode& fn) {
    if (fn.params.size() != 1) return false;
    const auto* in = as_tensor(fn.params[0]->checked_type());
    const auto* out = as_tensor(fn.body->checked_type());
    if (!in || !out || !in->is_static() || !out->is_static() || in->dtype != out->dtype) return false;
    Expr e = fn.body;
    while (const auto* call = as<CallNode>(e)) {
      if (!call->op() || !call->op()->keeps_bytes || call->args.size() != 1) return false;
      std::vector<Type> arg_types = {call->args[0]->checked_type()};
      if (!call->op()->keeps_bytes(arg_types, e->checked_type(), call->attrs)) return false;
      e = call->args[0];
    }
    return e.get() == fn.params[0].get() && num_elements(in->shape) == num_elements(out->shape);
  }

  // A function that keeps its input's bytes: the executor views the input under the output's
  // shape (kAliasFuncName) and the memory plan gives both one storage block.
  Entries alias_node(const Expr& e, Entries inputs, int64_t device) {
    GraphNode node;
    node.op = "tvm_op";
    node.name = unique_node_name(std::string(kAliasFuncName));
    node.attrs = {
        {"func_name", std::string(kAliasFuncName)}, {"num_inputs", "1"}, {"num_outputs", "1"}, {"flatten_data", "0"}};
    node.inputs = std::move(inputs);
    return add_node(std::move(node), e->checked_type(), device);
  }

  // A sub-graph's executor may point its results at its parent's tensors (a loop's carried
  // values), which an alias cannot follow: a sub-graph result is computed, a copy. Then the
  // finished sub-graph's alias nodes are forgotten (its address is reused).
  void compute_aliased_heads(GraphPlan& subgraph) {
    for (const GraphEntry& head : subgraph.heads)
      if (const auto fn = aliased_.find({&subgraph, head.node}); fn != aliased_.end())
        subgraph.nodes[static_cast<size_t>(head.node)].attrs["func_name"] = kernel_for(fn->second);
    std::erase_if(aliased_, [&subgraph](const auto& alias) { return alias.first.first == &subgraph; });
  }

  // The generated kernel for `fn`: an earlier one when structurally equal, else a new one.
  std::string kernel_for(const Function& fn) {
    const Expr as_expr = fn;
    size_t hash = structural_hash(as_expr);
    for (const auto& [other, name] : kernels_[hash])
      if (structural_equal(other, as_expr)) return name;
    std::string base = kernel_base_name(fn), name = base;
    for (int n = 1; !kernel_names_.insert(name).second; ++n) name = cat(base, n);
    try {
      result_.funcs.push_back(lower_primitive(*fn, name, target_));
    } catch (Error& e) {
      throw e.op(name);
    }
    kernels_[hash].emplace_back(as_expr, name);
    return name;
  }

  Entries reference_node(const Expr& e, const CallNode& call, Entries inputs, int64_t device) {
    const OpDef& def = *call.op();
    if (def.name == "device_copy") return copy_node(e, std::move(inputs), device);
    GraphNode node;
    node.op = "tvm_op";
    node.name = unique_node_name("ref_" + c_identifier(def.name));
    check_sizes_its_outputs(call, e->checked_type(), node.name);
    node.attrs = {{"func_name", std::string(kReferenceFuncPrefix) + def.kernel},
                  {"num_inputs", std::to_string(inputs.size())},
                  {"num_outputs", std::to_string(flat_size(e->checked_type()))},
                  {"flatten_data", "0"},
                  {"op_attrs", attrs_to_json(def.normalize(call.attrs))}};
    node.inputs = std::move(inputs);
    return add_node(std::move(node), e->checked_type(), device);
  }

  // The executor leaves a result of run-time shape to the kernel to allocate. The dyn.* kernels,
  // those whose extents depend on the data (unique, argwhere) and those with an output function
  // (Relay's shape functions: KernelRegistry::add_output_fn) do; the rest need static inputs.
  static void check_sizes_its_outputs(const CallNode& call, const Type& result, const std::string& node) {
    if (is_static_type(result) || KernelRegistry::global().sizes_outputs(call.op()->kernel)) return;
    for (const Expr& arg : call.args)
      if (!is_static_type(arg->checked_type()))
        throw std::move(
            Error(cat("dynamic shapes are not compiled yet: node ", call.source.empty() ? node : call.source,
                      " computes ", type_str(result), " from a tensor of run-time shape"))
                .op(call.op()->name));
  }

  static bool is_static_type(const Type& type) {
    if (const auto* t = as_tensor(type)) return t->is_static();
    if (const auto* t = as_tuple(type))
      return std::all_of(t->fields.begin(), t->fields.end(), [](const Type& f) { return is_static_type(f); });
    return true;
  }

  Entries expand_into_reference_nodes(const FunctionNode& fn, const std::vector<Entries>& args) {
    ValueMap values;
    for (size_t i = 0; i < fn.params.size(); ++i) values[fn.params[i].get()] = args[i];
    post_order_visit(
        fn.body, [&](const Expr& e) { visit(e, values, true); }, /*enter_functions=*/false);
    return values.at(fn.body.get());
  }

  const Target& target_;
  const std::function<void(size_t, size_t)>& on_lowered_;
  size_t calls_lowered_ = 0, calls_total_ = 0;
  GraphCodegenResult result_;
  GraphPlan* plan_ = nullptr;  // the graph being built: result_.plan, or a sub-graph of it
  std::map<std::string, NDArray> param_values_;
  ValueMap values_;
  std::unordered_map<size_t, std::vector<std::pair<Expr, std::string>>> kernels_;
  std::set<std::string> kernel_names_;
  std::map<std::string, int> node_names_;
  int next_constant_ = 0;
  std::unordered_map<const ExprNode*, int64_t> device_codes_;         // of main's values
  std::map<std::pair<const GraphPlan*, int64_t>, Function> aliased_;  // alias nodes of the graphs being built
  int64_t expansion_device_ = 0;  // of the function being spread into reference nodes
};

}  // namespace

GraphCodegenResult generate_graph(const FunctionNode& main, const NamedArrays& params,
                                  const std::vector<std::string>& input_names,
                                  const std::vector<std::string>& output_names, const Target& target,
                                  const std::string& fallback_device,
                                  const std::function<void(size_t, size_t)>& on_lowered) {
  return GraphBuilder(params, target, on_lowered).run(main, input_names, output_names, fallback_device);
}

}  // namespace kiln::backend
