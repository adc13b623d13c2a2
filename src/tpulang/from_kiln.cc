#include "kiln/tpulang/from_kiln.h"

#include <map>
#include <set>

#include "kiln/attrs/activation.h"
#include "kiln/attrs/nn.h"
#include "kiln/attrs/pad.h"
#include "kiln/attrs/reflect.h"
#include "kiln/attrs/transform.h"
#include "kiln/attrs/unary.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/support/error.h"
#include "kiln/tpulang/ops.h"

namespace kiln::tpulang {
namespace {

const TensorTypeNode& tensor_type_of(const Expr& e) {
  const Type& t = e->checked_type();
  check_invariant(t && t->kind == TypeKind::kTensor, "from_kiln: untyped or non-tensor node");
  return static_cast<const TensorTypeNode&>(*t);
}

// TpuLang's pad order is [top, bottom, left, right].
Ints tpulang_pad(const Padding2D& p) { return {p.top, p.bottom, p.left, p.right}; }

class Importer {
 public:
  Importer(const NamedArrays& params, const std::vector<std::string>& output_names) : output_names_(output_names) {
    for (const auto& [name, array] : params) params_[name] = array;
  }

  TopGraph run(const IRModule& module) {
    IRModule typed = infer_types(module);
    const Function& main = typed.lookup("main");
    TopGraph out;
    out.graph = std::make_unique<Graph>();
    graph_ = out.graph.get();
    reserve_output_names(main->body);
    for (const Var& p : main->params) {
      const TensorTypeNode& t = tensor_type_of(p);
      auto it = params_.find(p->name);
      Tensor tensor = graph_->tensor(t.shape, unique(p->name), dtype_name_of(t.dtype, p->name),
                                     it == params_.end() ? NDArray{} : it->second);
      if (it == params_.end()) out.inputs.push_back(tensor);
      values_[p.get()] = {tensor};
    }
    count_uses(main->body);
    post_order_visit(
        main->body, [&](const Expr& e) { visit(e); }, false);
    out.outputs = values_.at(main->body.get());
    return out;
  }

 private:
  static std::string dtype_name_of(DType t, const std::string& what) {
    const std::string name(kiln::dtype_name(t));
    if (!is_tpulang_dtype(name))
      throw Error(cat("'", what, "' is ", name, "; TpuLang tensors are float32, float16 or 8/16/32-bit integers"))
          .op("tpulang.from_kiln");
    return name;
  }

  // `base`, or `base_N` when a tensor of the graph has that name already.
  std::string unique(const std::string& base) {
    auto taken = [&](const std::string& name) { return used_.count(name) || (graph_ && graph_->has_name(name)); };
    std::string name = base.empty() ? "t" : base;
    for (int i = 1; taken(name); ++i) name = cat(base, "_", i);
    used_.insert(name);
    return name;
  }

  void visit(const Expr& e) {
    if (values_.count(e.get())) return;
    switch (e->kind) {
      case ExprKind::kVar: return;  // parameters are bound; let-bound variables are not supported
      case ExprKind::kConstant: {
        const NDArray& data = as<ConstantNode>(e)->data;
        values_[e.get()] = {
            graph_->tensor(data.shape(), unique("const"), dtype_name_of(data.dtype(), "a constant"), data)};
        return;
      }
      case ExprKind::kTuple: {
        std::vector<Tensor> fields;
        for (const Expr& f : as<TupleNode>(e)->fields) fields.push_back(single(f));
        values_[e.get()] = fields;
        return;
      }
      case ExprKind::kTupleGetItem: {
        const auto* item = as<TupleGetItemNode>(e);
        values_[e.get()] = {values_.at(item->tuple.get()).at(static_cast<size_t>(item->index))};
        return;
      }
      case ExprKind::kCall: {
        const auto* call = as<CallNode>(e);
        if (!call->op()) break;
        if (bias_follows(*call)) return;  // converted with the nn.bias_add that uses it
        auto wanted = output_name_.find(e.get());
        const std::string name =
            wanted != output_name_.end() ? wanted->second : unique(e->source.empty() ? call->op()->name : e->source);
        values_[e.get()] = {convert(*call, e, name)};
        return;
      }
      default: break;
    }
    throw Error("only op calls, tuples and constants convert to TpuLang (no functions, lets or ifs)")
        .op("tpulang.from_kiln");
  }

  // The model's output names go to the calls that compute them (the first output wins when one
  // call is several), and no other tensor may take them.
  void reserve_output_names(const Expr& body) {
    std::vector<Expr> results = body->kind == ExprKind::kTuple ? as<TupleNode>(body)->fields : std::vector<Expr>{body};
    for (size_t i = 0; i < results.size() && i < output_names_.size(); ++i) {
      const std::string& name = output_names_[i];
      if (results[i]->kind != ExprKind::kCall || output_name_.count(results[i].get()) || used_.count(name)) continue;
      output_name_[results[i].get()] = name;
      used_.insert(name);
    }
  }

  void count_uses(const Expr& body) {
    post_order_visit(
        body,
        [&](const Expr& e) {
          for (const Expr& child : children(e)) ++uses_[child.get()];
          if (is_op(e, "nn.bias_add") || is_op(e, "add")) bias_user_[as<CallNode>(e)->args[0].get()] = as<CallNode>(e);
        },
        false);
    ++uses_[body.get()];
  }

  static bool is_op(const Expr& e, const char* name) {
    const auto* call = as<CallNode>(e);
    return call && call->op() && call->op()->name == name;
  }

  // A conv2d whose one use is an nn.bias_add along the channels, or a dense whose one use adds
  // a vector, with a weight for bias, becomes one top.Conv / top.MatMul with that bias, as
  // tpu-mlir's importers write them.
  bool bias_follows(const CallNode& call) const {
    const std::string& op = call.op()->name;
    if (op != "nn.conv2d" && op != "nn.dense") return false;
    auto user = bias_user_.find(&call);
    if (user == bias_user_.end() || uses_.at(&call) != 1) return false;
    const CallNode& bias_user = *user->second;
    if (!is_weight_expr(bias_user.args[1])) return false;
    if (op == "nn.conv2d")
      return bias_user.op()->name == "nn.bias_add" &&
             attrs_from<BiasAddAttrs>(bias_user.attrs, "nn.bias_add").axis == 1;
    const Shape& out = tensor_type_of(bias_user.args[0]).shape;
    return bias_user.op()->name == "add" && tensor_type_of(bias_user.args[1]).shape == Shape{out.back()};
  }

  bool is_weight_expr(const Expr& e) const {
    if (e->kind == ExprKind::kConstant) return true;
    const auto* var = as<VarNode>(e);
    return var && params_.count(var->name);
  }

  Tensor single(const Expr& e) {
    const std::vector<Tensor>& v = values_.at(e.get());
    if (v.size() != 1) throw Error("a tuple used as a tensor").op("tpulang.from_kiln");
    return v[0];
  }

  // A weight reshaped in place, or a top.Reshape of a computed tensor.
  // Exporters share one initializer among layers: each shape of it is one weight.
  Tensor reshaped(const Tensor& t, const Shape& shape) {
    if (!t.is_weight()) return reshape(t, shape);
    if (t.shape() == shape) return t;
    std::string key = t.name();
    for (int64_t d : shape) key += cat("x", d);
    auto it = reshaped_.find(key);
    if (it != reshaped_.end()) return it->second;
    Tensor w = graph_->tensor(shape, unique(t.name() + "_reshaped"), t.dtype(), t.data().reshaped(shape));
    reshaped_.emplace(key, w);
    return w;
  }

  Tensor convert(const CallNode& call, const Expr& e, const std::string& out) {
    const std::string& op = call.op()->name;
    if (op == "nn.bias_add" && is_op(call.args[0], "nn.conv2d") && bias_follows(*as<CallNode>(call.args[0]))) {
      const auto& conv_call = *as<CallNode>(call.args[0]);
      std::vector<Tensor> conv_args = {single(conv_call.args[0]), single(conv_call.args[1])};
      const int64_t channels = tensor_type_of(e).shape[1];
      return conv(conv_call, conv_args, reshaped(single(call.args[1]), {1, channels, 1, 1}), out);
    }
    if (op == "add" && is_op(call.args[0], "nn.dense") && bias_follows(*as<CallNode>(call.args[0]))) {
      const auto& dense = *as<CallNode>(call.args[0]);
      return matmul(single(dense.args[0]), single(dense.args[1]), single(call.args[1]), true, false, false, true, "",
                    out);
    }
    std::vector<Tensor> a;
    for (const Expr& arg : call.args)
      if (arg->kind != ExprKind::kTuple) a.push_back(single(arg));
    const Shape& out_shape = tensor_type_of(e).shape;
    if (op == "nn.pad") {  // exporters write zero pads before pools; anything else has no Top op here
      for (auto [before, after] : attrs_from<PadAttrs>(call.attrs, op).pairs())
        if (before != 0 || after != 0) throw Error("only a pad of zeros converts").op(op).node(out);
      return a[0];
    }
    if (op == "nn.conv2d") return conv(call, a, {}, out);
    if (op == "nn.bias_add") {
      auto b = attrs_from<BiasAddAttrs>(call.attrs, op);
      const int64_t rank = static_cast<int64_t>(out_shape.size());
      const int64_t axis = b.axis < 0 ? b.axis + rank : b.axis;
      Shape shape(static_cast<size_t>(rank), 1);
      shape[static_cast<size_t>(axis)] = out_shape[static_cast<size_t>(axis)];
      return add(a[0], reshaped(a[1], shape), {}, {}, "", out);
    }
    using Binary =
        Tensor (*)(const Tensor&, const Tensor&, std::vector<double>, Ints, const std::string&, const std::string&);
    static const std::map<std::string, Binary> binaries = {{"add", &add}, {"subtract", &sub}, {"multiply", &mul}};
    if (auto it = binaries.find(op); it != binaries.end()) return it->second(a[0], a[1], {}, {}, "", out);
    if (op == "divide") return div(a[0], a[1], out);
    using Unary = Tensor (*)(const Tensor&, const std::string&);
    static const std::map<std::string, Unary> unaries = {
        {"nn.relu", &relu}, {"sigmoid", &sigmoid}, {"tanh", &tanh}, {"nn.gelu", &gelu}};
    if (auto it = unaries.find(op); it != unaries.end()) return it->second(a[0], out);
    if (op == "nn.leaky_relu") return leaky_relu(a[0], attrs_from<LeakyReluAttrs>(call.attrs, op).alpha, out);
    if (op == "clip") {
      auto clip = attrs_from<ClipAttrs>(call.attrs, op);
      return clamp(a[0], clip.a_min, clip.a_max, out);
    }
    if (op == "nn.softmax") return softmax(a[0], attrs_from<SoftmaxAttrs>(call.attrs, op).axis, out);
    if (op == "nn.max_pool2d" || op == "nn.avg_pool2d") return pool(call, a[0], out);
    if (op == "nn.global_avg_pool2d" || op == "nn.global_max_pool2d") {
      if (attrs_from<GlobalPool2DAttrs>(call.attrs, op).layout != "NCHW")
        throw Error("only NCHW pools convert").op(op).node(out);
      const Shape& in = a[0].shape();
      Ints kernel = {in[2], in[3]};
      return op == "nn.global_max_pool2d" ? maxpool(a[0], kernel, kernel, {}, false, out)
                                          : avgpool(a[0], kernel, kernel, {}, false, false, out);
    }
    if (op == "nn.dense") return matmul(a[0], a[1], {}, true, false, false, true, "", out);
    if (op == "nn.matmul") {
      auto m = attrs_from<MatmulAttrs>(call.attrs, op);
      return matmul(a[0], a[1], {}, m.transpose_b, m.transpose_a, false, true, "", out);
    }
    if (op == "reshape" || op == "squeeze" || op == "expand_dims" || op == "nn.batch_flatten")
      return reshape(a[0], out_shape, out);
    if (op == "transpose") {
      auto t = attrs_from<TransposeAttrs>(call.attrs, op);
      Ints order;
      if (t.axes) {
        order = *t.axes;
      } else {
        for (int64_t d = a[0].rank() - 1; d >= 0; --d) order.push_back(d);
      }
      return permute(a[0], order, out);
    }
    if (op == "concatenate")
      return concat(values_.at(call.args[0].get()), attrs_from<ConcatenateAttrs>(call.attrs, op).axis, out);
    throw Error(cat("no TpuLang op for ", op)).op("tpulang.from_kiln").node(out);
  }

  Tensor conv(const CallNode& call, const std::vector<Tensor>& a, const Tensor& bias, const std::string& out) {
    auto c = attrs_from<Conv2DAttrs>(call.attrs, "nn.conv2d");
    if (c.data_layout != "NCHW" || c.kernel_layout != "OIHW")
      throw Error("only NCHW data and OIHW weights convert").op("nn.conv2d").node(out);
    const Window2D w = c.window();
    return conv_v2(a[0], a[1], bias, {w.strides.h, w.strides.w}, {w.dilation.h, w.dilation.w}, tpulang_pad(w.padding),
                   c.groups, {}, {}, "", out);
  }

  Tensor pool(const CallNode& call, const Tensor& x, const std::string& out) {
    const std::string& op = call.op()->name;
    auto p = attrs_from<AvgPool2DAttrs>(call.attrs, op);
    const Window2D w = p.window();
    if (p.layout != "NCHW" || w.dilation.h != 1 || w.dilation.w != 1)
      throw Error("only NCHW pools without dilation convert").op(op).node(out);
    const Pair2D k = p.pool();
    if (op == "nn.max_pool2d")
      return maxpool(x, {k.h, k.w}, {w.strides.h, w.strides.w}, tpulang_pad(w.padding), p.ceil_mode, out);
    return avgpool(x, {k.h, k.w}, {w.strides.h, w.strides.w}, tpulang_pad(w.padding), p.ceil_mode, p.count_include_pad,
                   out);
  }

  Graph* graph_ = nullptr;
  std::map<std::string, NDArray> params_;
  std::map<const ExprNode*, std::vector<Tensor>> values_;
  std::map<const ExprNode*, int> uses_;
  std::map<std::string, Tensor> reshaped_;
  std::map<const ExprNode*, const CallNode*> bias_user_;  // first operand of an nn.bias_add or add -> that call
  std::set<std::string> used_;
  std::vector<std::string> output_names_;
  std::map<const ExprNode*, std::string> output_name_;
};

}  // namespace

TopGraph from_kiln(const IRModule& module, const NamedArrays& params, const std::vector<std::string>& output_names) {
  return Importer(params, output_names).run(module);
}

}  // namespace kiln::tpulang
