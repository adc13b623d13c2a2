#include "kiln/tpulang/emit.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "kiln/support/error.h"

namespace kiln::tpulang {
namespace {

// llvm::printEscapedString: printable characters but '"' and '\' as they are, the rest as \XX.
std::string quoted(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "\"";
  for (unsigned char ch : s) {
    if (std::isprint(ch) && ch != '"' && ch != '\\') {
      out += static_cast<char>(ch);
    } else {
      out += '\\';
      out += hex[ch >> 4];
      out += hex[ch & 15];
    }
  }
  return out + "\"";
}

std::string storage_type(const std::string& dtype) {
  if (dtype == "float32") return "f32";
  if (dtype == "float16") return "f16";
  if (dtype.rfind("uint", 0) == 0) return "ui" + dtype.substr(4);
  return "i" + dtype.substr(3);
}

// The quant dialect spells unsigned storage u8, signed i8.
std::string quant_storage(const std::string& dtype) {
  return dtype.rfind("uint", 0) == 0 ? "u" + dtype.substr(4) : "i" + dtype.substr(3);
}

std::string quant_param(double scale, int64_t zero_point) {
  return zero_point == 0 ? mlir_float(scale) : cat(mlir_float(scale), ":", zero_point);
}

// Only a zero point (conv_v2's input_zp) quantizes with scale 1.
std::string quant_type(const Tensor& t) {
  const auto& scale = t.scale();
  const auto& zp = t.zero_point();
  const size_t n = std::max(scale.size(), zp.size());
  auto scale_at = [&](size_t i) { return scale.empty() ? 1.0 : scale[scale.size() == 1 ? 0 : i]; };
  auto zp_at = [&](size_t i) { return zp.empty() ? int64_t{0} : zp[zp.size() == 1 ? 0 : i]; };
  std::string head = "!quant.uniform<" + quant_storage(t.dtype()) + ":f32";
  if (n <= 1) return head + ", " + quant_param(scale_at(0), zp_at(0)) + ">";
  std::string s = cat(head, ":", t.quant_axis(), ", {");
  for (size_t i = 0; i < n; ++i) s += (i ? "," : "") + quant_param(scale_at(i), zp_at(i));
  return s + "}>";
}

std::string attr_text(const Attr& a) {
  switch (a.kind) {
    case Attr::Kind::kBool: return a.b ? "true" : "false";
    case Attr::Kind::kI64: return cat(a.i, " : i64");
    case Attr::Kind::kSI32: return cat(a.i, " : si32");
    case Attr::Kind::kF64: return mlir_float(a.f) + " : f64";
    case Attr::Kind::kString: return quoted(a.s);
    case Attr::Kind::kI64Array: {
      std::string s = "[";
      for (size_t i = 0; i < a.ints.size(); ++i) s += (i ? ", " : "") + std::to_string(a.ints[i]);
      return s + "]";
    }
    case Attr::Kind::kF64Array: {
      std::string s = "[";
      for (size_t i = 0; i < a.floats.size(); ++i) s += (i ? ", " : "") + mlir_float(a.floats[i]);
      return s + "]";
    }
  }
  return "";
}

// MLIR prints a dictionary sorted by name.
std::string attr_dict(AttrList attrs) {
  if (attrs.empty()) return "";
  std::stable_sort(attrs.begin(), attrs.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::string s = " {";
  for (size_t i = 0; i < attrs.size(); ++i) s += (i ? ", " : "") + attrs[i].first + " = " + attr_text(attrs[i].second);
  return s + "}";
}

std::string type_list(const std::vector<std::string>& types) {
  std::string s;
  for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + types[i];
  return s;
}

class Emitter {
 public:
  Emitter(const Graph& graph, std::string name) : graph_(graph), name_(std::move(name)) {}

  TopModule run(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) {
    check_io(inputs, outputs);
    if (needs_none()) {
      none_ = cat("%", fresh());
      line(none_ + " = \"top.None\"() : () -> none loc(#loc)");
    }
    std::vector<std::string> args;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string type = mlir_type(inputs[i]);
      args.push_back(cat("%arg", i, ": ", type, " loc(unknown)"));
      define(inputs[i], cat("\"top.Input\"(%arg", i, ") : (", type, ") -> ", type));
    }
    for (const Operator& op : graph_.operators()) emit(op);
    std::vector<std::string> results, result_types;
    for (const Tensor& t : outputs) {
      results.push_back(value(t, "return"));
      result_types.push_back(mlir_type(t));
    }
    TopModule m;
    m.mlir = module_text(args, results, result_types);
    m.weights = std::move(weights_);
    return m;
  }

 private:
  void check_io(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) {
    if (name_.empty()) throw Error("compile: the model name is empty");
    if (outputs.empty()) throw Error("compile: the graph needs at least one output");
    for (const auto& [list, what] : {std::pair{&inputs, "inputs"}, std::pair{&outputs, "outputs"}})
      for (size_t i = 0; i < list->size(); ++i)
        graph_.check_owns((*list)[i], "tpulang.compile", cat(what, "[", i, "]"));
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].is_weight() || graph_.producer(inputs[i]))
        throw Error(cat("argument 'inputs[", i, "]': tensor '", inputs[i].name(),
                        "' is a weight or an op's output, not a graph input"))
            .op("tpulang.compile");
      for (size_t j = 0; j < i; ++j)
        if (inputs[j].same_as(inputs[i]))
          throw Error(cat("argument 'inputs[", i, "]': tensor '", inputs[i].name(), "' is listed twice"))
              .op("tpulang.compile");
    }
  }

  bool needs_none() const {
    for (const Operator& op : graph_.operators())
      for (const Tensor& t : op.inputs)
        if (!t.defined()) return true;
    return false;
  }

  void emit(const Operator& op) {
    std::vector<std::string> operands, types;
    for (const Tensor& t : op.inputs) {
      operands.push_back(t.defined() ? value(t, op.type) : none_);
      types.push_back(t.defined() ? mlir_type(t) : "none");
    }
    check_invariant(op.outputs.size() == 1, "tpulang operators have one output");
    const Tensor& out = op.outputs[0];
    define(out, cat("\"", op.type, "\"(", type_list(operands), ")", attr_dict(op.attrs), " : (", type_list(types),
                    ") -> ", mlir_type(out)));
  }

  // The SSA value of `t`, emitting its top.Weight on first use.
  std::string value(const Tensor& t, const std::string& user) {
    auto it = values_.find(t.name());
    if (it != values_.end()) return it->second;
    if (!t.is_weight())
      throw Error(cat("compile: '", user, "' uses tensor '", t.name(),
                      "', which is neither a graph input, a weight nor the output of an earlier op"))
          .op("tpulang.compile");
    weights_.push_back({t.name(), t.data()});
    return define(t, cat("\"top.Weight\"() : () -> ", mlir_type(t)));
  }

  std::string define(const Tensor& t, const std::string& op_text) {
    const std::string v = cat("%", fresh());
    line(cat(v, " = ", op_text, " loc(#loc", loc_alias(t.name()), ")"));
    values_[t.name()] = v;
    return v;
  }

  void line(const std::string& text) { body_ += "    " + text + "\n"; }
  int64_t fresh() { return next_++; }

  // MLIR numbers location aliases in order of first use, from #loc1.
  size_t loc_alias(const std::string& name) {
    auto [it, added] = loc_index_.emplace(name, locs_.size() + 1);
    if (added) locs_.push_back(name);
    return it->second;
  }

  std::string module_text(const std::vector<std::string>& args, const std::vector<std::string>& results,
                          const std::vector<std::string>& result_types) const {
    std::string chip = graph_.device() == "cpu" ? "ALL" : graph_.device();
    std::transform(chip.begin(), chip.end(), chip.begin(), [](unsigned char c) { return std::toupper(c); });
    AttrList module_attrs = {{"module.chip", Attr::str(chip)},
                             {"module.name", Attr::str(name_)},
                             {"module.platform", Attr::str("TPULANG")},
                             {"module.state", Attr::str("TOP_F32")},
                             {"module.weight_file", Attr::str(name_ + "_TOP_F32_all_weight.npz")}};
    const std::string ret_type = result_types.size() == 1 ? result_types[0] : "(" + type_list(result_types) + ")";
    std::ostringstream os;
    os << "#loc = loc(unknown)\n";
    os << "module attributes" << attr_dict(module_attrs) << " {\n";
    os << "  func.func @main(" << type_list(args) << ") -> " << ret_type << " {\n";
    os << body_;
    os << "    return " << type_list(results) << " : " << type_list(result_types) << " loc(#loc)\n";
    os << "  } loc(#loc)\n";
    os << "} loc(#loc)\n";
    for (size_t i = 0; i < locs_.size(); ++i) os << "#loc" << i + 1 << " = loc(" << quoted(locs_[i]) << ")\n";
    return os.str();
  }

  const Graph& graph_;
  std::string name_;
  std::string body_;
  std::string none_;
  int64_t next_ = 0;
  std::map<std::string, std::string> values_;
  std::vector<std::string> locs_;
  std::map<std::string, size_t> loc_index_;
  NamedArrays weights_;
};

void write_text(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream os(tmp, std::ios::binary);
    os << text;
    if (!os) throw Error("cannot write the MLIR file").file(path);
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace

std::string mlir_float(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6e", v);
  if (std::strtod(buf, nullptr) == v) return buf;
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";
  return s;
}

std::string mlir_type(const Tensor& t) {
  std::string s = "tensor<";
  for (int64_t d : t.shape()) s += std::to_string(d) + "x";
  return s + (t.is_quantized() ? quant_type(t) : storage_type(t.dtype())) + ">";
}

TopModule emit_top(const Graph& graph, const std::string& name, const std::vector<Tensor>& inputs,
                   const std::vector<Tensor>& outputs) {
  return Emitter(graph, name).run(inputs, outputs);
}

CompiledFiles compile(const Graph& graph, const std::string& name, const std::vector<Tensor>& inputs,
                      const std::vector<Tensor>& outputs, const std::string& dir) {
  TopModule m = emit_top(graph, name, inputs, outputs);
  CompiledFiles files;
  files.mlir_path = (std::filesystem::path(dir) / (name + "_origin.mlir")).string();
  files.weight_path = (std::filesystem::path(dir) / (name + "_TOP_F32_all_weight.npz")).string();
  write_text(files.mlir_path, m.mlir);
  write_npz(files.weight_path, m.weights);
  return files;
}

CompiledFiles compile(const std::string& name, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                      const std::string& dir) {
  return compile(current_graph(), name, inputs, outputs, dir);
}

}  // namespace kiln::tpulang
