#include "kiln/ir/op.h"

#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

const char* pattern_name(OpPattern p) {
  switch (p) {
    case OpPattern::kElemwise: return "elemwise";
    case OpPattern::kBroadcast: return "broadcast";
    case OpPattern::kInjective: return "injective";
    case OpPattern::kCommReduce: return "comm-reduce";
    case OpPattern::kOutEWiseFusable: return "out-elemwise-fusable";
    case OpPattern::kTuple: return "tuple";
    case OpPattern::kOpaque: return "opaque";
  }
  return "opaque";
}

OpDef& OpDef::describe(std::string text) {
  doc = std::move(text);
  return *this;
}
OpDef& OpDef::arg(std::string arg_name, bool optional) {
  args.push_back({std::move(arg_name), optional});
  return *this;
}
OpDef& OpDef::set_variadic() {
  variadic = true;
  return *this;
}
OpDef& OpDef::set_relation(TypeRelation rel) {
  relation = std::move(rel);
  return *this;
}
OpDef& OpDef::set_pattern(OpPattern p) {
  pattern = p;
  return *this;
}
OpDef& OpDef::set_kernel(std::string kernel_name) {
  kernel = std::move(kernel_name);
  return *this;
}

OpDef& OpDef::set_nondeterministic() {
  nondeterministic = true;
  return *this;
}

OpDef& OpDef::set_keeps_bytes() {
  keeps_bytes = [](const std::vector<Type>&, const Type&, const Attrs&) { return true; };
  return *this;
}

Attrs OpDef::normalize(const Attrs& given) const {
  for (const auto& [key, value] : given.entries()) {
    bool known = false;
    for (const auto& spec : attr_specs) known |= spec.name == key;
    if (!known) {
      std::vector<std::string> names;
      for (const auto& spec : attr_specs) names.push_back(spec.name);
      throw std::move(Error(cat("unknown attribute '", key, "'"))
                          .op(name)
                          .expected(names.empty() ? "no attributes" : "one of " + join(names), key));
    }
  }
  Attrs out;
  for (const auto& spec : attr_specs) {
    const AttrValue* v = given.find(spec.name);
    if (!v && spec.required) throw Error(cat("missing required attribute '", spec.name, "'")).op(name);
    out.set(spec.name, v ? coerce_attr(spec.kind, *v, spec.name, name) : spec.default_value);
  }
  return out;
}

void OpDef::check_arity(size_t num_args) const {
  size_t required = 0;
  for (const auto& a : args) required += a.optional ? 0 : 1;
  bool ok = variadic ? num_args >= required : (num_args >= required && num_args <= args.size());
  if (!ok) {
    std::string want = variadic                  ? cat("at least ", required)
                       : required == args.size() ? cat(required)
                                                 : cat(required, " to ", args.size());
    throw std::move(Error("wrong number of arguments").op(name).expected(want, cat(num_args)));
  }
}

OpRegistry& OpRegistry::global() {
  static OpRegistry registry;
  return registry;
}

OpDef& OpRegistry::add(const std::string& name) {
  auto& slot = ops_[name];
  check(!slot, "op '", name, "' registered twice");
  slot = std::make_unique<OpDef>();
  slot->name = name;
  slot->kernel = name;
  return *slot;
}

const OpDef* OpRegistry::find(const std::string& name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.get();
}

const OpDef& OpRegistry::get(const std::string& name) const {
  const OpDef* def = find(name);
  if (!def) throw Error(cat("unknown op '", name, "'"));
  return *def;
}

OpDef& OpRegistry::get_mutable(const std::string& name) {
  auto it = ops_.find(name);
  if (it == ops_.end()) throw Error(cat("unknown op '", name, "'"));
  return *it->second;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& entry : ops_) out.push_back(entry.first);
  return out;
}

}  // namespace kiln
