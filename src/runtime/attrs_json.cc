#include "runtime/attrs_json.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "kiln/support/error.h"

namespace kiln {

namespace {

using Json = nlohmann::ordered_json;

Json non_finite_to_json(double value) {
  const char* text = std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
  return Json{{"float", text}};
}

Json value_to_json(const AttrValue& value) {
  if (value.is_none()) return nullptr;
  if (value.is_bool()) return value.as_bool();
  if (value.is_int()) return value.as_int();
  if (value.is_float()) {
    const double d = value.as_double();
    return std::isfinite(d) ? Json(d) : non_finite_to_json(d);
  }
  if (value.is_string()) return value.as_string();
  Json list = Json::array();
  for (const AttrValue& item : value.as_list()) list.push_back(value_to_json(item));
  return list;
}

double non_finite_from_json(const Json& object, const std::string& where) {
  const auto it = object.find("float");
  if (object.size() == 1 && it != object.end() && it->is_string()) {
    const std::string& text = it->get_ref<const std::string&>();
    if (text == "inf") return HUGE_VAL;
    if (text == "-inf") return -HUGE_VAL;
    if (text == "nan") return std::nan("");
  }
  throw Error(cat("op_attrs: attribute '", where, "' holds an object other than {\"float\": \"inf\"|\"-inf\"|\"nan\"}"))
      .expected("null, bool, number, string, list or non-finite float", object.dump());
}

AttrValue value_from_json(const Json& json, const std::string& where) {
  switch (json.type()) {
    case Json::value_t::null: return AttrValue();
    case Json::value_t::boolean: return AttrValue(json.get<bool>());
    case Json::value_t::number_integer: return AttrValue(json.get<int64_t>());
    case Json::value_t::number_unsigned: {
      const auto value = json.get<uint64_t>();
      check(value <= static_cast<uint64_t>(INT64_MAX), "op_attrs: attribute '", where, "' integer ", value,
            " does not fit int64");
      return AttrValue(static_cast<int64_t>(value));
    }
    case Json::value_t::number_float: return AttrValue(json.get<double>());
    case Json::value_t::string: return AttrValue(json.get<std::string>());
    case Json::value_t::array: {
      AttrValue::List list;
      for (const Json& item : json) list.push_back(value_from_json(item, where));
      return AttrValue(std::move(list));
    }
    case Json::value_t::object: return AttrValue(non_finite_from_json(json, where));
    default: break;
  }
  throw Error(cat("op_attrs: attribute '", where, "' has an unsupported JSON value ", json.dump()));
}

}  // namespace

std::string attrs_to_json(const Attrs& attrs) {
  Json object = Json::object();
  for (const auto& [name, value] : attrs.entries()) object[name] = value_to_json(value);
  return object.dump();
}

Attrs attrs_from_json(std::string_view text) {
  Json object;
  try {
    object = Json::parse(text);
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for a number too large
    throw Error(cat("op_attrs is not valid JSON: ", e.what()));
  }
  if (!object.is_object()) throw Error("op_attrs is not a JSON object").expected("an object", object.dump());
  Attrs attrs;
  for (const auto& [name, value] : object.items()) attrs.set(name, value_from_json(value, name));
  return attrs;
}

}  // namespace kiln
