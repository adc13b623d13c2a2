#include "kiln/tpulang/ops.h"

#include <algorithm>
#include <numeric>

#include "kiln/support/error.h"

namespace kiln::tpulang {
namespace {

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// One op call being checked: its name, the graph its tensors share, and error helpers.
class Call {
 public:
  Call(std::string fn, std::vector<std::pair<std::string, const Tensor*>> tensors) : fn_(std::move(fn)) {
    for (const auto& [arg, t] : tensors) {
      if (!t->defined()) continue;
      if (!graph_) {
        graph_ = Graph::find(t->graph_id());
        if (!graph_) throw error(arg, cat("tensor '", t->name(), "' belongs to a graph that was released"));
      }
      graph_->check_owns(*t, op(), arg);
    }
    if (!graph_) throw Error("needs at least one tensor argument").op(op());
  }

  std::string op() const { return "tpulang." + fn_; }
  Graph& graph() { return *graph_; }
  Error error(const std::string& arg, const std::string& message) const {
    return Error(cat("argument '", arg, "': ", message)).op(op());
  }
  void require(const Tensor& t, const std::string& arg) const {
    if (!t.defined()) throw error(arg, "is None");
  }
  void rank(const Tensor& t, const std::string& arg, int64_t want, const char* layout) const {
    require(t, arg);
    if (t.rank() != want)
      throw error(arg, cat("tensor '", t.name(), "' must be ", layout))
          .expected(cat("rank ", want), cat("rank ", t.rank(), " ", list_text(t.shape())));
  }
  // A window list: the default when empty, else exactly `n` values, each >= `min`.
  Ints window(Ints v, const std::string& arg, size_t n, int64_t fill, int64_t min, const char* order) const {
    if (v.empty()) return Ints(n, fill);
    if (v.size() != n) throw error(arg, cat("lists ", order)).expected(cat(n, " values"), list_text(v));
    for (int64_t x : v)
      if (x < min) throw error(arg, cat("values must be >= ", min)).expected(order, list_text(v));
    return v;
  }
  void float_input(const Tensor& t, const std::string& arg) const {
    require(t, arg);
    if (!is_float_dtype(t.dtype())) throw error(arg, "must be float32 or float16").expected("float", t.dtype());
  }
  void dtype_name(const std::string& dtype, const std::string& arg) const {
    if (!is_tpulang_dtype(dtype))
      throw error(arg, cat("unknown dtype '", dtype, "'"))
          .expected("float32, float16, int8, uint8, int16, uint16, int32 or uint32", dtype);
  }
  int64_t axis(int64_t axis, int64_t rank, const std::string& arg) const {
    if (axis < -rank || axis >= rank)
      throw error(arg, "out of range").expected(cat("[", -rank, ", ", rank - 1, "]"), std::to_string(axis));
    return axis < 0 ? axis + rank : axis;
  }

  Tensor output(Shape shape, const std::string& dtype, const std::string& out_name) {
    return graph().tensor(std::move(shape), graph().name_or_fresh(out_name, fn_), dtype);
  }
  Tensor insert(const std::string& type, std::vector<Tensor> inputs, Tensor out, AttrList attrs = {}) {
    Operator op;
    op.type = type;
    op.inputs = std::move(inputs);
    op.outputs = {out};
    op.attrs = std::move(attrs);
    graph().insert_op(std::move(op));
    return out;
  }

 private:
  std::string fn_;
  Graph* graph_ = nullptr;
};

// Top's pads are [top, left, bottom, right]; TpuLang's are [top, bottom, left, right].
Ints top_pads(const Ints& pad) { return {pad[0], pad[2], pad[1], pad[3]}; }

int64_t conv_extent(int64_t in, int64_t pad_sum, int64_t kernel, int64_t dilation, int64_t stride) {
  const int64_t extent = dilation * (kernel - 1) + 1;
  return (in + pad_sum - extent) / stride + 1;
}

struct ConvGeometry {
  Ints stride, dilation, pad;
};

ConvGeometry conv_geometry(const Call& c, Ints stride, Ints dilation, Ints pad) {
  ConvGeometry g;
  g.stride = c.window(std::move(stride), "stride", 2, 1, 1, "[h, w]");
  g.dilation = c.window(std::move(dilation), "dilation", 2, 1, 1, "[h, w]");
  g.pad = c.window(std::move(pad), "pad", 4, 0, 0, "[top, bottom, left, right]");
  return g;
}

AttrList conv_attrs(const Tensor& weight, const ConvGeometry& g, int64_t group) {
  return {{"kernel_shape", Attr::i64_array({weight.shape()[2], weight.shape()[3]})},
          {"strides", Attr::i64_array(g.stride)},
          {"dilations", Attr::i64_array(g.dilation)},
          {"pads", Attr::i64_array(top_pads(g.pad))},
          {"do_relu", Attr::boolean(false)},
          {"group", Attr::i64(group)}};
}

void check_bias(const Call& c, const Tensor& bias, int64_t channels) {
  if (!bias.defined()) return;
  const Shape& s = bias.shape();
  const bool channel_shaped = s == Shape{channels} || s == Shape{1, channels, 1, 1};
  if (!channel_shaped)
    throw c.error("bias", cat("tensor '", bias.name(), "' must hold one value per output channel"))
        .expected(cat("[1, ", channels, ", 1, 1] or [", channels, "]"), list_text(s));
}

Shape conv_output(const Call& c, const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvGeometry& g,
                  int64_t group) {
  c.rank(input, "input", 4, "NCHW");
  c.rank(weight, "weight", 4, "[oc, ic, kh, kw]");
  const Shape& in = input.shape();
  const Shape& w = weight.shape();
  if (group < 1 || in[1] % group != 0 || w[0] % group != 0)
    throw c.error("group", cat("must divide the input channels (", in[1], ") and output channels (", w[0], ")"))
        .expected("a common divisor", std::to_string(group));
  if (w[1] * group != in[1])
    throw c.error("weight", cat("tensor '", weight.name(), "' has ", w[1], " input channels per group"))
        .expected(cat(in[1] / group, " (input channels / group)"), std::to_string(w[1]));
  check_bias(c, bias, w[0]);
  const int64_t oh = conv_extent(in[2], g.pad[0] + g.pad[1], w[2], g.dilation[0], g.stride[0]);
  const int64_t ow = conv_extent(in[3], g.pad[2] + g.pad[3], w[3], g.dilation[1], g.stride[1]);
  if (oh < 1 || ow < 1)
    throw c.error("weight", "the dilated kernel is larger than the padded input")
        .expected("an output of at least 1x1", cat(oh, "x", ow));
  return {in[0], w[0], oh, ow};
}

// Numpy broadcasting of two shapes.
Shape broadcast(const Call& c, const Tensor& a, const Tensor& b) {
  const Shape& x = a.shape();
  const Shape& y = b.shape();
  Shape out(std::max(x.size(), y.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t dx = i < out.size() - x.size() ? 1 : x[i - (out.size() - x.size())];
    const int64_t dy = i < out.size() - y.size() ? 1 : y[i - (out.size() - y.size())];
    if (dx != dy && dx != 1 && dy != 1)
      throw c.error("tensor_i1", cat("shape ", list_text(y), " does not broadcast with ", list_text(x)))
          .expected(cat("dim ", i, " of 1 or ", dx), std::to_string(dy));
    out[i] = std::max(dx, dy);
  }
  return out;
}

Tensor binary(const std::string& fn, const std::string& type, const Tensor& a, const Tensor& b,
              std::vector<double> scale, Ints zero_point, const std::string& out_dtype, const std::string& out_name) {
  Call c(fn, {{"tensor_i0", &a}, {"tensor_i1", &b}});
  c.require(a, "tensor_i0");
  c.require(b, "tensor_i1");
  const bool floats = is_float_dtype(a.dtype());
  if (floats != is_float_dtype(b.dtype()) || (floats && a.dtype() != b.dtype()))
    throw c.error("tensor_i1", "must have the dtype of tensor_i0").expected(a.dtype(), b.dtype());
  std::string dtype = out_dtype.empty() ? (floats ? a.dtype() : "int32") : out_dtype;
  c.dtype_name(dtype, "out_dtype");
  if (floats && dtype != a.dtype())
    throw c.error("out_dtype", "must be the inputs' float dtype").expected(a.dtype(), dtype);
  if (floats && (!scale.empty() || !zero_point.empty()))
    throw c.error(scale.empty() ? "zero_point" : "scale", "quantizes integer tensors only").expected("None", a.dtype());
  if (!scale.empty() && scale.size() != 3)
    throw c.error("scale", "lists [input 0, input 1, output]").expected("3 values", std::to_string(scale.size()));
  if (!zero_point.empty() && zero_point.size() != 3)
    throw c.error("zero_point", "lists [input 0, input 1, output]")
        .expected("3 values", std::to_string(zero_point.size()));
  Tensor out = c.output(broadcast(c, a, b), dtype, out_name);
  auto quantize = [&](Tensor t, size_t i) {
    t.quantization(scale.empty() ? std::vector<double>{} : std::vector<double>{scale[i]},
                   zero_point.empty() ? Ints{} : Ints{zero_point[i]}, c.op());
  };
  quantize(a, 0);
  quantize(b, 1);
  quantize(out, 2);
  AttrList attrs;
  if (type != "top.Div") attrs.push_back({"do_relu", Attr::boolean(false)});
  return c.insert(type, {a, b}, out, std::move(attrs));
}

Tensor unary(const std::string& fn, const std::string& type, const Tensor& input, const std::string& out_name,
             AttrList attrs = {}) {
  Call c(fn, {{"input", &input}});
  c.float_input(input, "input");
  return c.insert(type, {input}, c.output(input.shape(), input.dtype(), out_name), std::move(attrs));
}

Tensor pool(const std::string& fn, const std::string& type, const Tensor& input, Ints kernel, Ints stride, Ints pad,
            bool ceil_mode, AttrList extra, const std::string& out_name) {
  Call c(fn, {{"input", &input}});
  c.rank(input, "input", 4, "NCHW");
  if (kernel.empty()) throw c.error("kernel", "is required").expected("[kh, kw]", "None");
  kernel = c.window(std::move(kernel), "kernel", 2, 1, 1, "[kh, kw]");
  stride = c.window(std::move(stride), "stride", 2, 1, 1, "[h, w]");
  pad = c.window(std::move(pad), "pad", 4, 0, 0, "[top, bottom, left, right]");
  const Shape& in = input.shape();
  // Rounding up, a last window that would start in the end padding is dropped (as in ONNX).
  auto extent = [&](int64_t size, int64_t before, int64_t after, int64_t k, int64_t s) {
    const int64_t span = size + before + after - k;
    int64_t n = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && n > 1 && (n - 1) * s >= size + before) --n;
    return n;
  };
  const int64_t oh = extent(in[2], pad[0], pad[1], kernel[0], stride[0]);
  const int64_t ow = extent(in[3], pad[2], pad[3], kernel[1], stride[1]);
  if (oh < 1 || ow < 1 || kernel[0] > in[2] + pad[0] + pad[1] || kernel[1] > in[3] + pad[2] + pad[3])
    throw c.error("kernel", "is larger than the padded input")
        .expected(cat("at most ", in[2], "x", in[3], " + pad"), list_text(kernel));
  AttrList attrs = {{"kernel_shape", Attr::i64_array(kernel)},
                    {"strides", Attr::i64_array(stride)},
                    {"pads", Attr::i64_array(top_pads(pad))},
                    {"ceil_mode", Attr::boolean(ceil_mode)},
                    {"do_relu", Attr::boolean(false)}};
  for (auto& a : extra) attrs.push_back(std::move(a));
  Tensor out = c.output({in[0], in[1], oh, ow}, input.dtype(), out_name);
  return c.insert(type, {input}, out, std::move(attrs));
}

// TpuLang's snake-case round modes as Top spells them.
std::string top_round_mode(const Call& c, const std::string& mode) {
  static const std::vector<std::pair<std::string, std::string>> modes = {{"half_away_from_zero", "HalfAwayFromZero"},
                                                                         {"half_up", "HalfUp"},
                                                                         {"half_down", "HalfDown"},
                                                                         {"half_to_even", "HalfToEven"},
                                                                         {"towards_zero", "TowardsZero"},
                                                                         {"up", "Up"},
                                                                         {"down", "Down"}};
  for (const auto& [name, top] : modes)
    if (name == mode) return top;
  throw c.error("round_mode", cat("unknown round mode '", mode, "'"))
      .expected("half_away_from_zero, half_up, half_down, half_to_even, towards_zero, up or down", mode);
}

std::string quant_mode(const Call& c, int64_t mode, const std::vector<std::string>& names) {
  if (mode < 0 || mode >= static_cast<int64_t>(names.size()))
    throw c.error("requant_mode", "out of range").expected(cat("0 to ", names.size() - 1), std::to_string(mode));
  return names[static_cast<size_t>(mode)];
}

void int_input(const Call& c, const Tensor& t, const std::string& arg) {
  c.require(t, arg);
  if (is_float_dtype(t.dtype()))
    throw c.error(arg, "must be an integer tensor").expected("an integer dtype", t.dtype());
}

void per_channel(const Call& c, const Tensor& t, size_t n, const std::string& arg) {
  const int64_t channels = t.rank() < 2 ? 1 : t.shape()[1];
  if (n == 0 || (n > 1 && static_cast<int64_t>(n) != channels))
    throw c.error(arg, "takes one value or one per channel")
        .expected(cat("1 or ", channels, " values"), std::to_string(n));
}

// What requant_int and dequant_int check alike: an integer input and output, and one
// multiplier, shift and offset per tensor or per channel.
void check_integer_rescale(const Call& c, const Tensor& tensor_i, const std::string& out_dtype, const Ints& mul,
                           const Ints& shift, const Ints& offset) {
  int_input(c, tensor_i, "tensor_i");
  c.dtype_name(out_dtype, "out_dtype");
  if (is_float_dtype(out_dtype)) throw c.error("out_dtype", "must be an integer dtype").expected("int8 ...", out_dtype);
  per_channel(c, tensor_i, mul.size(), "mul");
  per_channel(c, tensor_i, shift.size(), "shift");
  per_channel(c, tensor_i, offset.size(), "offset");
}

}  // namespace

Tensor conv(const Tensor& input, const Tensor& weight, const Tensor& bias, Ints stride, Ints dilation, Ints pad,
            int64_t group, const std::string& out_dtype, const std::string& out_name) {
  Call c("conv", {{"input", &input}, {"weight", &weight}, {"bias", &bias}});
  c.float_input(input, "input");
  c.float_input(weight, "weight");
  if (input.is_quantized() || weight.is_quantized())
    throw c.error("input", "conv takes float tensors without quantization; use conv_v2");
  const std::string dtype = out_dtype.empty() ? input.dtype() : out_dtype;
  c.dtype_name(dtype, "out_dtype");
  if (!is_float_dtype(dtype)) throw c.error("out_dtype", "must be float32 or float16").expected("float", dtype);
  ConvGeometry g = conv_geometry(c, std::move(stride), std::move(dilation), std::move(pad));
  Tensor out = c.output(conv_output(c, input, weight, bias, g, group), dtype, out_name);
  return c.insert("top.Conv", {input, weight, bias}, out, conv_attrs(weight, g, group));
}

Tensor conv_v2(const Tensor& tensor_i, const Tensor& weight, const Tensor& bias, Ints stride, Ints dilation, Ints pad,
               int64_t group, Ints input_zp, Ints weight_zp, const std::string& out_dtype,
               const std::string& out_name) {
  Call c("conv_v2", {{"tensor_i", &tensor_i}, {"weight", &weight}, {"bias", &bias}});
  c.rank(tensor_i, "tensor_i", 4, "NCHW");
  c.rank(weight, "weight", 4, "[oc, ic, kh, kw]");
  const bool floats = is_float_dtype(tensor_i.dtype());
  const std::string dtype = out_dtype.empty() ? (floats ? tensor_i.dtype() : "int32") : out_dtype;
  c.dtype_name(dtype, "out_dtype");
  const std::vector<std::string> allowed =
      floats ? std::vector<std::string>{"float32", "float16"} : std::vector<std::string>{"int32", "uint32"};
  if (std::find(allowed.begin(), allowed.end(), dtype) == allowed.end())
    throw c.error("out_dtype", cat("does not fit a ", tensor_i.dtype(), " input"))
        .expected(floats ? "float32 or float16" : "int32 or uint32", dtype);
  if (floats != is_float_dtype(weight.dtype()))
    throw c.error("weight", "must be float when the input is, integer when it is")
        .expected(tensor_i.dtype(), weight.dtype());
  if (floats && (!input_zp.empty() || !weight_zp.empty()))
    throw c.error(input_zp.empty() ? "weight_zp" : "input_zp", "zero points need integer tensors")
        .expected("None for a float input", tensor_i.dtype());
  auto check_zp = [&](const Ints& zp, const char* arg, int64_t channels, const char* which) {
    if (zp.size() > 1 && static_cast<int64_t>(zp.size()) != channels)
      throw c.error(arg, cat("takes one value or one per ", which, " channel"))
          .expected(cat("1 or ", channels, " values"), std::to_string(zp.size()));
  };
  check_zp(input_zp, "input_zp", tensor_i.shape()[1], "input");
  check_zp(weight_zp, "weight_zp", weight.shape()[0], "output");
  ConvGeometry g = conv_geometry(c, std::move(stride), std::move(dilation), std::move(pad));
  Shape shape = conv_output(c, tensor_i, weight, bias, g, group);
  Tensor input = tensor_i, filter = weight;
  if (!input_zp.empty()) input.quantization({}, input_zp, c.op() + ": argument 'input_zp'");
  if (!weight_zp.empty()) filter.quantization({}, weight_zp, c.op() + ": argument 'weight_zp'");
  Tensor out = c.output(std::move(shape), dtype, out_name);
  return c.insert("top.Conv", {tensor_i, weight, bias}, out, conv_attrs(weight, g, group));
}

Tensor deconv(const Tensor& input, const Tensor& weight, const Tensor& bias, Ints stride, Ints dilation, Ints pad,
              Ints output_padding, int64_t group, const std::string& out_dtype, const std::string& out_name) {
  Call c("deconv", {{"input", &input}, {"weight", &weight}, {"bias", &bias}});
  c.float_input(input, "input");
  c.rank(input, "input", 4, "NCHW");
  c.rank(weight, "weight", 4, "[ic, oc / group, kh, kw]");
  const std::string dtype = out_dtype.empty() ? input.dtype() : out_dtype;
  c.dtype_name(dtype, "out_dtype");
  ConvGeometry g = conv_geometry(c, std::move(stride), std::move(dilation), std::move(pad));
  output_padding = c.window(std::move(output_padding), "output_padding", 2, 0, 0, "[h, w]");
  const Shape& in = input.shape();
  const Shape& w = weight.shape();
  if (group < 1 || in[1] % group != 0)
    throw c.error("group", cat("must divide the input channels (", in[1], ")"))
        .expected("a divisor", std::to_string(group));
  if (w[0] != in[1])
    throw c.error("weight", cat("tensor '", weight.name(), "' must have the input channels first"))
        .expected(std::to_string(in[1]), std::to_string(w[0]));
  for (int i = 0; i < 2; ++i)
    if (output_padding[i] >= std::max(g.stride[i], g.dilation[i]))
      throw c.error("output_padding", "must be smaller than the stride or the dilation")
          .expected(cat("< ", std::max(g.stride[i], g.dilation[i])), std::to_string(output_padding[i]));
  const int64_t oc = w[1] * group;
  check_bias(c, bias, oc);
  auto extent = [&](int i) {
    return (in[2 + i] - 1) * g.stride[i] - g.pad[2 * i] - g.pad[2 * i + 1] + g.dilation[i] * (w[2 + i] - 1) + 1 +
           output_padding[i];
  };
  const int64_t oh = extent(0), ow = extent(1);
  if (oh < 1 || ow < 1)
    throw c.error("pad", "leaves no output").expected("an output of at least 1x1", cat(oh, "x", ow));
  AttrList attrs = conv_attrs(weight, g, group);
  attrs.insert(attrs.begin() + 4, {"output_padding", Attr::i64_array(output_padding)});
  Tensor out = c.output({in[0], oc, oh, ow}, dtype, out_name);
  return c.insert("top.Deconv", {input, weight, bias}, out, std::move(attrs));
}

Tensor matmul(const Tensor& input, const Tensor& right, const Tensor& bias, bool right_transpose, bool left_transpose,
              bool output_transpose, bool keep_dims, const std::string& out_dtype, const std::string& out_name) {
  Call c("matmul", {{"input", &input}, {"right", &right}, {"bias", &bias}});
  c.require(input, "input");
  c.require(right, "right");
  if (input.rank() < 2)
    throw c.error("input", "must be at least a matrix").expected("rank >= 2", std::to_string(input.rank()));
  if (right.rank() < 2)
    throw c.error("right", "must be at least a matrix").expected("rank >= 2", std::to_string(right.rank()));
  if (output_transpose) throw c.error("output_transpose", "is not supported yet").expected("false", "true");
  const bool floats = is_float_dtype(input.dtype());
  if (floats != is_float_dtype(right.dtype()))
    throw c.error("right", "must be float when input is, integer when it is").expected(input.dtype(), right.dtype());
  const std::string dtype = out_dtype.empty() ? (floats ? input.dtype() : "int32") : out_dtype;
  c.dtype_name(dtype, "out_dtype");
  const Shape& a = input.shape();
  const Shape& b = right.shape();
  const int64_t m = a[a.size() - (left_transpose ? 1 : 2)];
  const int64_t k = a[a.size() - (left_transpose ? 2 : 1)];
  const int64_t kb = b[b.size() - (right_transpose ? 1 : 2)];
  const int64_t n = b[b.size() - (right_transpose ? 2 : 1)];
  if (k != kb)
    throw c.error("right", cat("tensor '", right.name(), "' must have the reduced extent of input"))
        .expected(std::to_string(k), std::to_string(kb));
  Shape batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  Shape out(std::max(batch_a.size(), batch_b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t oa = out.size() - batch_a.size(), ob = out.size() - batch_b.size();
    const int64_t da = i < oa ? 1 : batch_a[i - oa], db = i < ob ? 1 : batch_b[i - ob];
    if (da != db && da != 1 && db != 1)
      throw c.error("right", "batch dims do not broadcast").expected(list_text(batch_a), list_text(batch_b));
    out[i] = std::max(da, db);
  }
  out.push_back(m);
  out.push_back(n);
  if (bias.defined() && bias.shape() != Shape{n} && num_elements(bias.shape()) != n)
    throw c.error("bias", cat("tensor '", bias.name(), "' must hold one value per output column"))
        .expected(cat("[", n, "]"), list_text(bias.shape()));
  AttrList attrs = {{"right_transpose", Attr::boolean(right_transpose)},
                    {"left_transpose", Attr::boolean(left_transpose)},
                    {"output_transpose", Attr::boolean(output_transpose)},
                    {"keep_dims", Attr::boolean(keep_dims)},
                    {"do_relu", Attr::boolean(false)}};
  return c.insert("top.MatMul", {input, right, bias}, c.output(out, dtype, out_name), std::move(attrs));
}

Tensor add(const Tensor& a, const Tensor& b, std::vector<double> scale, Ints zp, const std::string& out_dtype,
           const std::string& out_name) {
  return binary("add", "top.Add", a, b, std::move(scale), std::move(zp), out_dtype, out_name);
}
Tensor sub(const Tensor& a, const Tensor& b, std::vector<double> scale, Ints zp, const std::string& out_dtype,
           const std::string& out_name) {
  return binary("sub", "top.Sub", a, b, std::move(scale), std::move(zp), out_dtype, out_name);
}
Tensor mul(const Tensor& a, const Tensor& b, std::vector<double> scale, Ints zp, const std::string& out_dtype,
           const std::string& out_name) {
  return binary("mul", "top.Mul", a, b, std::move(scale), std::move(zp), out_dtype, out_name);
}
Tensor div(const Tensor& a, const Tensor& b, const std::string& out_name) {
  return binary("div", "top.Div", a, b, {}, {}, a.defined() ? a.dtype() : "", out_name);
}

Tensor relu(const Tensor& input, const std::string& out_name) { return unary("relu", "top.Relu", input, out_name); }
Tensor leaky_relu(const Tensor& input, double negative_slope, const std::string& out_name) {
  return unary("leaky_relu", "top.LeakyRelu", input, out_name, {{"alpha", Attr::f64(negative_slope)}});
}
Tensor sigmoid(const Tensor& input, const std::string& out_name) {
  return unary("sigmoid", "top.Sigmoid", input, out_name);
}
Tensor tanh(const Tensor& input, const std::string& out_name) { return unary("tanh", "top.Tanh", input, out_name); }
Tensor gelu(const Tensor& input, const std::string& out_name) { return unary("gelu", "top.GELU", input, out_name); }

Tensor prelu(const Tensor& input, const Tensor& slope, const std::string& out_name) {
  Call c("prelu", {{"input", &input}, {"slope", &slope}});
  c.float_input(input, "input");
  c.float_input(slope, "slope");
  if (input.rank() < 2)
    throw c.error("input", "must have a channel axis").expected("rank >= 2", std::to_string(input.rank()));
  const int64_t channels = input.shape()[1];
  if (num_elements(slope.shape()) != channels && num_elements(slope.shape()) != 1)
    throw c.error("slope", cat("tensor '", slope.name(), "' must hold one value or one per channel"))
        .expected(cat("1 or ", channels, " values"), list_text(slope.shape()));
  return c.insert("top.PRelu", {input, slope}, c.output(input.shape(), input.dtype(), out_name));
}

Tensor softmax(const Tensor& input, int64_t axis, const std::string& out_name) {
  Call c("softmax", {{"input", &input}});
  c.float_input(input, "input");
  const int64_t a = c.axis(axis, input.rank(), "axis");
  return c.insert("top.Softmax", {input}, c.output(input.shape(), input.dtype(), out_name), {{"axis", Attr::si32(a)}});
}

Tensor clamp(const Tensor& input, double min, double max, const std::string& out_name) {
  Call c("clamp", {{"input", &input}});
  c.require(input, "input");
  if (!(min <= max)) throw c.error("max", "must not be below min").expected(cat(">= ", min), cat(max));
  return c.insert("top.Clip", {input}, c.output(input.shape(), input.dtype(), out_name),
                  {{"min", Attr::f64(min)}, {"max", Attr::f64(max)}});
}

Tensor layer_norm(const Tensor& input, const Tensor& gamma, const Tensor& beta, double epsilon, int64_t axis,
                  const std::string& out_name) {
  Call c("layer_norm", {{"input", &input}, {"gamma", &gamma}, {"beta", &beta}});
  c.float_input(input, "input");
  const int64_t a = c.axis(axis, input.rank(), "axis");
  const Shape normalized(input.shape().begin() + a, input.shape().end());
  for (auto [arg, t] : {std::pair{"gamma", &gamma}, std::pair{"beta", &beta}})
    if (t->defined() && t->shape() != normalized)
      throw c.error(arg, cat("tensor '", t->name(), "' must have the normalized shape"))
          .expected(list_text(normalized), list_text(t->shape()));
  if (!(epsilon > 0)) throw c.error("epsilon", "must be positive").expected("> 0", cat(epsilon));
  AttrList attrs = {
      {"normalized_shape", Attr::i64_array(normalized)}, {"axis", Attr::si32(a)}, {"eps", Attr::f64(epsilon)}};
  return c.insert("top.LayerNorm", {input, gamma, beta}, c.output(input.shape(), input.dtype(), out_name),
                  std::move(attrs));
}

Tensor maxpool(const Tensor& input, Ints kernel, Ints stride, Ints pad, bool ceil_mode, const std::string& out_name) {
  return pool("maxpool", "top.MaxPool", input, std::move(kernel), std::move(stride), std::move(pad), ceil_mode, {},
              out_name);
}

Tensor avgpool(const Tensor& input, Ints kernel, Ints stride, Ints pad, bool ceil_mode, bool count_include_pad,
               const std::string& out_name) {
  return pool("avgpool", "top.AvgPool", input, std::move(kernel), std::move(stride), std::move(pad), ceil_mode,
              {{"count_include_pad", Attr::boolean(count_include_pad)}}, out_name);
}

Tensor concat(const std::vector<Tensor>& inputs, int64_t axis, const std::string& out_name) {
  std::vector<std::pair<std::string, const Tensor*>> args;
  for (size_t i = 0; i < inputs.size(); ++i) args.push_back({cat("inputs[", i, "]"), &inputs[i]});
  Call c("concat", args);
  for (const auto& [arg, t] : args) c.require(*t, arg);
  const Tensor& first = inputs[0];
  const int64_t a = c.axis(axis, first.rank(), "axis");
  Shape out = first.shape();
  for (size_t i = 1; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    const std::string arg = cat("inputs[", i, "]");
    if (t.dtype() != first.dtype())
      throw c.error(arg, "must have the dtype of inputs[0]").expected(first.dtype(), t.dtype());
    if (t.rank() != first.rank())
      throw c.error(arg, "must have the rank of inputs[0]")
          .expected(std::to_string(first.rank()), std::to_string(t.rank()));
    for (int64_t d = 0; d < t.rank(); ++d)
      if (d != a && t.shape()[d] != first.shape()[d])
        throw c.error(arg, cat("differs from inputs[0] outside the concat axis"))
            .expected(list_text(first.shape()), list_text(t.shape()));
    out[a] += t.shape()[a];
  }
  return c.insert("top.Concat", inputs, c.output(out, first.dtype(), out_name),
                  {{"axis", Attr::si32(a)}, {"do_relu", Attr::boolean(false)}});
}

Tensor reshape(const Tensor& tensor, Ints new_shape, const std::string& out_name) {
  Call c("reshape", {{"tensor", &tensor}});
  c.require(tensor, "tensor");
  Shape out(new_shape.size());
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < new_shape.size(); ++i) {
    int64_t d = new_shape[i];
    if (d == 0) {
      if (i >= tensor.shape().size())
        throw c.error("new_shape", "a 0 has no input dim to copy")
            .expected(list_text(tensor.shape()), list_text(new_shape));
      d = tensor.shape()[i];
    }
    if (d == -1) {
      if (inferred >= 0) throw c.error("new_shape", "may hold one -1").expected("at most one -1", list_text(new_shape));
      inferred = static_cast<int64_t>(i);
      continue;
    }
    if (d < 1)
      throw c.error("new_shape", "extents must be positive, 0 or -1").expected("a shape", list_text(new_shape));
    out[i] = d;
    known *= d;
  }
  const int64_t total = num_elements(tensor.shape());
  if (inferred >= 0) {
    if (total % known != 0)
      throw c.error("new_shape", "does not divide the element count")
          .expected(std::to_string(total), list_text(new_shape));
    out[static_cast<size_t>(inferred)] = total / known;
  } else if (known != total) {
    throw c.error("new_shape", cat("must keep the ", total, " elements of ", list_text(tensor.shape())))
        .expected(std::to_string(total), std::to_string(known));
  }
  return c.insert("top.Reshape", {tensor}, c.output(out, tensor.dtype(), out_name), {{"shape", Attr::i64_array(out)}});
}

Tensor permute(const Tensor& input, Ints order, const std::string& out_name) {
  Call c("permute", {{"input", &input}});
  c.require(input, "input");
  if (static_cast<int64_t>(order.size()) != input.rank())
    throw c.error("order", "must name every dim once").expected(cat(input.rank(), " values"), list_text(order));
  Ints seen(order.size(), 0);
  Shape out;
  for (int64_t& d : order) {
    d = c.axis(d, input.rank(), "order");
    if (seen[d]++) throw c.error("order", "names a dim twice").expected("a permutation", list_text(order));
    out.push_back(input.shape()[d]);
  }
  return c.insert("top.Permute", {input}, c.output(out, input.dtype(), out_name), {{"order", Attr::i64_array(order)}});
}

Tensor squeeze(const Tensor& tensor_i, Ints axis, const std::string& out_name) {
  Call c("squeeze", {{"tensor_i", &tensor_i}});
  c.require(tensor_i, "tensor_i");
  std::vector<bool> drop(tensor_i.shape().size(), false);
  for (int64_t& a : axis) {
    a = c.axis(a, tensor_i.rank(), "axis");
    if (tensor_i.shape()[a] != 1)
      throw c.error("axis", cat("dim ", a, " is not 1")).expected("1", std::to_string(tensor_i.shape()[a]));
    drop[a] = true;
  }
  if (axis.empty())
    for (size_t i = 0; i < drop.size(); ++i) drop[i] = tensor_i.shape()[i] == 1;
  Shape out;
  Ints axes;
  for (size_t i = 0; i < drop.size(); ++i)
    (drop[i] ? axes.push_back(static_cast<int64_t>(i)) : out.push_back(tensor_i.shape()[i]));
  return c.insert("top.Squeeze", {tensor_i}, c.output(out, tensor_i.dtype(), out_name),
                  {{"axes", Attr::i64_array(axes)}});
}

Tensor unsqueeze(const Tensor& tensor_i, Ints axis, const std::string& out_name) {
  Call c("unsqueeze", {{"tensor_i", &tensor_i}});
  c.require(tensor_i, "tensor_i");
  if (axis.empty()) throw c.error("axis", "is required").expected("the new dims", "[]");
  const int64_t rank = tensor_i.rank() + static_cast<int64_t>(axis.size());
  std::vector<bool> added(static_cast<size_t>(rank), false);
  for (int64_t& a : axis) {
    a = c.axis(a, rank, "axis");
    if (added[a]) throw c.error("axis", "names a dim twice").expected("distinct dims", list_text(axis));
    added[a] = true;
  }
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) out.push_back(added[i] ? 1 : tensor_i.shape()[next++]);
  std::sort(axis.begin(), axis.end());
  return c.insert("top.Unsqueeze", {tensor_i}, c.output(out, tensor_i.dtype(), out_name),
                  {{"axes", Attr::i64_array(axis)}});
}

Tensor slice(const Tensor& input, Ints starts, Ints ends, Ints steps, Ints axes, const std::string& out_name) {
  Call c("slice", {{"input", &input}});
  c.require(input, "input");
  const size_t n = starts.size();
  if (ends.size() != n) throw c.error("ends", "needs one value per start").expected(cat(n, " values"), list_text(ends));
  if (steps.empty()) steps.assign(n, 1);
  if (steps.size() != n)
    throw c.error("steps", "needs one value per start").expected(cat(n, " values"), list_text(steps));
  if (axes.empty())
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  if (axes.size() != n) throw c.error("axes", "needs one value per start").expected(cat(n, " values"), list_text(axes));
  const Shape& in = input.shape();
  Ints offset(in.size(), 0), end(in.begin(), in.end()), step(in.size(), 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = c.axis(axes[i], input.rank(), "axes");
    if (steps[i] < 1) throw c.error("steps", "must be positive").expected("> 0", std::to_string(steps[i]));
    auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + in[a] : v, int64_t{0}, in[a]); };
    offset[a] = clamp(starts[i]);
    end[a] = clamp(ends[i]);
    step[a] = steps[i];
    if (end[a] <= offset[a])
      throw c.error("ends", cat("axis ", a, " would be empty")).expected(cat("> ", offset[a]), std::to_string(end[a]));
  }
  Shape out;
  for (size_t a = 0; a < in.size(); ++a) out.push_back((end[a] - offset[a] + step[a] - 1) / step[a]);
  Ints all_axes(in.size());
  std::iota(all_axes.begin(), all_axes.end(), 0);
  AttrList attrs = {{"offset", Attr::i64_array(offset)},
                    {"steps", Attr::i64_array(step)},
                    {"ends", Attr::i64_array(end)},
                    {"axes", Attr::i64_array(all_axes)}};
  return c.insert("top.Slice", {input, Tensor(), Tensor(), Tensor()}, c.output(out, input.dtype(), out_name),
                  std::move(attrs));
}

Tensor requant_fp_to_int(const Tensor& tensor_i, std::vector<double> scale, Ints offset, int64_t requant_mode,
                         const std::string& out_dtype, const std::string& out_name, const std::string& round_mode) {
  Call c("requant_fp_to_int", {{"tensor_i", &tensor_i}});
  c.float_input(tensor_i, "tensor_i");
  c.dtype_name(out_dtype, "out_dtype");
  if (is_float_dtype(out_dtype)) throw c.error("out_dtype", "must be an integer dtype").expected("int8 ...", out_dtype);
  per_channel(c, tensor_i, scale.size(), "scale");
  per_channel(c, tensor_i, offset.size(), "offset");
  quant_mode(c, requant_mode, {"TFLite_LShift", "TFLite", "MultiplierShift"});
  const std::string round = top_round_mode(c, round_mode);
  Tensor out = c.output(tensor_i.shape(), out_dtype, out_name);
  out.quantization(scale, offset, c.op());
  return c.insert("top.Cast", {tensor_i}, out, {{"round_mode", Attr::str(round)}});
}

Tensor dequant_int_to_fp(const Tensor& tensor_i, std::vector<double> scale, Ints offset, const std::string& out_dtype,
                         const std::string& out_name, const std::string& round_mode) {
  Call c("dequant_int_to_fp", {{"tensor_i", &tensor_i}});
  int_input(c, tensor_i, "tensor_i");
  c.dtype_name(out_dtype, "out_dtype");
  if (!is_float_dtype(out_dtype)) throw c.error("out_dtype", "must be float32 or float16").expected("float", out_dtype);
  per_channel(c, tensor_i, scale.size(), "scale");
  per_channel(c, tensor_i, offset.size(), "offset");
  const std::string round = top_round_mode(c, round_mode);
  Tensor input = tensor_i;
  input.quantization(scale, offset, c.op());
  return c.insert("top.Cast", {tensor_i}, c.output(tensor_i.shape(), out_dtype, out_name),
                  {{"round_mode", Attr::str(round)}});
}

Tensor requant_int(const Tensor& tensor_i, Ints mul, Ints shift, Ints offset, int64_t requant_mode,
                   const std::string& out_dtype, const std::string& out_name, const std::string& round_mode) {
  Call c("requant_int", {{"tensor_i", &tensor_i}});
  check_integer_rescale(c, tensor_i, out_dtype, mul, shift, offset);
  const std::string mode = quant_mode(c, requant_mode, {"TFLite_LShift", "TFLite", "MultiplierShift"});
  const std::string round = top_round_mode(c, round_mode);
  Ints rshift;
  for (int64_t s : shift) rshift.push_back(-s);  // TpuLang's shift counts left, Top's rshift right
  Tensor out = c.output(tensor_i.shape(), out_dtype, out_name);
  out.quantization({}, offset, c.op());
  return c.insert("top.RequantInt", {tensor_i}, out,
                  {{"multiplier", Attr::i64_array(mul)},
                   {"rshift", Attr::i64_array(rshift)},
                   {"quant_mode", Attr::str(mode)},
                   {"round_mode", Attr::str(round)}});
}

Tensor dequant_int(const Tensor& tensor_i, Ints mul, Ints shift, Ints offset, int64_t lshift, int64_t requant_mode,
                   const std::string& out_dtype, const std::string& out_name, const std::string& round_mode) {
  Call c("dequant_int", {{"tensor_i", &tensor_i}});
  check_integer_rescale(c, tensor_i, out_dtype, mul, shift, offset);
  const std::string mode = quant_mode(c, requant_mode, {"Normal", "TFLite"});
  const std::string round = top_round_mode(c, round_mode);
  Tensor out = c.output(tensor_i.shape(), out_dtype, out_name);
  out.quantization({}, offset, c.op());
  return c.insert("top.DequantInt", {tensor_i}, out,
                  {{"multiplier", Attr::i64_array(mul)},
                   {"shift", Attr::i64_array(shift)},
                   {"lshift", Attr::i64(lshift)},
                   {"quant_mode", Attr::str(mode)},
                   {"round_mode", Attr::str(round)}});
}

}  // namespace kiln::tpulang
