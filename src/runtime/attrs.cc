#include "kiln/runtime/attrs.h"

#include <cmath>
#include <sstream>

#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

namespace {
const char* kind_name(const AttrValue& a) {
  switch (a.v.index()) {
    case 0: return "None";
    case 1: return "bool";
    case 2: return "int";
    case 3: return "float";
    case 4: return "string";
    default: return "list";
  }
}
Error kind_error(const AttrValue& a, const char* wanted) {
  return std::move(Error("attribute of the wrong kind").expected(wanted, cat(kind_name(a), " ", a.to_string())));
}
}  // namespace

AttrValue::AttrValue(const std::vector<int64_t>& ints) : v(List(ints.begin(), ints.end())) {}
AttrValue::AttrValue(const std::vector<double>& floats) : v(List(floats.begin(), floats.end())) {}

bool AttrValue::as_bool() const {
  if (is_bool()) return std::get<bool>(v);
  if (is_int()) return std::get<int64_t>(v) != 0;
  throw kind_error(*this, "bool");
}

int64_t AttrValue::as_int() const {
  if (is_int()) return std::get<int64_t>(v);
  if (is_bool()) return std::get<bool>(v);
  throw kind_error(*this, "int");
}

double AttrValue::as_double() const {
  if (is_float()) return std::get<double>(v);
  if (is_int()) return static_cast<double>(std::get<int64_t>(v));
  throw kind_error(*this, "float");
}

const std::string& AttrValue::as_string() const {
  if (is_string()) return std::get<std::string>(v);
  throw kind_error(*this, "string");
}

const AttrValue::List& AttrValue::as_list() const {
  if (is_list()) return std::get<List>(v);
  throw kind_error(*this, "list");
}

std::vector<int64_t> AttrValue::as_ints() const {
  if (is_int() || is_bool()) return {as_int()};
  std::vector<int64_t> out;
  for (const auto& item : as_list()) {
    if (!item.is_int() && !item.is_bool()) throw kind_error(*this, "list of ints");
    out.push_back(item.as_int());
  }
  return out;
}

std::vector<double> AttrValue::as_doubles() const {
  if (is_int() || is_float()) return {as_double()};
  std::vector<double> out;
  for (const auto& item : as_list()) {
    if (!item.is_int() && !item.is_float()) throw kind_error(*this, "list of floats");
    out.push_back(item.as_double());
  }
  return out;
}

static std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string AttrValue::to_string() const {
  switch (v.index()) {
    case 0: return "None";
    case 1: return std::get<bool>(v) ? "True" : "False";
    case 2: return std::to_string(std::get<int64_t>(v));
    case 3: {
      double d = std::get<double>(v);
      if (std::isnan(d)) return "nanf";
      if (std::isinf(d)) return d > 0 ? "inff" : "-inff";
      return format_double(d) + "f";
    }
    case 4: return quote(std::get<std::string>(v));
    default: {
      std::vector<std::string> items;
      for (const auto& item : std::get<List>(v)) items.push_back(item.to_string());
      std::string out = "[";  // appended piecewise: GCC 12 warns falsely on "[" + s
      out += join(items);
      out += "]";
      return out;
    }
  }
}

bool AttrValue::operator==(const AttrValue& other) const {
  if (is_float() && other.is_float()) {
    double a = std::get<double>(v), b = std::get<double>(other.v);
    return a == b || (std::isnan(a) && std::isnan(b));
  }
  return v == other.v;
}

const AttrValue* Attrs::find(const std::string& name) const {
  for (const auto& [key, value] : entries_)
    if (key == name) return &value;
  return nullptr;
}

Attrs& Attrs::set(const std::string& name, AttrValue value) {
  for (auto& [key, old] : entries_) {
    if (key == name) {
      old = std::move(value);
      return *this;
    }
  }
  entries_.emplace_back(name, std::move(value));
  return *this;
}

const AttrValue& Attrs::get(const std::string& name) const {
  const AttrValue* v = find(name);
  if (!v) throw Error(cat("missing attribute '", name, "'"));
  return *v;
}

namespace {
template <class Fn>
auto named(const std::string& name, const AttrValue& value, Fn&& fn) -> decltype(fn(value)) {
  try {
    return fn(value);
  } catch (Error& e) {
    throw Error(cat("attribute '", name, "': ", e.what()));
  }
}
}  // namespace

bool Attrs::get_bool(const std::string& name) const {
  return named(name, get(name), [](const AttrValue& v) { return v.as_bool(); });
}
int64_t Attrs::get_int(const std::string& name) const {
  return named(name, get(name), [](const AttrValue& v) { return v.as_int(); });
}
double Attrs::get_double(const std::string& name) const {
  return named(name, get(name), [](const AttrValue& v) { return v.as_double(); });
}
const std::string& Attrs::get_string(const std::string& name) const {
  return named(name, get(name), [](const AttrValue& v) -> const std::string& { return v.as_string(); });
}
std::vector<int64_t> Attrs::get_ints(const std::string& name) const {
  return named(name, get(name), [](const AttrValue& v) { return v.as_ints(); });
}
std::vector<double> Attrs::get_doubles(const std::string& name) const {
  return named(name, get(name), [](const AttrValue& v) { return v.as_doubles(); });
}

bool Attrs::is_none(const std::string& name) const {
  const AttrValue* v = find(name);
  return !v || v->is_none();
}

std::string Attrs::to_string() const {
  std::vector<std::string> items;
  for (const auto& [key, value] : entries_) items.push_back(key + "=" + value.to_string());
  return join(items);
}

}  // namespace kiln
