// Typed operator attributes. An op declares its attributes once, as a plain struct whose
// visit(v) names each field with its documentation:
//
//   struct LeakyReluAttrs {
//     double alpha = 0.01;
//     template <class V> void visit(V& v) { v("alpha", alpha, "Slope of the negative part."); }
//     void validate() const;  // optional: throws kiln::Error naming the attribute
//   };
//
// An attribute without a default is marked with a fourth argument, v("shape", shape, "...",
// kRequired): a call must give it, and the field's initial value is only a placeholder.
//
// attrs_from / attrs_to convert between such a struct and the generic Attrs that IR text and
// graph JSON carry; OpDef::attrs<T>() derives the op's schema from the same visit, so names,
// kinds, defaults and order are written nowhere else. This header belongs to the runtime
// layer: reference kernels decode their attributes with it too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/runtime/attrs.h"
#include "kiln/support/error.h"

namespace kiln {

enum class AttrKind : uint8_t { kBool, kInt, kFloat, kString, kInts, kFloats, kAny };
const char* attr_kind_name(AttrKind k);

// `value` converted to `kind` (an int to a float, a single int to a list, ...); None stays
// None. Throws "attribute 'NAME' has the wrong kind" naming `op`.
AttrValue coerce_attr(AttrKind kind, const AttrValue& value, const std::string& name, const std::string& op);

// How a field type maps to an attribute kind.
template <class F>
struct AttrFieldTraits;
template <>
struct AttrFieldTraits<bool> {
  static constexpr AttrKind kind = AttrKind::kBool;
  static bool from(const AttrValue& v) { return v.as_bool(); }
};
template <>
struct AttrFieldTraits<int64_t> {
  static constexpr AttrKind kind = AttrKind::kInt;
  static int64_t from(const AttrValue& v) { return v.as_int(); }
};
template <>
struct AttrFieldTraits<double> {
  static constexpr AttrKind kind = AttrKind::kFloat;
  static double from(const AttrValue& v) { return v.as_double(); }
};
template <>
struct AttrFieldTraits<std::string> {
  static constexpr AttrKind kind = AttrKind::kString;
  static std::string from(const AttrValue& v) { return v.as_string(); }
};
template <>
struct AttrFieldTraits<std::vector<int64_t>> {
  static constexpr AttrKind kind = AttrKind::kInts;
  static std::vector<int64_t> from(const AttrValue& v) { return v.as_ints(); }
};
template <>
struct AttrFieldTraits<std::vector<double>> {
  static constexpr AttrKind kind = AttrKind::kFloats;
  static std::vector<double> from(const AttrValue& v) { return v.as_doubles(); }
};
// Any value (kAny), for the few attributes of several shapes: split's indices_or_sections is a
// count or a list of indices. validate() then checks the shape.
template <>
struct AttrFieldTraits<AttrValue> {
  static constexpr AttrKind kind = AttrKind::kAny;
  static AttrValue from(const AttrValue& v) { return v; }
};

template <class F>
struct IsOptionalField : std::false_type {};
template <class F>
struct IsOptionalField<std::optional<F>> : std::true_type {};

// The generic value of a field (an absent optional is None).
template <class F>
AttrValue attr_value_of(const F& field) {
  if constexpr (IsOptionalField<F>::value)
    return field ? AttrValue(*field) : AttrValue();
  else
    return AttrValue(field);
}

// The kind of a field, looking through std::optional.
template <class F>
constexpr AttrKind attr_kind_of() {
  if constexpr (IsOptionalField<F>::value)
    return AttrFieldTraits<typename F::value_type>::kind;
  else
    return AttrFieldTraits<F>::kind;
}

// The mark of a required attribute in visit(v); see the top of this file.
struct RequiredAttr {};
inline constexpr RequiredAttr kRequired{};

namespace attrs_detail {

struct NameCollector {
  std::vector<std::string> names;
  template <class F>
  void operator()(const char* name, F&, const char*) {
    names.emplace_back(name);
  }
  template <class F>
  void operator()(const char* name, F& field, const char* doc, RequiredAttr) {
    (*this)(name, field, doc);
  }
};

// Throws naming `op` when `given` holds a name the declaration lacks.
void check_known_names(const Attrs& given, const std::vector<std::string>& names, const std::string& op);
[[noreturn]] void throw_none_for_required(const std::string& name, AttrKind kind, const std::string& op);
[[noreturn]] void throw_missing_required(const std::string& name, const std::string& op);

class Reader {
 public:
  Reader(const Attrs& given, const std::string& op) : given_(given), op_(op) {}
  template <class F>
  void operator()(const char* name, F& field, const char*) {
    const AttrValue* v = given_.find(name);
    if (!v) return;  // the declaration's default stays
    constexpr AttrKind kind = attr_kind_of<F>();
    if constexpr (IsOptionalField<F>::value) {
      if (v->is_none()) {
        field.reset();
        return;
      }
      field = AttrFieldTraits<typename F::value_type>::from(coerce_attr(kind, *v, name, op_));
    } else {
      if (v->is_none()) throw_none_for_required(name, kind, op_);
      field = AttrFieldTraits<F>::from(coerce_attr(kind, *v, name, op_));
    }
  }
  template <class F>
  void operator()(const char* name, F& field, const char* doc, RequiredAttr) {
    if (!given_.find(name)) throw_missing_required(name, op_);
    (*this)(name, field, doc);
  }

 private:
  const Attrs& given_;
  const std::string& op_;
};

struct Writer {
  Attrs out;
  template <class F>
  void operator()(const char* name, F& field, const char*) {
    out.set(name, attr_value_of(field));
  }
  template <class F>
  void operator()(const char* name, F& field, const char* doc, RequiredAttr) {
    (*this)(name, field, doc);
  }
};

}  // namespace attrs_detail

// The declared attribute names of T, in declaration order.
template <class T>
std::vector<std::string> attr_names() {
  T probe{};
  attrs_detail::NameCollector names;
  probe.visit(names);
  return std::move(names.names);
}

// Reads T from generic attributes: unknown names, values of the wrong kind and missing required
// ones are errors, other missing ones keep T's defaults, None clears an optional field; then T::validate() runs (if
// declared). Errors name `op` and the attribute.
template <class T>
T attrs_from(const Attrs& given, const std::string& op = "") {
  attrs_detail::check_known_names(given, attr_names<T>(), op);
  T out{};
  attrs_detail::Reader reader(given, op);
  out.visit(reader);
  if constexpr (requires(const T& t) { t.validate(); }) {
    try {
      out.validate();
    } catch (Error& e) {
      e.op(op);
      throw;
    }
  }
  return out;
}

// Every field of `attrs` as generic attributes, in declaration order.
template <class T>
Attrs attrs_to(const T& attrs) {
  T copy = attrs;  // visit() takes its fields by reference
  attrs_detail::Writer writer;
  copy.visit(writer);
  return std::move(writer.out);
}

}  // namespace kiln
