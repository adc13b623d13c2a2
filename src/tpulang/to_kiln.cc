#include "kiln/tpulang/to_kiln.h"

#include <map>

#include "kiln/attrs/activation.h"
#include "kiln/attrs/indexing.h"
#include "kiln/attrs/nn.h"
#include "kiln/attrs/transform.h"
#include "kiln/attrs/unary.h"
#include "kiln/ir/type.h"
#include "kiln/support/error.h"

namespace kiln::tpulang {
namespace {

const std::vector<int64_t>& ints(const Operator& op, const std::string& name) {
  const Attr* a = op.attr(name);
  check_invariant(a != nullptr, op.type, " has no attribute ", name);
  return a->ints;
}

const Attr& attr(const Operator& op, const std::string& name) {
  const Attr* a = op.attr(name);
  check_invariant(a != nullptr, op.type, " has no attribute ", name);
  return *a;
}

Expr reshape_to(Expr x, Shape shape) { return call_op("reshape", {std::move(x)}, ReshapeAttrs{.newshape = shape}); }

// A bias of one value per channel added along `axis` of a rank-`rank` result.
Expr add_bias(Expr y, Expr bias, int64_t channels, int64_t axis, int64_t rank) {
  Shape shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(axis)] = channels;
  return call_op("add", {std::move(y), reshape_to(std::move(bias), shape)});
}

class Converter {
 public:
  explicit Converter(const Graph& graph) : graph_(graph) {}

  KilnProgram run(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) {
    std::vector<Var> params;
    for (const Tensor& t : inputs) {
      graph_.check_owns(t, "tpulang.to_kiln", "inputs");
      params.push_back(bind(t));
    }
    for (const Operator& op : graph_.operators()) {
      std::vector<Expr> args;
      for (const Tensor& t : op.inputs) args.push_back(t.defined() ? value(t, op) : nullptr);
      SourceScope source(op.outputs[0].name());
      values_[op.outputs[0].name()] = convert(op, args);
    }
    std::vector<Expr> results;
    for (const Tensor& t : outputs) {
      graph_.check_owns(t, "tpulang.to_kiln", "outputs");
      results.push_back(value(t, Operator{}));
    }
    for (const Var& w : weight_vars_) params.push_back(w);
    Expr body = results.size() == 1 ? results[0] : make_tuple(results);
    KilnProgram p;
    p.module = IRModule::from_function(make_function(params, body));
    p.params = std::move(weights_);
    return p;
  }

 private:
  Var bind(const Tensor& t) {
    if (t.is_quantized())
      throw Error(cat("tensor '", t.name(), "' is quantized; only float graphs convert to kiln yet"))
          .op("tpulang.to_kiln");
    Var v = make_var(t.name(), tensor_type(t.shape(), parse_dtype(t.dtype())));
    values_[t.name()] = v;
    return v;
  }

  Expr value(const Tensor& t, const Operator& user) {
    auto it = values_.find(t.name());
    if (it != values_.end()) return it->second;
    if (!t.is_weight())
      throw Error(cat("tensor '", t.name(), "' used by ", user.type.empty() ? "the outputs" : user.type,
                      " is neither a graph input, a weight nor the output of an earlier op"))
          .op("tpulang.to_kiln");
    Var v = bind(t);
    weight_vars_.push_back(v);
    weights_.push_back({t.name(), t.data()});
    return v;
  }

  Expr convert(const Operator& op, std::vector<Expr>& a) {
    const Tensor& out = op.outputs[0];
    const int64_t out_rank = out.rank();
    const std::string& type = op.type;
    if (type == "top.Conv" || type == "top.Deconv") return convolution(op, a);
    if (type == "top.MatMul") {
      MatmulAttrs m;
      m.transpose_a = attr(op, "left_transpose").b;
      m.transpose_b = attr(op, "right_transpose").b;
      Expr y = call_op("nn.matmul", {a[0], a[1]}, m);
      return a[2] ? add_bias(y, a[2], out.shape().back(), out_rank - 1, out_rank) : y;
    }
    static const std::map<std::string, std::string> simple = {
        {"top.Add", "add"},      {"top.Sub", "subtract"},    {"top.Mul", "multiply"}, {"top.Div", "divide"},
        {"top.Relu", "nn.relu"}, {"top.Sigmoid", "sigmoid"}, {"top.Tanh", "tanh"},
    };
    if (auto it = simple.find(type); it != simple.end()) return call_op(it->second, a);
    if (type == "top.GELU") return call_op("nn.gelu", a, GeluAttrs{});
    if (type == "top.LeakyRelu") return call_op("nn.leaky_relu", a, LeakyReluAttrs{.alpha = attr(op, "alpha").f});
    if (type == "top.PRelu") {
      const int64_t channels = out.shape()[1];
      if (num_elements(op.inputs[1].shape()) != channels)
        throw Error("a slope of one value for every channel does not convert yet")
            .op("tpulang.to_kiln")
            .node(out.name());
      return call_op("nn.prelu", {a[0], reshape_to(a[1], {channels})}, PReluAttrs{.axis = 1});
    }
    if (type == "top.Clip") {
      ClipAttrs clip;
      clip.a_min = attr(op, "min").f;
      clip.a_max = attr(op, "max").f;
      return call_op("clip", a, clip);
    }
    if (type == "top.Softmax") return call_op("nn.softmax", a, SoftmaxAttrs{.axis = attr(op, "axis").i});
    if (type == "top.LayerNorm") return layer_norm(op, a);
    if (type == "top.MaxPool" || type == "top.AvgPool") return pool(op, a);
    if (type == "top.Concat")
      return call_op("concatenate", {make_tuple(a)}, ConcatenateAttrs{.axis = attr(op, "axis").i});
    if (type == "top.Reshape" || type == "top.Squeeze" || type == "top.Unsqueeze") return reshape_to(a[0], out.shape());
    if (type == "top.Permute") {
      TransposeAttrs t;
      t.axes = ints(op, "order");
      return call_op("transpose", {a[0]}, t);
    }
    if (type == "top.Slice") {
      StridedSliceAttrs s;
      s.begin = ints(op, "offset");
      s.end = ints(op, "ends");
      s.strides = ints(op, "steps");
      s.axes = ints(op, "axes");
      return call_op("strided_slice", {a[0]}, s);
    }
    throw Error(cat("no kiln conversion for ", type)).op("tpulang.to_kiln").node(out.name());
  }

  Expr convolution(const Operator& op, std::vector<Expr>& a) {
    const bool transpose = op.type == "top.Deconv";
    Conv2DTransposeAttrs attrs;
    attrs.strides = ints(op, "strides");
    attrs.padding = ints(op, "pads");  // both [top, left, bottom, right]
    attrs.dilation = ints(op, "dilations");
    attrs.groups = attr(op, "group").i;
    Expr y;
    if (transpose) {
      attrs.output_padding = ints(op, "output_padding");
      y = call_op("nn.conv2d_transpose", {a[0], a[1]}, attrs);
    } else {
      Conv2DAttrs conv = attrs;
      conv.kernel_layout = "OIHW";
      y = call_op("nn.conv2d", {a[0], a[1]}, conv);
    }
    return a[2] ? add_bias(y, a[2], op.outputs[0].shape()[1], 1, 4) : y;
  }

  Expr pool(const Operator& op, std::vector<Expr>& a) {
    AvgPool2DAttrs p;
    p.pool_size = ints(op, "kernel_shape");
    p.strides = ints(op, "strides");
    p.padding = ints(op, "pads");
    p.ceil_mode = attr(op, "ceil_mode").b;
    if (op.type == "top.MaxPool") return call_op("nn.max_pool2d", {a[0]}, static_cast<const Pool2DAttrs&>(p));
    p.count_include_pad = attr(op, "count_include_pad").b;
    return call_op("nn.avg_pool2d", {a[0]}, p);
  }

  // kiln normalises one axis: the normalised dims are flattened into one and back.
  Expr layer_norm(const Operator& op, std::vector<Expr>& a) {
    const Shape& shape = op.outputs[0].shape();
    const int64_t axis = attr(op, "axis").i;
    const Shape normalized(shape.begin() + axis, shape.end());
    const int64_t n = num_elements(normalized);
    Shape flat(shape.begin(), shape.begin() + axis);
    flat.push_back(n);
    const DType dtype = parse_dtype(op.outputs[0].dtype());
    auto param = [&](const Expr& e, double fill) {
      if (e) return reshape_to(e, {n});
      NDArray c = NDArray::empty({n}, dtype);
      for (int64_t i = 0; i < n; ++i) c.set(i, fill);
      return make_constant(c);
    };
    LayerNormAttrs attrs;
    attrs.axis = -1;
    attrs.epsilon = attr(op, "eps").f;
    Expr y = call_op("nn.layer_norm", {reshape_to(a[0], flat), param(a[1], 1.0), param(a[2], 0.0)}, attrs);
    return reshape_to(y, shape);
  }

  const Graph& graph_;
  std::map<std::string, Expr> values_;
  std::vector<Var> weight_vars_;
  NamedArrays weights_;
};

}  // namespace

KilnProgram to_kiln(const Graph& graph, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) {
  return Converter(graph).run(inputs, outputs);
}

}  // namespace kiln::tpulang
