#include "backend/lower_primitive.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <unordered_set>

#include "kiln/ir/op.h"
#include "kiln/ir/visit.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"
#include "kiln/te/lower.h"

namespace kiln::backend {
namespace {

bool codegen_supports(DType dtype) { return dtype != DType::kFloat16 && dtype != DType::kBFloat16; }

// Empty when every tensor in `type` is static, non-empty and of a dtype the C generator writes.
std::string type_obstacle(const Type& type) {
  if (!type) return "an untyped expression";
  if (const auto* tuple = as_tuple(type)) {
    for (const Type& field : tuple->fields)
      if (std::string why = type_obstacle(field); !why.empty()) return why;
    return "";
  }
  const TensorTypeNode* tensor = as_tensor(type);
  if (!tensor) return "a value of type " + type_str(type);
  if (!codegen_supports(tensor->dtype)) return cat("dtype ", dtype_name(tensor->dtype));
  for (int64_t d : tensor->shape) {
    if (d < 0) return "a dimension unknown at compile time";
    if (d == 0) return "an empty tensor";  // nothing to compute; te wants positive extents
  }
  return "";
}

const TensorTypeNode& tensor_type_of(const Expr& e) { return expect_tensor(e->checked_type(), "a fused tensor"); }

class Lowerer {
 public:
  Lowerer(const FunctionNode& fn, const Target& target) : fn_(fn), target_(target) {}

  tir::PrimFunc run(const std::string& name) {
    std::vector<te::Tensor> args;
    for (size_t i = 0; i < fn_.params.size(); ++i) {
      const TensorTypeNode& type = expect_tensor(fn_.params[i]->type_annotation, "a fused function parameter");
      te::Tensor p = te::placeholder(type.shape, type.dtype, c_identifier(fn_.params[i]->name));
      values_[fn_.params[i].get()] = {p};
      args.push_back(p);
    }
    post_order_visit(
        fn_.body, [this](const Expr& e) { visit(e); }, /*enter_functions=*/false);
    std::vector<te::Tensor> outputs = distinct_outputs(values_.at(fn_.body.get()));
    for (const te::Tensor& out : outputs) args.push_back(out);
    try {
      te::Schedule schedule(outputs);
      inline_injective_stages(schedule);
      schedule_anchor(schedule, outputs);
      return te::lower(schedule, args, name);
    } catch (Error& error) {
      // The anchor's schedule arranges the whole group: name its node and op.
      if (const CallInfo* a = anchor()) {
        if (!a->call->source.empty()) error.node(a->call->source);
        error.op(a->call->op()->name);
      }
      throw;
    }
  }

 private:
  struct CallInfo {
    const CallNode* call;
    ComputeInput input;
    std::vector<te::Tensor> outputs;
    const OpStrategy* strategy;
    OpPattern pattern;
  };

  void visit(const Expr& e) {
    if (values_.count(e.get())) return;
    if (const auto* c = as<ConstantNode>(e)) {
      values_[e.get()] = {constant_tensor_of(e, *c)};
    } else if (const auto* call = as<CallNode>(e)) {
      values_[e.get()] = lower_call(e, *call);
    } else if (const auto* tuple = as<TupleNode>(e)) {
      std::vector<te::Tensor> fields;
      for (const Expr& f : tuple->fields) {
        const auto& v = values_.at(f.get());
        fields.insert(fields.end(), v.begin(), v.end());
      }
      values_[e.get()] = fields;
    } else if (const auto* item = as<TupleGetItemNode>(e)) {
      values_[e.get()] = {values_.at(item->tuple.get()).at(static_cast<size_t>(item->index))};
    }
  }

  te::Tensor constant_tensor_of(const Expr& e, const ConstantNode& c) {
    const TensorTypeNode& type = tensor_type_of(e);
    // One value: FuseOps lifts larger constants out as parameters.
    tir::PrimExpr literal =
        is_int(type.dtype) ? tir::int_imm(c.data.int_at(0), type.dtype) : tir::make_const(type.dtype, c.data.at(0));
    return te::compute(type.shape, cat("const", counter_++), [literal](const te::Indices&) { return literal; });
  }

  std::vector<te::Tensor> lower_call(const Expr& e, const CallNode& call) {
    const OpDef& def = *call.op();
    CallInfo info{&call, {}, {}, find_strategy(def), def.pattern};
    for (const Expr& a : call.args) {
      // A tuple argument (concatenate's) contributes one tensor per field.
      for (const te::Tensor& t : values_.at(a.get())) info.input.args.push_back(t);
      info.input.arg_types.push_back(a->checked_type());
    }
    info.input.out_type = e->checked_type();
    info.input.name = cat("T_", c_identifier(def.name), "_", counter_++);
    info.input.target = target_;
    try {
      info.input.attrs = def.normalize(call.attrs);
      info.outputs = info.strategy->compute(info.input);
    } catch (Error& error) {
      if (!call.source.empty()) error.node(call.source);
      throw error.op(def.name);
    }
    calls_.push_back(info);
    return info.outputs;
  }

  // An output must be computed by the function itself, once: copy placeholders and repeats.
  std::vector<te::Tensor> distinct_outputs(const std::vector<te::Tensor>& raw) {
    std::vector<te::Tensor> out;
    for (const te::Tensor& t : raw) {
      bool repeated = std::any_of(out.begin(), out.end(), [&](const te::Tensor& o) { return o.same_as(t); });
      out.push_back(t.op()->is_placeholder || repeated ? copy_of(t) : t);
    }
    return out;
  }

  te::Tensor copy_of(const te::Tensor& t) {
    return te::compute(t.shape(), cat("T_copy_", counter_++),
                       [t](const te::Indices& i) { return t(std::vector<tir::PrimExpr>(i.begin(), i.end())); });
  }

  const CallInfo* anchor() const {
    const CallInfo* best = nullptr;
    for (const CallInfo& c : calls_)
      if (!best || c.pattern >= best->pattern) best = &c;
    return best;
  }

  // Operations computed by the anchor's compute: what its own schedule arranges.
  std::unordered_set<const te::OperationNode*> anchor_operations(const CallInfo& a) const {
    std::unordered_set<const te::OperationNode*> inputs, seen;
    for (const te::Tensor& t : a.input.args) inputs.insert(t.op().get());
    std::vector<te::Tensor> stack = a.outputs;
    while (!stack.empty()) {
      te::Tensor t = stack.back();
      stack.pop_back();
      if (inputs.count(t.op().get()) || !seen.insert(t.op().get()).second) continue;
      for (const te::Tensor& in : t.op()->inputs) stack.push_back(in);
    }
    return seen;
  }

  // An injective anchor (concatenate, or layout_transform, whose schedule arranges the group's
  // outputs) keeps its helper stages (resize's coordinate tables) but not its result: left at the
  // root, that would be a serial pass over memory before the group's output, which can compute it
  // row by row.
  void inline_injective_stages(te::Schedule& schedule) {
    const CallInfo* a = anchor();
    std::unordered_set<const te::OperationNode*> keep = a ? anchor_operations(*a) : decltype(keep){};
    if (a && (!a->strategy->schedule || a->pattern <= OpPattern::kInjective))
      for (const te::Tensor& t : a->outputs) keep.erase(t.op().get());
    for (const auto& stage : schedule.stages()) {
      const te::Operation& op = stage->op();
      if (op->is_placeholder || op->reduce || keep.count(op.get()) || schedule.is_output(stage->tensor())) continue;
      stage->compute_inline();
    }
  }

  void schedule_anchor(te::Schedule& schedule, const std::vector<te::Tensor>& outputs) {
    const CallInfo* a = anchor();
    if (!a) {
      ScheduleInput in{schedule, outputs, outputs, ComputeInput{}, target_};
      schedule_injective(in);
      return;
    }
    ScheduleInput in{schedule, outputs, a->outputs, a->input, target_};
    if (a->strategy->schedule)
      a->strategy->schedule(in);
    else if (a->pattern >= OpPattern::kCommReduce)
      schedule_reduce(in);
    else
      schedule_injective(in);
  }

  const FunctionNode& fn_;
  const Target& target_;
  std::unordered_map<const ExprNode*, std::vector<te::Tensor>> values_;
  std::vector<CallInfo> calls_;
  int counter_ = 0;
};

}  // namespace

std::string c_identifier(const std::string& text) {
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

std::string compile_obstacle(const FunctionNode& fn) {
  std::string why;
  for (const Var& p : fn.params)
    if (why.empty()) why = type_obstacle(p->type_annotation);
  post_order_visit(
      fn.body,
      [&why](const Expr& e) {
        if (!why.empty()) return;
        if (as<VarNode>(e) || as<TupleNode>(e) || as<TupleGetItemNode>(e)) return;
        if (const auto* c = as<ConstantNode>(e)) {
          if (c->data.numel() != 1)
            why = "a tensor constant inside the function";
          else
            why = type_obstacle(e->checked_type());
          return;
        }
        const auto* call = as<CallNode>(e);
        if (!call) {
          why = "an expression that is not a call, tuple or constant";
          return;
        }
        if (as<OpNode>(call->callee)) return;
        if (!call->op()) {
          why = "a call of a function";
          return;
        }
      },
      /*enter_functions=*/false);
  if (!why.empty()) return why;
  post_order_visit(
      fn.body,
      [&why](const Expr& e) {
        const auto* call = as<CallNode>(e);
        if (!why.empty() || !call || !call->op()) return;
        const OpStrategy* strategy = find_strategy(*call->op());
        if (!strategy) {
          why = "op " + call->op()->name + " has no compute";
          return;
        }
        why = type_obstacle(e->checked_type());
        if (why.empty() && strategy->limit) {
          std::vector<Type> arg_types;
          for (const Expr& a : call->args) arg_types.push_back(a->checked_type());
          if (std::string limit = strategy->limit(arg_types, e->checked_type(), call->op()->normalize(call->attrs));
              !limit.empty())
            why = "op " + call->op()->name + ": " + limit;
        }
        for (const Expr& a : call->args)
          if (why.empty()) why = type_obstacle(a->checked_type());
      },
      /*enter_functions=*/false);
  return why;
}

tir::PrimFunc lower_primitive(const FunctionNode& fn, const std::string& name, const Target& target) {
  return Lowerer(fn, target).run(name);
}

}  // namespace kiln::backend
