#include "frontend/onnx/converter.h"

#include "kiln/ir/type_infer.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln::frontend {

ConvertContext::ConvertContext(const onnx::NodeProto& node, std::string label, int64_t opset, std::vector<Expr> inputs,
                               const OnnxAttrs& attrs, ImportState& state)
    : node_(node), label_(std::move(label)), opset_(opset), inputs_(std::move(inputs)), attrs_(attrs), state_(state) {}

Expr ConvertContext::input(size_t i) const {
  if (!has_input(i)) throw Error(cat("input ", i, " is required but ", i < inputs_.size() ? "empty" : "not given"));
  return inputs_[i];
}

Expr ConvertContext::optional_input(size_t i) const { return has_input(i) ? inputs_[i] : nullptr; }

Type ConvertContext::type_of(const Expr& e) const { return infer_untyped_nodes(e); }

const TensorTypeNode& ConvertContext::tensor_type_of(const Expr& e, const std::string& what) const {
  // The type stays alive in the node's cache, so the reference does too.
  return expect_tensor(type_of(e), what);
}

const TensorTypeNode& ConvertContext::input_type(size_t i) const { return tensor_type_of(input(i), cat("input ", i)); }

std::optional<NDArray> ConvertContext::constant_value(const Expr& e) const {
  if (const auto* c = as<ConstantNode>(e)) return c->data;
  if (const auto* v = as<VarNode>(e)) {
    auto it = state_.param_values.find(v);
    if (it != state_.param_values.end()) return it->second;
  }
  return std::nullopt;
}

std::optional<NDArray> ConvertContext::constant_input(size_t i) const {
  return has_input(i) ? constant_value(inputs_[i]) : std::nullopt;
}

NDArray ConvertContext::require_constant_input(size_t i, const std::string& what) const {
  std::optional<NDArray> value = constant_value(input(i));
  if (!value)
    throw Error(cat("input ", i, " (", what,
                    ") must be known at import time: an initializer, a Constant, or computed "
                    "from static shapes; kiln does not support it as a run-time value"));
  return *value;
}

std::vector<int64_t> ConvertContext::require_ints_input(size_t i, const std::string& what) const {
  NDArray value = require_constant_input(i, what);
  check(is_int(value.dtype()), "input ", i, " (", what, ") must be an integer tensor, found ",
        dtype_name(value.dtype()));
  return value.to_ints();
}

void ConvertContext::warn(const std::string& message) {
  state_.warnings.push_back(cat("node '", label_, "' (", op_type(), "): ", message));
}

std::vector<Expr> ConvertContext::convert_subgraph(const onnx::GraphProto& graph, const std::vector<Expr>& args) const {
  check(static_cast<bool>(subgraph_converter_), "this context cannot convert subgraphs");
  return subgraph_converter_(graph, args);
}

const Expr& optional_none() {
  static const Expr none = make_tuple({});
  return none;
}

bool is_optional_none(const Expr& e) { return e && e.get() == optional_none().get(); }

std::string canonical_domain(const std::string& domain) { return domain == "ai.onnx" ? "" : domain; }

std::string domain_label(const std::string& domain) { return domain.empty() ? "ai.onnx" : domain; }

ConverterRegistry& ConverterRegistry::add(const std::string& op_type, int since_version, ConvertFn fn) {
  return add("", op_type, since_version, std::move(fn));
}

ConverterRegistry& ConverterRegistry::add(const std::string& domain, const std::string& op_type, int since_version,
                                          ConvertFn fn) {
  auto& versions = table_[{canonical_domain(domain), op_type}];
  check(versions.emplace(since_version, std::move(fn)).second, "converter for ", op_type, " version ", since_version,
        " registered twice");
  return *this;
}

ConverterRegistry::Lookup ConverterRegistry::find(const std::string& domain, const std::string& op_type,
                                                  int64_t opset) const {
  Lookup out;
  auto it = table_.find({canonical_domain(domain), op_type});
  if (it == table_.end()) return out;
  const auto& versions = it->second;
  out.lowest_version = versions.begin()->first;
  auto chosen = versions.upper_bound(static_cast<int>(std::min<int64_t>(opset, INT32_MAX)));
  if (chosen == versions.begin()) {
    out.match = Match::kOpsetTooLow;
    return out;
  }
  --chosen;
  out.match = Match::kFound;
  out.fn = &chosen->second;
  out.since_version = chosen->first;
  return out;
}

std::vector<std::string> ConverterRegistry::op_names() const {
  std::vector<std::string> out;
  for (const auto& [key, versions] : table_)
    out.push_back(key.first.empty() ? key.second : key.first + ":" + key.second);
  return out;
}

std::vector<OnnxConverterVersions> ConverterRegistry::versions() const {
  std::vector<OnnxConverterVersions> out;
  for (const auto& [key, impls] : table_) {
    OnnxConverterVersions entry{domain_label(key.first), key.second, {}};
    for (const auto& impl : impls) entry.since_versions.push_back(impl.first);
    out.push_back(std::move(entry));
  }
  return out;
}

const ConverterRegistry& ConverterRegistry::builtin() {
  static const ConverterRegistry registry = [] {
    ConverterRegistry r;
    register_builtin_converters(r);
    return r;
  }();
  return registry;
}

}  // namespace kiln::frontend
