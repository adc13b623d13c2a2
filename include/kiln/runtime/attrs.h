// Operator attributes: an ordered list of name = value, where a value is None, a
// bool, an integer, a float, a string or a list of values. The same representation
// is printed in IR text, checked against an op's schema, handed to reference kernels
// and stored in graph.json, so there is one way to carry attributes everywhere.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace kiln {

struct AttrValue {
  using List = std::vector<AttrValue>;
  std::variant<std::monostate, bool, int64_t, double, std::string, List> v;

  AttrValue() = default;
  AttrValue(bool b) : v(b) {}
  AttrValue(int i) : v(int64_t{i}) {}
  AttrValue(int64_t i) : v(i) {}
  AttrValue(double d) : v(d) {}
  AttrValue(const char* s) : v(std::string(s)) {}
  AttrValue(std::string s) : v(std::move(s)) {}
  AttrValue(List l) : v(std::move(l)) {}
  AttrValue(const std::vector<int64_t>& ints);
  AttrValue(const std::vector<double>& floats);

  bool is_none() const { return std::holds_alternative<std::monostate>(v); }
  bool is_bool() const { return std::holds_alternative<bool>(v); }
  bool is_int() const { return std::holds_alternative<int64_t>(v); }
  bool is_float() const { return std::holds_alternative<double>(v); }
  bool is_string() const { return std::holds_alternative<std::string>(v); }
  bool is_list() const { return std::holds_alternative<List>(v); }

  // Conversions throw kiln::Error when the value is of another kind.
  bool as_bool() const;
  int64_t as_int() const;      // bools convert
  double as_double() const;    // ints convert
  const std::string& as_string() const;
  const List& as_list() const;
  std::vector<int64_t> as_ints() const;   // a single int becomes a 1-element list
  std::vector<double> as_doubles() const;

  // Relay text: 3, 1e-05f, True, "NCHW", [1, 2], None.
  std::string to_string() const;
  bool operator==(const AttrValue& other) const;
};

class Attrs {
 public:
  using Entry = std::pair<std::string, AttrValue>;
  Attrs() = default;
  Attrs(std::initializer_list<Entry> entries) : entries_(entries) {}

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  bool has(const std::string& name) const { return find(name) != nullptr; }
  const AttrValue* find(const std::string& name) const;
  // Replaces an existing value or appends.
  Attrs& set(const std::string& name, AttrValue value);
  const std::vector<Entry>& entries() const { return entries_; }

  // Getters throw kiln::Error naming the attribute when it is missing or of another kind.
  const AttrValue& get(const std::string& name) const;
  bool get_bool(const std::string& name) const;
  int64_t get_int(const std::string& name) const;
  double get_double(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;
  std::vector<int64_t> get_ints(const std::string& name) const;
  std::vector<double> get_doubles(const std::string& name) const;
  bool is_none(const std::string& name) const;  // missing or None

  // "strides=[2, 2], padding=[1, 1, 1, 1]"
  std::string to_string() const;
  bool operator==(const Attrs& other) const { return entries_ == other.entries_; }

 private:
  std::vector<Entry> entries_;
};

}  // namespace kiln
