#include "kiln/tpulang/to_kiln.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "kiln/attrs/activation.h"
#include "kiln/attrs/indexing.h"
#include "kiln/attrs/nn.h"
#include "kiln/attrs/qnn.h"
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
    return is_integer_op(op) ? convert_integer(op, a) : convert_float(op, a);
  }

  Expr convert_float(const Operator& op, std::vector<Expr>& a) {
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

  // Quantized and integer tensors: kiln's qnn ops where Top has a counterpart, data movement
  // as for floats; anything else is refused by name.
  Expr convert_integer(const Operator& op, std::vector<Expr>& a) {
    const std::string& type = op.type;
    if (type == "top.Cast") return cast(op, a);
    if (type == "top.Conv") return quantized_conv(op, a);
    if (type == "top.RequantInt") return requant_int(op, a);
    if (type == "top.Add" || type == "top.Sub" || type == "top.Mul") return quantized_binary(op, a);
    static const std::set<std::string> movement = {"top.Reshape", "top.Squeeze", "top.Unsqueeze", "top.Permute",
                                                   "top.Slice",   "top.Concat",  "top.MaxPool"};
    if (movement.count(type)) return convert_float(op, a);
    throw Error(cat("no kiln conversion for ", type, " on integer or quantized tensors yet"))
        .op("tpulang.to_kiln")
        .node(op.outputs[0].name());
  }

  // requant_fp_to_int: qnn.quantize with the output's parameters; dequant_int_to_fp:
  // qnn.dequantize with the input's. qnn.quantize rounds ties to even whatever round_mode says.
  Expr cast(const Operator& op, std::vector<Expr>& a) {
    const Tensor& in = op.inputs[0];
    const Tensor& out = op.outputs[0];
    if (is_float_dtype(in.dtype()) && !is_float_dtype(out.dtype())) {
      QuantizeAttrs q;
      q.axis = out.quant_axis();
      q.out_dtype = out.dtype();
      return call_op("qnn.quantize", {a[0], scale_of(out), zero_point_of(out)}, q);
    }
    if (!is_float_dtype(in.dtype()) && is_float_dtype(out.dtype())) {
      DequantizeAttrs d;
      d.axis = in.quant_axis();
      d.out_dtype = out.dtype();
      return call_op("qnn.dequantize", {a[0], scale_of(in), zero_point_of(in)}, d);
    }
    throw Error(cat("a cast from ", in.dtype(), " to ", out.dtype(), " does not convert yet"))
        .op("tpulang.to_kiln")
        .node(out.name());
  }

  // conv_v2 on integers: qnn.conv2d's int32 sum of (input - input_zp) * (weight - weight_zp),
  // plus the int32 bias.
  Expr quantized_conv(const Operator& op, std::vector<Expr>& a) {
    const Tensor& in = op.inputs[0];
    const Tensor& out = op.outputs[0];
    auto refuse = [&](const std::string& why) {
      return Error(cat("quantized top.Conv: ", why)).op("tpulang.to_kiln").node(out.name());
    };
    if (in.zero_point().size() > 1 || in.scale().size() > 1)
      throw refuse("per-channel input zero points do not convert");
    if (out.dtype() != "int32") throw refuse(cat("the output is ", out.dtype(), "; qnn.conv2d accumulates in int32"));
    if (a[2] && op.inputs[2].dtype() != "int32") throw refuse("the bias must be int32");
    QnnConv2DAttrs attrs;
    attrs.strides = ints(op, "strides");
    attrs.padding = ints(op, "pads");
    attrs.dilation = ints(op, "dilations");
    attrs.groups = attr(op, "group").i;
    attrs.kernel_layout = "OIHW";
    const Tensor& w = op.inputs[1];
    Expr y = call_op("qnn.conv2d", {a[0], a[1], zero_point_of(in), zero_point_of(w), scale_of(in), scale_of(w)}, attrs);
    return a[2] ? add_bias(y, a[2], out.shape()[1], 1, 4) : y;
  }

  // requant_int in MultiplierShift mode: round(x * multiplier / 2^rshift) + offset, saturated,
  // as qnn.requantize with input scale multiplier * 2^-rshift (exact in float64).
  Expr requant_int(const Operator& op, std::vector<Expr>& a) {
    const Tensor& out = op.outputs[0];
    auto refuse = [&](const std::string& why) {
      return Error(cat("top.RequantInt: ", why)).op("tpulang.to_kiln").node(out.name());
    };
    if (attr(op, "quant_mode").s != "MultiplierShift")
      throw refuse(cat("quant_mode ", attr(op, "quant_mode").s, " does not convert yet (MultiplierShift does)"));
    static const std::map<std::string, std::string> rounding = {
        {"HalfAwayFromZero", "TONEAREST"}, {"HalfUp", "UPWARD"}, {"HalfToEven", "HALF_TO_EVEN"}};
    auto round = rounding.find(attr(op, "round_mode").s);
    if (round == rounding.end()) throw refuse(cat("round_mode ", attr(op, "round_mode").s, " does not convert yet"));
    const std::vector<int64_t>& mul = ints(op, "multiplier");
    const std::vector<int64_t>& rshift = ints(op, "rshift");
    const size_t n = std::max(mul.size(), rshift.size());
    std::vector<double> scale(n);
    for (size_t i = 0; i < n; ++i)
      scale[i] = std::ldexp(static_cast<double>(mul[mul.size() == 1 ? 0 : i]),
                            -static_cast<int>(rshift[rshift.size() == 1 ? 0 : i]));
    RequantizeAttrs r;
    r.axis = out.quant_axis();
    r.rounding = round->second;
    r.out_dtype = out.dtype();
    return call_op("qnn.requantize",
                   {a[0], vector_constant(scale, DType::kFloat64), int_constant({0}),
                    vector_constant({1.0}, DType::kFloat64), zero_point_of(out)},
                   r);
  }

  // Quantized add / sub / mul: the operands dequantized, the float op, the result quantized
  // with the output's parameters (an integer output) or left float.
  Expr quantized_binary(const Operator& op, std::vector<Expr>& a) {
    std::vector<Expr> real;
    for (size_t i = 0; i < 2; ++i) real.push_back(dequantized(op.inputs[i], a[i]));
    Expr y = convert_float(op, real);
    const Tensor& out = op.outputs[0];
    if (is_float_dtype(out.dtype())) return y;
    QuantizeAttrs q;
    q.axis = out.quant_axis();
    q.out_dtype = out.dtype();
    return call_op("qnn.quantize", {y, scale_of(out), zero_point_of(out)}, q);
  }

  Expr dequantized(const Tensor& t, const Expr& e) {
    if (is_float_dtype(t.dtype())) return e;
    DequantizeAttrs d;
    d.axis = t.quant_axis();
    return call_op("qnn.dequantize", {e, scale_of(t), zero_point_of(t)}, d);
  }

  static bool is_integer_op(const Operator& op) {
    for (const Tensor& t : op.inputs)
      if (t.defined() && (!is_float_dtype(t.dtype()) || t.is_quantized())) return true;
    return !is_float_dtype(op.outputs[0].dtype());
  }

  // A quantization parameter: a scalar, or one value per channel of the tensor's quant_axis().
  static Expr vector_constant(const std::vector<double>& values, DType dtype) {
    Shape shape = values.size() == 1 ? Shape{} : Shape{static_cast<int64_t>(values.size())};
    return make_constant(NDArray::from_doubles(shape, dtype, values));
  }
  static Expr int_constant(const std::vector<int64_t>& values) {
    return vector_constant(std::vector<double>(values.begin(), values.end()), DType::kInt32);
  }
  static Expr scale_of(const Tensor& t) {
    return vector_constant(t.scale().empty() ? std::vector<double>{1.0} : t.scale(), DType::kFloat32);
  }
  static Expr zero_point_of(const Tensor& t) {
    return int_constant(t.zero_point().empty() ? std::vector<int64_t>{0} : t.zero_point());
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
