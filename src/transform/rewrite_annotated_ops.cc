// RewriteAnnotatedOps: turns on_device annotations into explicit copies, as Relay's
// RewriteAnnotatedOps(fallback_device) did before PlanDevices replaced it.
//   - Every expression of a function gets a device: on_device(e, virtual_device=D) pins e to
//     D; an unpinned projection (t.i) stays where its tuple is, since it moves no data (a
//     pinned one copies the field it takes); everything else (variables included) is on the
//     fallback device.
//   - Where an argument is on another device than its consumer, the consumer reads
//     device_copy(arg, src_device, dst_device) instead. One copy is made per value and
//     destination device, however many consumers there read it.
//   - Constants are never copied: an unpinned constant is put where it is read (a fresh one
//     per further device), which needs no run-time transfer.
//   - The on_device calls disappear.
// A module without on_device is returned unchanged. Functions nested in a body are left as
// they are; let and if in a function with annotations are not supported.
#include <map>
#include <unordered_map>

#include "kiln/attrs/control.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/runtime/device.h"
#include "kiln/support/error.h"
#include "kiln/transform/pass.h"

namespace kiln {
namespace {

bool is_op_call(const Expr& e, std::string_view op) {
  const auto* call = as<CallNode>(e);
  return call && call->op() && call->op()->name == op;
}

// `e` without the on_device calls around it.
Expr strip_on_device(Expr e) {
  while (is_op_call(e, "on_device")) e = as<CallNode>(e)->args.at(0);
  return e;
}

bool has_annotation(const Expr& body) {
  bool found = false;
  post_order_visit(
      body, [&found](const Expr& e) { found = found || is_op_call(e, "on_device"); }, /*enter_functions=*/false);
  return found;
}

class AnnotationRewriter {
 public:
  explicit AnnotationRewriter(std::string fallback) : fallback_(std::move(fallback)) {}

  Function rewrite(const Function& fn) {
    post_order_visit(
        fn->body, [this](const Expr& e) { collect_pin(e); }, /*enter_functions=*/false);
    post_order_visit(
        fn->body, [this](const Expr& e) { memo_[e.get()] = rebuild(e); }, /*enter_functions=*/false);
    SourceScope scope(fn->source);
    return make_function(fn->params, memo_.at(fn->body.get()), fn->ret_type, fn->attrs);
  }

 private:
  void collect_pin(const Expr& e) {
    if (as<LetNode>(e) || as<IfNode>(e))
      throw Error(
          "device annotations in a function with let or if are not supported; the graph executor runs "
          "dataflow graphs only");
    if (!is_op_call(e, "on_device")) return;
    const auto* call = as<CallNode>(e);
    const OnDeviceAttrs attrs = attrs_from<OnDeviceAttrs>(call->attrs, "on_device");
    if (attrs.virtual_device.empty()) return;  // unconstrained
    const std::string device = canonical_device_name(attrs.virtual_device);
    const Expr target = strip_on_device(call->args.at(0));
    auto [it, inserted] = pins_.emplace(target.get(), device);
    if (!inserted && it->second != device) {
      Error error("an expression is annotated with two devices");
      if (!e->source.empty()) error.node(e->source);
      throw std::move(error.op("on_device").expected(it->second, device));
    }
  }

  const std::string& device_of(const Expr& annotated) const {
    const Expr e = strip_on_device(annotated);
    if (auto it = pins_.find(e.get()); it != pins_.end()) return it->second;
    if (const auto* item = as<TupleGetItemNode>(e)) return device_of(item->tuple);
    if (is_op_call(e, "device_copy")) return copy_devices(e).second;
    return fallback_;
  }

  // A device_copy's (source, destination), memoized since device_of returns a reference.
  const std::pair<std::string, std::string>& copy_devices(const Expr& copy) const {
    auto [it, fresh] = copy_devices_.try_emplace(copy.get());
    if (fresh) {
      const auto attrs = attrs_from<DeviceCopyAttrs>(as<CallNode>(copy)->attrs, "device_copy");
      it->second = {canonical_device_name(attrs.src_device), canonical_device_name(attrs.dst_device)};
    }
    return it->second;
  }

  // The device a call reads its arguments on: a device_copy reads on its source device.
  const std::string& reading_device(const Expr& e) const {
    return is_op_call(e, "device_copy") ? copy_devices(e).first : device_of(e);
  }

  Expr rebuild(const Expr& e) {
    SourceScope scope(e->source);
    if (is_op_call(e, "on_device")) return memo_.at(strip_on_device(e).get());
    if (const auto* call = as<CallNode>(e)) {
      const std::string& dst = reading_device(e);
      std::vector<Expr> args;
      for (const Expr& a : call->args) args.push_back(argument(a, dst));
      Expr callee = call->op() || as<GlobalVarNode>(call->callee) ? call->callee : memo_.at(call->callee.get());
      if (callee == call->callee && args == call->args) return e;
      return make_call(callee, std::move(args), call->attrs);
    }
    if (const auto* tuple = as<TupleNode>(e)) {
      std::vector<Expr> fields;
      for (const Expr& f : tuple->fields) fields.push_back(argument(f, device_of(e)));
      return fields == tuple->fields ? e : make_tuple(std::move(fields));
    }
    if (const auto* item = as<TupleGetItemNode>(e)) {
      const Expr& tuple = memo_.at(strip_on_device(item->tuple).get());
      Expr projection = tuple == item->tuple ? e : make_tuple_get_item(tuple, item->index);
      // A projection pinned elsewhere than its tuple copies the field it takes, not the tuple.
      const std::string& src = device_of(item->tuple);
      return src == device_of(e) ? projection : device_copy(projection, src, device_of(e));
    }
    return e;  // variables, constants, globals, nested functions
  }

  // What a consumer on device `dst` reads for `annotated`.
  Expr argument(const Expr& annotated, const std::string& dst) {
    const Expr e = strip_on_device(annotated);
    const Expr& value = memo_.at(e.get());
    if (as<ConstantNode>(e) && !pins_.count(e.get())) return constant_on(e, dst);
    const std::string& src = device_of(e);
    if (src == dst) return value;
    Expr& copy = copies_[{e.get(), dst}];
    if (!copy) copy = device_copy(value, src, dst);
    return copy;
  }

  static Expr device_copy(const Expr& value, const std::string& src, const std::string& dst) {
    DeviceCopyAttrs attrs;
    attrs.src_device = src;
    attrs.dst_device = dst;
    return call_op("device_copy", {value}, attrs);
  }

  Expr constant_on(const Expr& constant, const std::string& dst) {
    auto [placed, first] = constant_device_.emplace(constant.get(), dst);
    if (first || placed->second == dst) return constant;
    Expr& duplicate = copies_[{constant.get(), dst}];
    if (!duplicate) duplicate = make_constant(as<ConstantNode>(constant)->data);
    return duplicate;
  }

  std::string fallback_;
  std::unordered_map<const ExprNode*, std::string> pins_;
  std::unordered_map<const ExprNode*, Expr> memo_;
  std::map<std::pair<const ExprNode*, std::string>, Expr> copies_;
  std::unordered_map<const ExprNode*, std::string> constant_device_;
  mutable std::unordered_map<const ExprNode*, std::pair<std::string, std::string>> copy_devices_;
};

}  // namespace

std::string canonical_device_name(const std::string& name) { return device_type_name(device_type_code(name)); }

std::string fallback_device_of(const PassContext& ctx) {
  const AttrValue* option = ctx.options_of("RewriteAnnotatedOps").find("fallback_device");
  if (!option) return "cpu";
  return option->is_int() ? device_type_name(option->as_int()) : canonical_device_name(option->as_string());
}

IRModule rewrite_annotated_ops_pass(const IRModule& mod, const std::string& fallback_device) {
  bool annotated = false;
  for (const auto& [name, fn] : mod.functions()) annotated = annotated || has_annotation(fn->body);
  if (!annotated) return mod;
  const std::string fallback = canonical_device_name(fallback_device);
  return infer_types(map_functions(mod, [&fallback](const Function& fn) {
    return has_annotation(fn->body) ? AnnotationRewriter(fallback).rewrite(fn) : fn;
  }));
}

}  // namespace kiln
