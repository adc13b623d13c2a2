#include "kiln/tpulang/read_top.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "tpulang/mlir_text.h"

namespace kiln::tpulang {
namespace {

using Kind = Attr::Kind;

struct AttrSpec {
  std::string name;
  Kind kind;
  std::optional<Attr> fallback;  // Top's default, used when the text leaves it out
};

// The Top ops kiln emits (kiln/tpulang/ops.h): how many operands each takes and the
// attributes the conversion to kiln reads.
struct OpSpec {
  size_t min_operands;
  size_t max_operands;
  std::vector<AttrSpec> attrs;
};

AttrSpec required(std::string name, Kind kind) { return {std::move(name), kind, std::nullopt}; }
AttrSpec flag(std::string name, bool fallback) { return {std::move(name), Kind::kBool, Attr::boolean(fallback)}; }

const std::map<std::string, OpSpec>& op_specs() {
  static const std::map<std::string, OpSpec> specs = [] {
    const std::vector<AttrSpec> conv = {required("kernel_shape", Kind::kI64Array),
                                        required("strides", Kind::kI64Array),
                                        {"dilations", Kind::kI64Array, Attr::i64_array({1, 1})},
                                        required("pads", Kind::kI64Array),
                                        flag("do_relu", false),
                                        {"group", Kind::kI64, Attr::i64(1)}};
    std::vector<AttrSpec> deconv = conv;
    deconv.push_back({"output_padding", Kind::kI64Array, Attr::i64_array({0, 0})});
    const std::vector<AttrSpec> pool = {required("kernel_shape", Kind::kI64Array), required("strides", Kind::kI64Array),
                                        required("pads", Kind::kI64Array), flag("ceil_mode", false),
                                        flag("do_relu", false)};
    std::vector<AttrSpec> avgpool = pool;
    avgpool.push_back(flag("count_include_pad", false));
    const std::vector<AttrSpec> binary = {flag("do_relu", false)};
    const std::vector<AttrSpec> rounding = {required("round_mode", Kind::kString)};
    std::map<std::string, OpSpec> m = {
        {"top.Conv", {2, 3, conv}},
        {"top.Deconv", {2, 3, deconv}},
        {"top.MatMul",
         {2,
          3,
          {flag("right_transpose", false), flag("left_transpose", false), flag("output_transpose", false),
           flag("keep_dims", true), flag("do_relu", false)}}},
        {"top.Add", {2, 2, binary}},
        {"top.Sub", {2, 2, binary}},
        {"top.Mul", {2, 2, binary}},
        {"top.Div", {2, 2, {}}},
        {"top.Relu", {1, 1, {}}},
        {"top.Sigmoid", {1, 1, {}}},
        {"top.Tanh", {1, 1, {}}},
        {"top.GELU", {1, 1, {}}},
        {"top.LeakyRelu", {1, 1, {required("alpha", Kind::kF64)}}},
        {"top.PRelu", {2, 2, {}}},
        {"top.Softmax", {1, 1, {required("axis", Kind::kSI32)}}},
        {"top.Clip", {1, 1, {required("min", Kind::kF64), required("max", Kind::kF64)}}},
        {"top.LayerNorm",
         {1,
          3,
          {required("normalized_shape", Kind::kI64Array), required("axis", Kind::kSI32), required("eps", Kind::kF64)}}},
        {"top.MaxPool", {1, 1, pool}},
        {"top.AvgPool", {1, 1, avgpool}},
        {"top.Concat", {1, 1 << 20, {required("axis", Kind::kSI32), flag("do_relu", false)}}},
        {"top.Reshape", {1, 2, {required("shape", Kind::kI64Array)}}},
        {"top.Permute", {1, 1, {required("order", Kind::kI64Array)}}},
        {"top.Squeeze", {1, 1, {required("axes", Kind::kI64Array)}}},
        {"top.Unsqueeze", {1, 1, {required("axes", Kind::kI64Array)}}},
        {"top.Slice",
         {1,
          4,
          {required("offset", Kind::kI64Array), required("steps", Kind::kI64Array), required("ends", Kind::kI64Array),
           required("axes", Kind::kI64Array)}}},
        {"top.Cast", {1, 1, rounding}},
        {"top.RequantInt",
         {1,
          1,
          {required("multiplier", Kind::kI64Array), required("rshift", Kind::kI64Array),
           required("quant_mode", Kind::kString), required("round_mode", Kind::kString)}}},
        {"top.DequantInt",
         {1,
          1,
          {required("multiplier", Kind::kI64Array), required("shift", Kind::kI64Array), required("lshift", Kind::kI64),
           required("quant_mode", Kind::kString), required("round_mode", Kind::kString)}}},
    };
    return m;
  }();
  return specs;
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kBool: return "a bool";
    case Kind::kI64: return "an i64 integer";
    case Kind::kSI32: return "an si32 integer";
    case Kind::kF64: return "an f64 number";
    case Kind::kString: return "a string";
    case Kind::kI64Array: return "an array of integers";
    case Kind::kF64Array: return "an array of numbers";
  }
  return "";
}

bool is_integer(Kind k) { return k == Kind::kI64 || k == Kind::kSI32; }

// `a` as the kind `want`, when it is one (integers stand for floats, i64 for si32).
std::optional<Attr> coerce(const Attr& a, Kind want) {
  if (a.kind == want) return a;
  if (is_integer(want) && is_integer(a.kind)) return want == Kind::kI64 ? Attr::i64(a.i) : Attr::si32(a.i);
  if (want == Kind::kF64 && is_integer(a.kind)) return Attr::f64(static_cast<double>(a.i));
  if (want == Kind::kF64Array && a.kind == Kind::kI64Array)
    return Attr::f64_array(std::vector<double>(a.ints.begin(), a.ints.end()));
  return std::nullopt;
}

std::string shape_text(const Shape& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

std::string device_of(const std::string& chip) {
  std::string lower = chip;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* d : {"bm1684x", "bm1688", "cv183x"})
    if (lower == d) return d;
  return "cpu";
}

const mlir::AttrValue* find_attr(const std::vector<std::pair<std::string, mlir::AttrValue>>& attrs,
                                 const std::string& name) {
  for (const auto& [key, value] : attrs)
    if (key == name) return &value;
  return nullptr;
}

std::string string_attr(const std::vector<std::pair<std::string, mlir::AttrValue>>& attrs, const std::string& name) {
  const mlir::AttrValue* a = find_attr(attrs, name);
  return a && a->value && a->value->kind == Kind::kString ? a->value->s : "";
}

std::string module_string(const mlir::Module& m, const std::string& name) { return string_attr(m.attrs, name); }

// Earlier tpu-mlir releases named the weight file top.weight_file.
std::string weight_file_of(const mlir::Module& m) {
  const std::string named = module_string(m, "module.weight_file");
  return named.empty() ? module_string(m, "top.weight_file") : named;
}

// A value's name: its location, or (as earlier tpu-mlir releases wrote it) its `name` attribute.
std::string name_of(const mlir::Op& op) { return op.location.empty() ? string_attr(op.attrs, "name") : op.location; }

class GraphBuilder {
 public:
  GraphBuilder(const mlir::Module& module, const NamedArrays& weights, std::string source, std::string weights_name)
      : module_(module), source_(std::move(source)), weights_name_(std::move(weights_name)) {
    for (const auto& [name, array] : weights) weights_[name] = array;
  }

  TopGraph run() {
    TopGraph out;
    out.graph = std::make_unique<Graph>(device_of(module_string(module_, "module.chip")));
    graph_ = out.graph.get();
    for (size_t i = 0; i < module_.arguments.size(); ++i) argument_index_[module_.arguments[i].name] = i;
    std::vector<std::optional<Tensor>> inputs(module_.arguments.size());
    for (const mlir::Op& op : module_.ops) {
      if (op.name == "func.return") {
        for (size_t i = 0; i < op.operands.size(); ++i) out.outputs.push_back(operand(op, i));
      } else if (op.name == "top.Input") {
        input(op, inputs);
      } else {
        define(op, build(op));
      }
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i])
        throw Error(cat("argument ", module_.arguments[i].name, " of @main has no top.Input")).file(source_);
      out.inputs.push_back(*inputs[i]);
    }
    if (out.outputs.empty()) throw Error("@main returns nothing").file(source_);
    return out;
  }

 private:
  Error error(const mlir::Op& op, const std::string& message) const {
    return std::move(Error(cat("line ", op.at.line, ":", op.at.col, ": ", message)).file(source_).op(op.name));
  }

  // Runs `fn`, giving the errors of the graph layer the op's place.
  template <class Fn>
  auto located(const mlir::Op& op, Fn fn) const -> decltype(fn()) {
    try {
      return fn();
    } catch (const Error& e) {
      if (e.is_bug() || !e.file().empty()) throw;
      throw error(op, e.what());
    }
  }

  void expect_results(const mlir::Op& op, size_t n) const {
    if (op.results.size() != n) throw error(op, cat("has ", op.results.size(), " results; expected ", n));
  }

  // A fresh name when the location gives none or one already taken.
  std::string tensor_name(const std::string& location) const {
    if (location.empty() || !graph_->has_name(location)) return location;
    std::string name;
    for (int i = 1; name.empty() || graph_->has_name(name); ++i) name = cat(location, "_", i);
    return name;
  }

  Tensor make_tensor(const mlir::Op& op, const std::string& type, NDArray data = {}) {
    return located(op, [&] {
      mlir::TensorType t = mlir::parse_tensor_type(type);
      if (t.none) throw Error("the result type is none where a tensor is needed");
      Tensor tensor =
          graph_->tensor(t.shape, tensor_name(name_of(op)), t.dtype, std::move(data), false, t.scale, t.zero_point);
      if (t.quant_axis >= 0 && t.quant_axis != tensor.quant_axis())
        throw Error(cat("per-channel quantization runs along axis ", t.quant_axis, "; TpuLang's axis for tensor '",
                        tensor.name(), "' is ", tensor.quant_axis()));
      return tensor;
    });
  }

  void define(const mlir::Op& op, Tensor t) {
    if (!values_.emplace(op.results[0], t).second) throw error(op, cat("value ", op.results[0], " is defined twice"));
  }

  void input(const mlir::Op& op, std::vector<std::optional<Tensor>>& inputs) {
    expect_results(op, 1);
    if (op.operands.size() != 1) throw error(op, "takes one operand, an argument of @main");
    auto it = argument_index_.find(op.operands[0]);
    if (it == argument_index_.end()) throw error(op, cat("operand ", op.operands[0], " is not an argument of @main"));
    if (inputs[it->second]) throw error(op, cat("argument ", op.operands[0], " has two top.Input ops"));
    Tensor t = make_tensor(op, op.result_types[0]);
    check_type(op, 0, t, module_.arguments[it->second].type);
    define(op, t);
    inputs[it->second] = t;
  }

  Tensor build(const mlir::Op& op) {
    if (op.name == "top.None") {
      expect_results(op, 1);
      return Tensor();
    }
    if (op.name == "top.Weight") return weight(op);
    auto spec = op_specs().find(op.name);
    if (spec == op_specs().end())
      throw error(op, op.name.rfind("top.", 0) == 0 ? "unknown Top op; kiln reads the Top ops it writes"
                                                    : "not a Top op; @main holds top.* ops and a return");
    expect_results(op, 1);
    const size_t n = op.operands.size();
    if (n < spec->second.min_operands || n > spec->second.max_operands)
      throw error(op,
                  cat("takes ", spec->second.min_operands, " to ", spec->second.max_operands, " operands, found ", n));
    Operator out;
    out.type = op.name;
    for (size_t i = 0; i < n; ++i) out.inputs.push_back(operand(op, i));
    // Top's optional trailing operands (a bias, a LayerNorm's beta) may be left out.
    if (op.name == "top.Conv" || op.name == "top.Deconv" || op.name == "top.MatMul" || op.name == "top.LayerNorm")
      out.inputs.resize(3);
    out.attrs = attributes(op, spec->second);
    out.outputs = {make_tensor(op, op.result_types[0])};
    graph_->insert_op(out);
    return out.outputs[0];
  }

  Tensor weight(const mlir::Op& op) {
    expect_results(op, 1);
    if (!op.operands.empty()) throw error(op, "takes no operands");
    const std::string name = name_of(op);
    if (name.empty()) throw error(op, "has no name (loc(\"name\")) to find its array by");
    auto it = weights_.find(name);
    if (it == weights_.end())
      throw error(op, cat("weight '", name, "' is not in ", weights_name_.empty() ? "the weights" : weights_name_));
    const Shape declared = located(op, [&] { return mlir::parse_tensor_type(op.result_types[0]).shape; });
    if (it->second.shape() != declared)
      throw error(op, cat("weight '", name, "' has another shape in ", weights_name_))
          .expected(shape_text(declared), shape_text(it->second.shape()));
    return make_tensor(op, op.result_types[0], it->second);
  }

  Tensor operand(const mlir::Op& op, size_t i) {
    const std::string& name = op.operands[i];
    auto it = values_.find(name);
    if (it == values_.end()) {
      if (argument_index_.count(name)) throw error(op, cat("uses argument ", name, " directly; wrap it in top.Input"));
      throw error(op, cat("operand ", name, " is not defined before its use"));
    }
    check_type(op, i, it->second, op.operand_types[i]);
    return it->second;
  }

  void check_type(const mlir::Op& op, size_t i, const Tensor& value, const std::string& type) const {
    mlir::TensorType t = located(op, [&] { return mlir::parse_tensor_type(type); });
    const bool same = value.defined() ? !t.none && t.shape == value.shape() && t.dtype == value.dtype() : t.none;
    if (!same)
      throw error(
          op, cat("operand ", i, " (", op.operands[i], ") is typed ", type, " here but ",
                  value.defined() ? shape_text(value.shape()) + " " + value.dtype() : "none", " where it is defined"));
  }

  AttrList attributes(const mlir::Op& op, const OpSpec& spec) const {
    AttrList attrs;
    for (const AttrSpec& want : spec.attrs) {
      const mlir::AttrValue* a = find_attr(op.attrs, want.name);
      if (!a) {
        if (!want.fallback) throw error(op, cat("attribute '", want.name, "' is missing"));
        attrs.emplace_back(want.name, *want.fallback);
        continue;
      }
      std::optional<Attr> value = a->value ? coerce(*a->value, want.kind) : std::nullopt;
      if (!value)
        throw error(op, cat("attribute '", want.name, "' at line ", a->at.line, ":", a->at.col, " is not ",
                            kind_name(want.kind)))
            .expected(kind_name(want.kind), a->text);
      attrs.emplace_back(want.name, *value);
    }
    // Attributes kiln does not read (tpu-mlir writes more) stay when they are plain values;
    // a `name` standing in for the location names the tensor instead.
    for (const auto& [name, a] : op.attrs) {
      // Clang 14 cannot capture a structured binding in a lambda (a C++20 feature it lacks).
      auto known = std::find_if(spec.attrs.begin(), spec.attrs.end(),
                                [&attr_name = name](const AttrSpec& s) { return s.name == attr_name; });
      const bool names_the_tensor = name == "name" && op.location.empty();
      if (known == spec.attrs.end() && a.value && !names_the_tensor) attrs.emplace_back(name, *a.value);
    }
    return attrs;
  }

  const mlir::Module& module_;
  std::string source_;
  std::string weights_name_;
  std::map<std::string, NDArray> weights_;
  std::map<std::string, size_t> argument_index_;
  std::map<std::string, Tensor> values_;
  Graph* graph_ = nullptr;
};

bool has_weights(const mlir::Module& m) {
  return std::any_of(m.ops.begin(), m.ops.end(), [](const mlir::Op& op) { return op.name == "top.Weight"; });
}

}  // namespace

std::string top_weight_file(const std::string& mlir_text, const std::string& source) {
  return weight_file_of(mlir::parse_module(mlir_text, source));
}

TopGraph read_top(const std::string& mlir_text, const NamedArrays& weights, const std::string& source) {
  mlir::Module m = mlir::parse_module(mlir_text, source);
  return GraphBuilder(m, weights, source, "the weights").run();
}

TopGraph read_top_file(const std::string& mlir_path, const std::string& weights_path) {
  mlir::Module m = mlir::parse_module(read_file(mlir_path), mlir_path);
  std::string path = weights_path;
  NamedArrays weights;
  if (has_weights(m)) {
    if (path.empty()) {
      const std::string named = weight_file_of(m);
      if (named.empty())
        throw Error("the module names no weight file (module.weight_file); give the weights' path").file(mlir_path);
      path = (std::filesystem::path(mlir_path).parent_path() / named).string();
      if (!std::filesystem::exists(path))
        throw Error(cat("the weight file the module names, ", path, ", does not exist; give the weights' path"))
            .file(mlir_path);
    }
    weights = read_npz(path);
  }
  return GraphBuilder(m, weights, mlir_path, path).run();
}

}  // namespace kiln::tpulang
