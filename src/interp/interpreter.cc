// Evaluation is iterative within a function body (an explicit stack over a FramePlan),
// so long chains of ops or lets need no C++ stack; the interpreter recurses only into If
// branches, nested Let values and called functions, as deep as the program nests them,
// on stack segments that DeepStack adds as needed.
//
// Unknown ('?') dimensions: an op call whose types are not fully static runs its type
// relation on the shapes of the actual arguments to size its outputs. This specialises
// every call site to the concrete shapes, including results of functions called with
// shapes their signature leaves open, and costs nothing when the types are static.
#include "kiln/interp/interpreter.h"

#include <cstring>
#include <unordered_map>

#include "interp/deep_stack.h"
#include "interp/frame_plan.h"
#include "interp/value.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/runtime/kernel_registry.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

namespace {

using interp::FramePlan;
using interp::NodeId;
using interp::OpCall;

class Interpreter {
 public:
  explicit Interpreter(const IRModule* mod) : mod_(mod) {}

  Value call(const Closure& closure, const std::vector<Value>& args);
  Value eval_closed(const Expr& e);

  const IRModule* module() const { return mod_; }
  interp::DeepStack& deep_stack() { return deep_stack_; }
  const std::vector<Var>& free_vars(const FunctionNode& fn) {
    auto it = free_vars_.find(&fn);
    if (it == free_vars_.end()) it = free_vars_.emplace(&fn, interp::compute_free_vars(fn)).first;
    return it->second;
  }
  FramePlan& plan_for(const Expr& root) {
    auto it = plans_.find(root.get());
    if (it == plans_.end()) {
      auto plan = interp::build_frame_plan(
          root, [this](const FunctionNode& fn) -> const std::vector<Var>& { return free_vars(fn); });
      it = plans_.emplace(root.get(), std::make_pair(root, std::move(plan))).first;
    }
    return it->second.second;
  }

 private:
  const IRModule* mod_;
  // Keyed by node; the Expr in the value keeps the node (and so the key) alive.
  std::unordered_map<const ExprNode*, std::pair<Expr, FramePlan>> plans_;
  std::unordered_map<const FunctionNode*, std::vector<Var>> free_vars_;
  interp::DeepStack deep_stack_;
};

// One activation of a function body: the value of each planned node, computed at most
// once and dropped as soon as its last user has been computed.
class Frame {
 public:
  Frame(Interpreter& interp, FramePlan& plan)
      : interp_(interp), plan_(plan), values_(plan.nodes.size()), ready_(plan.nodes.size(), 0), users_(plan.users) {}

  // Binds a parameter, let variable or captured variable (no-op when the body never uses it).
  void bind(const Var& var, Value value) {
    if (const NodeId* id = plan_.find(var.get())) set(*id, std::move(value));
  }

  // Every recursion of the interpreter (If branches, Let values, calls) passes here.
  Value eval(NodeId root) {
    return interp_.deep_stack().nested([&] { return eval_here(root); });
  }

 private:
  Value eval_here(NodeId root);
  void set(NodeId id, Value v) {
    values_[id] = std::move(v);
    ready_[id] = 1;
  }
  // One user of `id` is done with it; the last one frees it.
  void release(NodeId id) {
    if (--users_[id] == 0) {
      values_[id] = Value();
      ready_[id] = 0;
    }
  }
  const Value& operand(NodeId id, size_t k) const { return values_[plan_.operands[id][k]]; }

  void compute(NodeId id);
  void eval_let_chain(NodeId id);
  Value eval_if(NodeId id);
  Value eval_loop(NodeId id);
  Value eval_call(NodeId id);
  Value eval_op_call(NodeId id, OpCall& op, const CallNode& call);
  Value make_closure(NodeId id, const Function& fn);

  Interpreter& interp_;
  FramePlan& plan_;
  std::vector<Value> values_;
  std::vector<uint8_t> ready_;
  std::vector<uint32_t> users_;
};

Value Frame::eval_here(NodeId root) {
  std::vector<std::pair<NodeId, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [id, expanded] = stack.back();
    stack.pop_back();
    if (ready_[id]) continue;
    if (expanded) {
      compute(id);
      continue;
    }
    stack.emplace_back(id, true);
    const auto& ops = plan_.operands[id];
    for (size_t k = plan_.eager[id]; k-- > 0;)
      if (!ready_[ops[k]]) stack.emplace_back(ops[k], false);
  }
  return values_[root];
}

void Frame::compute(NodeId id) {
  const Expr& e = plan_.nodes[id];
  Value result;
  switch (e->kind) {
    case ExprKind::kVar:
      throw Error(cat("variable %", as<VarNode>(e)->name, " has no value (a free variable of the expression?)"));
    case ExprKind::kGlobalVar: {
      const std::string& name = as<GlobalVarNode>(e)->name;
      const IRModule* mod = interp_.module();
      if (!mod) throw Error(cat("reference to global function @", name, " without a module"));
      result = Value(std::make_shared<const Closure>(Closure{mod->lookup(name), {}, "@" + name}));
      break;
    }
    case ExprKind::kConstant: result = Value(as<ConstantNode>(e)->data); break;
    case ExprKind::kOp: throw Error(cat("op '", as<OpNode>(e)->name(), "' used as a value"));
    case ExprKind::kCall: result = eval_call(id); break;
    case ExprKind::kTuple: {
      std::vector<Value> fields;
      fields.reserve(plan_.operands[id].size());
      for (size_t k = 0; k < plan_.operands[id].size(); ++k) fields.push_back(operand(id, k));
      result = Value(std::move(fields));
      break;
    }
    case ExprKind::kTupleGetItem: {
      const auto& fields = operand(id, 0).tuple();
      int index = as<TupleGetItemNode>(e)->index;
      if (index < 0 || index >= static_cast<int>(fields.size()))
        throw std::move(Error("tuple index out of range").expected(cat("index below ", fields.size()), cat(index)));
      result = fields[static_cast<size_t>(index)];
      break;
    }
    case ExprKind::kFunction: result = make_closure(id, as_function(e)); break;
    case ExprKind::kLet: eval_let_chain(id); return;  // releases its operands itself
    case ExprKind::kIf: result = eval_if(id); break;
    case ExprKind::kLoop: result = eval_loop(id); break;
  }
  set(id, std::move(result));
  for (NodeId o : plan_.operands[id]) release(o);
}

// A chain `let %a = ..; let %b = ..; body` is walked in a loop, not by recursion, and
// each value is handed to its variable as soon as it is computed.
void Frame::eval_let_chain(NodeId id) {
  std::vector<NodeId> chain;
  NodeId current = id;
  while (plan_.nodes[current]->kind == ExprKind::kLet && !ready_[current]) {
    const auto* let = as<LetNode>(plan_.nodes[current]);
    NodeId value = plan_.operands[current][0];
    bind(let->var, eval(value));
    release(value);
    chain.push_back(current);
    current = plan_.operands[current][1];
  }
  Value result = eval(current);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    set(*it, result);
    release(plan_.operands[*it][1]);
  }
}

Value Frame::eval_if(NodeId id) {
  const NDArray& cond = operand(id, 0).tensor();
  if (cond.numel() != 1)
    throw std::move(Error("if condition must be a single value").expected("1 element", cat(cond.numel())));
  NodeId branch = plan_.operands[id][cond.at(0) != 0 ? 1 : 2];
  return eval(branch);
}

// The scan outputs of each iteration stacked along a new axis 0; with no iteration, an empty
// tensor of the scan's type (its unknown dimensions 0).
NDArray stack_scan(const std::vector<NDArray>& slices, const Type& stacked_type) {
  const TensorTypeNode& type = expect_tensor(stacked_type, "a loop's scan output");
  Shape shape(type.shape.begin() + 1, type.shape.end());
  if (!slices.empty()) shape = slices[0].shape();
  for (int64_t& d : shape) d = std::max<int64_t>(d, 0);
  const size_t slice_bytes = static_cast<size_t>(num_elements(shape)) * dtype_bytes(type.dtype);
  shape.insert(shape.begin(), static_cast<int64_t>(slices.size()));
  NDArray out = NDArray::empty(shape, type.dtype);
  auto* dst = static_cast<uint8_t*>(out.raw());
  for (size_t i = 0; i < slices.size(); ++i) {
    if (slices[i].shape() != slices[0].shape())
      throw std::move(Error("a loop's scan output changes shape between iterations")
                          .expected(shape_str(slices[0].shape()), shape_str(slices[i].shape())));
    if (slice_bytes) std::memcpy(dst + i * slice_bytes, slices[i].raw(), slice_bytes);
  }
  return out;
}

// Operands: trip count, condition, initial carried values, then the body's closure.
Value Frame::eval_loop(NodeId id) {
  const size_t num_operands = plan_.operands[id].size();
  const int64_t trip_count = operand(id, 0).tensor().int_at(0);
  bool cond = operand(id, 1).tensor().int_at(0) != 0;
  const Closure& body = *operand(id, num_operands - 1).closure();
  std::vector<Value> carried;
  for (size_t k = 2; k + 1 < num_operands; ++k) carried.push_back(operand(id, k));
  const auto* result_type = as_tuple(plan_.nodes[id]->checked_type());
  const size_t num_scans = result_type->fields.size() - carried.size();
  std::vector<std::vector<NDArray>> scans(num_scans);
  for (int64_t i = 0; i < trip_count && cond; ++i) {
    std::vector<Value> args{Value(NDArray::scalar(DType::kInt64, static_cast<double>(i))),
                            Value(NDArray::scalar(DType::kBool, 1))};
    args.insert(args.end(), carried.begin(), carried.end());
    const std::vector<Value> out = interp_.call(body, args).tuple();
    cond = out[0].tensor().int_at(0) != 0;
    for (size_t k = 0; k < carried.size(); ++k) carried[k] = out[k + 1];
    for (size_t k = 0; k < num_scans; ++k) scans[k].push_back(out[1 + carried.size() + k].tensor());
  }
  const size_t num_carried = carried.size();
  for (size_t k = 0; k < num_scans; ++k)
    carried.push_back(Value(stack_scan(scans[k], result_type->fields[num_carried + k])));
  return Value(std::move(carried));
}

Value Frame::make_closure(NodeId id, const Function& fn) {
  Closure closure{fn, {}, "a local function"};
  const auto& free = interp_.free_vars(*fn);
  for (size_t k = 0; k < free.size(); ++k) closure.captured.emplace_back(free[k], operand(id, k));
  return Value(std::make_shared<const Closure>(std::move(closure)));
}

Value Frame::eval_call(NodeId id) {
  const auto* call = as<CallNode>(plan_.nodes[id]);
  if (OpCall* op = plan_.op_calls[id].get()) return eval_op_call(id, *op, *call);
  std::vector<Value> args;
  args.reserve(call->args.size());
  for (size_t k = 1; k < plan_.operands[id].size(); ++k) args.push_back(operand(id, k));
  const Value& callee = operand(id, 0);
  if (!callee.is_closure())
    throw Error(cat("calling a value that is not a function: ", interp::value_type_str(callee)));
  return interp_.call(*callee.closure(), args);
}

// Allocates one output per tensor of `type`, in order. An output whose extent depends on
// the data (NonZero, Unique: '?' even for static arguments) is left undefined for the
// kernel to allocate.
void allocate_outputs(const Type& type, std::vector<NDArray>& outputs, const std::string& op) {
  if (const auto* t = as_tensor(type)) {
    outputs.push_back(t->is_static() ? NDArray::empty(t->shape, t->dtype) : NDArray());
    return;
  }
  if (const auto* t = as_tuple(type)) {
    for (const auto& f : t->fields) allocate_outputs(f, outputs, op);
    return;
  }
  throw std::move(Error(cat("op results must be tensors or tuples of tensors, found ", type_str(type))).op(op));
}

// The value the kernel's outputs form, checked against the known part of `type`.
Value assemble_outputs(const Type& type, const std::vector<NDArray>& outputs, size_t& next, const std::string& op) {
  if (const auto* t = as_tuple(type)) {
    std::vector<Value> fields;
    for (const auto& f : t->fields) fields.push_back(assemble_outputs(f, outputs, next, op));
    return Value(std::move(fields));
  }
  const NDArray& out = outputs.at(next++);
  if (!out.defined()) throw std::move(Error(cat("the kernel did not size its output of type ", type_str(type))).op(op));
  if (!interp::value_matches(type, Value(out)))
    throw std::move(Error("the kernel's output does not match the op's type")
                        .op(op)
                        .expected(type_str(type), cat(shape_str(out.shape()), " ", dtype_name(out.dtype()))));
  return Value(out);
}

Value Frame::eval_op_call(NodeId id, OpCall& op, const CallNode& call) {
  const std::string& name = op.def->name;
  std::vector<NDArray> inputs;
  for (size_t k = 0; k < plan_.operands[id].size(); ++k) {
    std::vector<NDArray> flat = operand(id, k).flatten();
    inputs.insert(inputs.end(), flat.begin(), flat.end());
  }
  Type out_type = call.checked_type();
  try {
    if (!op.static_types) {
      std::vector<Type> arg_types;
      for (size_t k = 0; k < plan_.operands[id].size(); ++k) arg_types.push_back(interp::value_type(operand(id, k)));
      out_type = op.def->relation(arg_types, op.attrs);
    }
    if (!op.kernel) op.kernel = &KernelRegistry::global().get(op.def->kernel);
    std::vector<NDArray> outputs;
    allocate_outputs(out_type, outputs, name);
    (*op.kernel)(op.attrs, inputs, outputs);
    size_t next = 0;
    return assemble_outputs(out_type, outputs, next, name);
  } catch (Error& e) {
    e.op(name);
    throw;
  }
}

Value Interpreter::call(const Closure& closure, const std::vector<Value>& args) {
  const FunctionNode& fn = *closure.fn;
  if (args.size() != fn.params.size())
    throw std::move(Error(cat("wrong number of arguments in a call of ", closure.name))
                        .expected(cat(fn.params.size()), cat(args.size())));
  for (size_t i = 0; i < args.size(); ++i) {
    const Var& p = fn.params[i];
    if (!interp::value_matches(p->type_annotation, args[i]))
      throw std::move(Error(cat("argument %", p->name, " of ", closure.name, " has the wrong type"))
                          .expected(type_str(p->type_annotation), interp::value_type_str(args[i])));
  }
  FramePlan& plan = plan_for(fn.body);
  Frame frame(*this, plan);
  for (size_t i = 0; i < args.size(); ++i) frame.bind(fn.params[i], args[i]);
  for (const auto& [var, value] : closure.captured) frame.bind(var, value);
  return frame.eval(plan.root);
}

Value Interpreter::eval_closed(const Expr& e) {
  FramePlan& plan = plan_for(e);
  Frame frame(*this, plan);
  return frame.eval(plan.root);
}

}  // namespace

Value interpret(const IRModule& mod, const std::string& entry, const std::vector<Value>& args) {
  IRModule typed = infer_types(mod);
  const Function& fn = typed.lookup(entry);
  if (args.size() != fn->params.size())
    throw std::move(Error(cat("@", entry, " takes ", fn->params.size(), " arguments"))
                        .expected(cat(fn->params.size()), cat(args.size())));
  for (size_t i = 0; i < args.size(); ++i) {
    const Var& p = fn->params[i];
    if (!interp::value_matches(p->type_annotation, args[i]))
      throw std::move(Error(cat("argument ", i, " for parameter %", p->name, " of @", entry,
                                " does not match the parameter's type"))
                          .expected(type_str(p->type_annotation), interp::value_type_str(args[i])));
  }
  Interpreter interp(&typed);
  return interp.call(Closure{fn, {}, "@" + entry}, args);
}

Value interpret_expr(const Expr& e, const IRModule* mod) {
  infer_expr_type(e, mod);
  Interpreter interp(mod);
  return interp.eval_closed(e);
}

}  // namespace kiln
