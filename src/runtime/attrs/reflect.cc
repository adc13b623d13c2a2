#include "kiln/attrs/reflect.h"

#include <algorithm>

#include "kiln/support/strings.h"

namespace kiln {

const char* attr_kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::kBool: return "bool";
    case AttrKind::kInt: return "int";
    case AttrKind::kFloat: return "float";
    case AttrKind::kString: return "string";
    case AttrKind::kInts: return "list of ints";
    case AttrKind::kFloats: return "list of floats";
    case AttrKind::kAny: return "any value";
  }
  return "?";
}

namespace {
AttrValue convert(AttrKind kind, const AttrValue& v) {
  switch (kind) {
    case AttrKind::kBool: return AttrValue(v.as_bool());
    case AttrKind::kInt: return AttrValue(v.as_int());
    case AttrKind::kFloat: return AttrValue(v.as_double());
    case AttrKind::kString: return AttrValue(v.as_string());
    case AttrKind::kInts: return AttrValue(v.as_ints());
    case AttrKind::kFloats: return AttrValue(v.as_doubles());
    case AttrKind::kAny: return v;
  }
  return v;
}
}  // namespace

AttrValue coerce_attr(AttrKind kind, const AttrValue& value, const std::string& name, const std::string& op) {
  if (value.is_none()) return value;
  try {
    return convert(kind, value);
  } catch (const Error&) {
  }
  throw std::move(
      Error(cat("attribute '", name, "' has the wrong kind")).op(op).expected(attr_kind_name(kind), value.to_string()));
}

namespace attrs_detail {

void check_known_names(const Attrs& given, const std::vector<std::string>& names, const std::string& op) {
  for (const auto& [key, value] : given.entries()) {
    if (std::find(names.begin(), names.end(), key) != names.end()) continue;
    throw std::move(Error(cat("unknown attribute '", key, "'"))
                        .op(op)
                        .expected(names.empty() ? "no attributes" : "one of " + join(names), key));
  }
}

void throw_none_for_required(const std::string& name, AttrKind kind, const std::string& op) {
  throw std::move(
      Error(cat("attribute '", name, "' has the wrong kind")).op(op).expected(attr_kind_name(kind), "None"));
}

// The message of OpDef::normalize for the same mistake.
void throw_missing_required(const std::string& name, const std::string& op) {
  throw Error(cat("missing required attribute '", name, "'")).op(op);
}

}  // namespace attrs_detail

}  // namespace kiln
