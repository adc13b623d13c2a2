#include "tpulang/mlir_text.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>

#include "kiln/support/error.h"
#include "kiln/support/limits.h"

namespace kiln::tpulang::mlir {
namespace {

bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.' || c == '-';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes the string literal starting at text[pos] ('"'); pos ends after the closing quote.
// Returns false on an unterminated literal.
bool decode_string(const std::string& text, size_t& pos, std::string& out) {
  ++pos;
  while (pos < text.size() && text[pos] != '"') {
    char c = text[pos++];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (pos >= text.size()) return false;
    char e = text[pos++];
    if (e == 'n')
      out += '\n';
    else if (e == 't')
      out += '\t';
    else if (e == '"' || e == '\\')
      out += e;
    else if (pos < text.size() && hex_value(e) >= 0 && hex_value(text[pos]) >= 0)
      out += static_cast<char>(hex_value(e) * 16 + hex_value(text[pos++]));
    else
      return false;
  }
  if (pos >= text.size()) return false;
  ++pos;
  return true;
}

class Parser {
 public:
  Parser(const std::string& text, const std::string& source) : s_(text), source_(source) {}

  Module run() {
    Module m;
    bool seen_module = false;
    for (skip_space(); pos_ < s_.size(); skip_space()) {
      if (peek() == '#') {
        alias_definition();
      } else if (!seen_module && keyword("module")) {
        module(m);
        seen_module = true;
      } else {
        throw error(seen_module ? "expected a location alias (#locN = loc(...)) after the module"
                                : "expected `module` or a location alias");
      }
    }
    if (!seen_module) throw error("no `module` in the text");
    for (Op& op : m.ops) op.location = op.location.empty() ? "" : resolve(op.location, op.at, 0);
    return m;
  }

 private:
  Error error(const std::string& message) const { return error_at(message, here_); }
  Error error_at(const std::string& message, Position at) const {
    return std::move(Error(cat("line ", at.line, ":", at.col, ": ", message)).file(source_));
  }

  char peek(size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }
  void advance(size_t n = 1) {
    for (size_t i = 0; i < n && pos_ < s_.size(); ++i, ++pos_) {
      if (s_[pos_] == '\n') {
        ++here_.line;
        here_.col = 1;
      } else {
        ++here_.col;
      }
    }
  }
  void skip_space() {
    while (pos_ < s_.size()) {
      if (std::isspace(static_cast<unsigned char>(peek()))) {
        advance();
      } else if (peek() == '/' && peek(1) == '/') {
        while (pos_ < s_.size() && peek() != '\n') advance();
      } else {
        break;
      }
    }
  }
  bool accept(char c) {
    skip_space();
    if (peek() != c) return false;
    advance();
    return true;
  }
  void expect(char c, const std::string& where) {
    if (!accept(c)) throw error(cat("expected '", c, "' ", where, ", found ", found()));
  }
  bool keyword(const std::string& word) {
    skip_space();
    if (s_.compare(pos_, word.size(), word) != 0 || is_ident_char(peek(word.size()))) return false;
    advance(word.size());
    return true;
  }
  std::string found() const {
    if (pos_ >= s_.size()) return "the end of the text";
    size_t end = pos_;
    while (end < s_.size() && end - pos_ < 20 && !std::isspace(static_cast<unsigned char>(s_[end]))) ++end;
    return "'" + s_.substr(pos_, std::max<size_t>(end - pos_, 1)) + "'";
  }
  std::string identifier(const std::string& what) {
    skip_space();
    size_t start = pos_;
    while (is_ident_char(peek())) advance();
    if (start == pos_) throw error(cat("expected ", what, ", found ", found()));
    return s_.substr(start, pos_ - start);
  }
  std::string string_literal(const std::string& what) {
    skip_space();
    if (peek() != '"') throw error(cat("expected ", what, " (a string), found ", found()));
    size_t p = pos_;
    std::string out;
    if (!decode_string(s_, p, out)) throw error("unterminated or malformed string literal");
    advance(p - pos_);
    return out;
  }
  std::string value_name() {
    skip_space();
    if (peek() != '%') throw error(cat("expected a value (%name), found ", found()));
    advance();
    std::string name = "%" + identifier("a value name");
    if (peek() == '#') throw error(cat("value ", name, ": results of multi-result ops are not supported"));
    return name;
  }
  // Text up to the bracket closing the one just consumed, with nested brackets and strings.
  std::string balanced(char open, char close) {
    size_t start = pos_;
    int depth = 1;
    while (pos_ < s_.size()) {
      char c = peek();
      if (c == '"') {
        size_t p = pos_;
        std::string ignored;
        if (!decode_string(s_, p, ignored)) throw error("unterminated string literal");
        advance(p - pos_);
        continue;
      }
      if (c == '-' && peek(1) == '>') {
        advance(2);
        continue;
      }
      if (c == open) ++depth;
      if (c == close && --depth == 0) {
        std::string body = s_.substr(start, pos_ - start);
        advance();
        return body;
      }
      advance();
    }
    throw error(cat("no '", close, "' closes the '", open, "'"));
  }

  // tensor<...>, none, f32, !quant.uniform<...>: a name, then an optional <...> body.
  std::string type() {
    skip_space();
    size_t start = pos_;
    while (is_ident_char(peek()) || peek() == '!') advance();
    if (start == pos_) throw error(cat("expected a type, found ", found()));
    if (peek() == '<') {
      advance();
      balanced('<', '>');
    }
    return s_.substr(start, pos_ - start);
  }
  std::vector<std::string> type_list() {
    std::vector<std::string> types;
    expect('(', "opening a type list");
    if (accept(')')) return types;
    do types.push_back(type());
    while (accept(','));
    expect(')', "closing a type list");
    return types;
  }

  // The locations of the module, @main and its arguments name nothing kiln keeps.
  void skip_location() {
    if (!keyword("loc")) return;
    expect('(', "after loc");
    balanced('(', ')');
  }
  std::string resolve(const std::string& raw, Position at, int depth) const {
    if (depth > 16) throw error_at("location aliases refer to each other in a cycle", at);
    size_t p = raw.find_first_not_of(" \t\n");
    if (p == std::string::npos || raw.compare(p, 7, "unknown") == 0) return "";
    p = raw.find_first_of("\"#", p);
    if (p == std::string::npos) return "";
    if (raw[p] == '"') {
      std::string name;
      if (!decode_string(raw, p, name)) throw error_at("malformed location name", at);
      return name;
    }
    size_t end = p + 1;
    while (end < raw.size() && is_ident_char(raw[end])) ++end;
    auto it = aliases_.find(raw.substr(p, end - p));
    if (it == aliases_.end()) throw error_at(cat("location alias ", raw.substr(p, end - p), " is not defined"), at);
    return resolve(it->second, at, depth + 1);
  }

  void alias_definition() {
    Position at = here_;
    advance();
    std::string name = "#" + identifier("an alias name");
    expect('=', "after the alias name");
    if (!keyword("loc")) {
      throw error_at(cat("alias ", name, " is not a location; only #name = loc(...) aliases are read"), at);
    }
    expect('(', "after loc");
    aliases_[name] = balanced('(', ')');
  }

  AttrValue attr_value() {
    skip_space();
    AttrValue v;
    v.at = here_;
    size_t start = pos_;
    char c = peek();
    if (c == '"') {
      v.value = Attr::str(string_literal("a string"));
    } else if (keyword("true") || keyword("false")) {
      v.value = Attr::boolean(s_.compare(start, 4, "true") == 0);
    } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      v.value = number();
    } else if (c == '[') {
      advance();
      v.value = array();
    } else if (keyword("unit")) {
      v.value = Attr::boolean(true);
    } else {
      opaque_value();
    }
    v.text = s_.substr(start, pos_ - start);
    return v;
  }
  // A number with an optional `: type` suffix; MLIR's untyped integers are i64, floats f64.
  Attr number() {
    size_t start = pos_;
    if (peek() == '-') advance();
    while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '.' ||
           ((peek() == '-' || peek() == '+') && (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E')))
      advance();
    const std::string text = s_.substr(start, pos_ - start);
    const bool is_float = text.find_first_of(".eE") != std::string::npos && text.rfind("0x", 0) != 0;
    char* end = nullptr;
    std::string suffix;
    size_t save = pos_;
    Position save_at = here_;
    if (accept(':')) {
      suffix = type();
    } else {
      pos_ = save;
      here_ = save_at;
    }
    const bool float_type = !suffix.empty() && (suffix[0] == 'f' || suffix == "bf16");
    if (is_float || float_type) {
      double d = std::strtod(text.c_str(), &end);
      if (*end != '\0') throw error(cat("malformed number '", text, "'"));
      return Attr::f64(d);
    }
    long long i = std::strtoll(text.c_str(), &end, 0);
    if (*end != '\0') throw error(cat("malformed number '", text, "'"));
    return suffix == "si32" ? Attr::si32(i) : Attr::i64(i);
  }
  // [1, 2] or [1.0, 2.5]; arrays of anything else are kept as text only. Arrays nest by
  // recursion, so their depth is limited (a hostile file would otherwise exhaust the stack).
  std::optional<Attr> array() {
    struct Nesting {
      explicit Nesting(int& d) : depth(++d) {}
      ~Nesting() { --depth; }
      int& depth;
    } nesting(array_depth_);
    try {
      check_nesting_depth(array_depth_, "attribute arrays");
    } catch (const Error& e) {
      throw error(e.what());
    }
    std::vector<Attr> items;
    bool numeric = true;
    if (!accept(']')) {
      do {
        AttrValue item = attr_value();
        bool is_number = item.value && (item.value->kind == Attr::Kind::kI64 || item.value->kind == Attr::Kind::kSI32 ||
                                        item.value->kind == Attr::Kind::kF64);
        numeric = numeric && is_number;
        if (is_number) items.push_back(*item.value);
      } while (accept(','));
      expect(']', "closing an array");
    }
    if (!numeric) return std::nullopt;
    bool any_float = false;
    for (const Attr& a : items) any_float = any_float || a.kind == Attr::Kind::kF64;
    if (!any_float) {
      std::vector<int64_t> ints;
      for (const Attr& a : items) ints.push_back(a.i);
      return Attr::i64_array(ints);
    }
    std::vector<double> floats;
    for (const Attr& a : items) floats.push_back(a.kind == Attr::Kind::kF64 ? a.f : static_cast<double>(a.i));
    return Attr::f64_array(floats);
  }
  // dense<...>, #dialect<...>, {nested}, affine_map<...>: skipped up to the next ',' or
  // closing bracket at this level.
  void opaque_value() {
    size_t start = pos_;
    while (pos_ < s_.size()) {
      char c = peek();
      if (c == ',' || c == '}' || c == ']' || c == '>') break;
      if (c == '"') {
        string_literal("a string");
        continue;
      }
      advance();
      if (c == '<') balanced('<', '>');
      if (c == '(') balanced('(', ')');
      if (c == '[') balanced('[', ']');
      if (c == '{') balanced('{', '}');
    }
    if (start == pos_) throw error(cat("expected an attribute value, found ", found()));
  }
  std::vector<std::pair<std::string, AttrValue>> dictionary() {
    std::vector<std::pair<std::string, AttrValue>> attrs;
    expect('{', "opening an attribute dictionary");
    if (accept('}')) return attrs;
    do {
      skip_space();
      std::string name = peek() == '"' ? string_literal("an attribute name") : identifier("an attribute name");
      if (accept('=')) {
        attrs.emplace_back(name, attr_value());
      } else {
        AttrValue unit;
        unit.value = Attr::boolean(true);
        unit.text = "unit";
        attrs.emplace_back(name, unit);
      }
    } while (accept(','));
    expect('}', "closing an attribute dictionary");
    return attrs;
  }

  void module(Module& m) {
    skip_space();
    if (accept('@')) identifier("the module name");
    if (keyword("attributes")) m.attrs = dictionary();
    expect('{', "opening the module body");
    bool seen_main = false;
    while (!accept('}')) {
      if (pos_ >= s_.size()) throw error("the module body is not closed");
      Position at = (skip_space(), here_);
      if (!keyword("func.func")) throw error(cat("expected func.func in the module, found ", found()));
      if (seen_main) throw error_at("only one function (@main) is read", at);
      function(m, at);
      seen_main = true;
    }
    if (!seen_main) throw error("the module has no func.func @main");
    skip_location();
  }

  void function(Module& m, Position at) {
    if (!keyword("private")) keyword("public");
    expect('@', "before the function name");
    std::string name = identifier("the function name");
    if (name != "main") throw error_at(cat("the function is @", name, "; only @main is read"), at);
    expect('(', "opening @main's arguments");
    if (!accept(')')) {
      do {
        Argument arg;
        arg.name = value_name();
        expect(':', cat("after argument ", arg.name));
        arg.type = type();
        skip_space();
        if (peek() == '{') dictionary();
        skip_location();
        m.arguments.push_back(arg);
      } while (accept(','));
      expect(')', "closing @main's arguments");
    }
    skip_space();
    if (peek() == '-' && peek(1) == '>') {
      advance(2);
      skip_space();
      if (peek() == '(')
        type_list();
      else
        type();
    }
    if (keyword("attributes")) dictionary();
    expect('{', "opening @main's body");
    while (!accept('}')) {
      if (pos_ >= s_.size()) throw error("@main's body is not closed");
      m.ops.push_back(operation());
    }
    skip_location();
    if (m.ops.empty() || (m.ops.back().name != "func.return")) throw error_at("@main does not end with a return", at);
  }

  Op operation() {
    skip_space();
    Op op;
    op.at = here_;
    if (peek() == '%') {
      do op.results.push_back(value_name());
      while (accept(','));
      if (accept(':')) throw error("ops with several results (%N:K) are not supported");
      expect('=', "after the op's results");
      skip_space();
    }
    if (peek() == '"') {
      generic_op(op);
    } else if (keyword("return") || keyword("func.return")) {
      return_op(op);
    } else {
      throw error(cat("expected an op in generic form (\"dialect.op\"(...)), found ", found()));
    }
    return op;
  }

  void generic_op(Op& op) {
    op.name = string_literal("the op name");
    expect('(', cat("opening the operands of ", op.name));
    if (!accept(')')) {
      do op.operands.push_back(value_name());
      while (accept(','));
      expect(')', cat("closing the operands of ", op.name));
    }
    skip_space();
    if (peek() == '[') throw error(cat(op.name, ": successors are not supported"));
    if (peek() == '<') {
      advance();
      for (auto& a : dictionary()) op.attrs.push_back(std::move(a));
      expect('>', "closing the op's properties");
      skip_space();
    }
    if (peek() == '(') throw error(cat(op.name, ": ops with regions are not supported"));
    if (peek() == '{')
      for (auto& a : dictionary()) op.attrs.push_back(std::move(a));
    expect(':', cat("before the type of ", op.name));
    op.operand_types = type_list();
    skip_space();
    if (!(peek() == '-' && peek(1) == '>')) throw error(cat("expected '->' in the type of ", op.name));
    advance(2);
    skip_space();
    if (peek() == '(')
      op.result_types = type_list();
    else
      op.result_types = {type()};
    if (op.operand_types.size() != op.operands.size() || op.result_types.size() != op.results.size())
      throw error_at(cat(op.name, ": the type lists operands or results the op does not have"), op.at);
    op_location(op);
    if (op.name == "func.return" && !op.result_types.empty()) throw error_at("func.return has no results", op.at);
  }

  void return_op(Op& op) {
    op.name = "func.return";
    skip_space();
    if (peek() == '%') {
      do op.operands.push_back(value_name());
      while (accept(','));
      expect(':', "before the returned types");
      do op.operand_types.push_back(type());
      while (accept(','));
    }
    if (op.operand_types.size() != op.operands.size())
      throw error_at("return lists a different number of values and types", op.at);
    op_location(op);
  }

  // The raw text is kept in the op (which moves into the module's vector) and resolved once
  // every alias is known.
  void op_location(Op& op) {
    skip_space();
    if (!keyword("loc")) return;
    expect('(', "after loc");
    op.location = balanced('(', ')');
  }

  const std::string& s_;
  std::string source_;
  size_t pos_ = 0;
  Position here_;
  std::map<std::string, std::string> aliases_;
  int array_depth_ = 0;
};

}  // namespace

Module parse_module(const std::string& text, const std::string& source) { return Parser(text, source).run(); }

namespace {

std::string storage_dtype(const std::string& t) {
  if (t == "f32") return "float32";
  if (t == "f16") return "float16";
  for (const char* bits : {"8", "16", "32"}) {
    if (t == cat("i", bits) || t == cat("si", bits)) return cat("int", bits);
    if (t == cat("ui", bits) || t == cat("u", bits)) return cat("uint", bits);
  }
  throw Error(cat("element type ", t, " has no TpuLang dtype (float32, float16 or 8/16/32-bit integers)"));
}

std::pair<double, int64_t> quant_param(const std::string& text) {
  char* end = nullptr;
  double scale = std::strtod(text.c_str(), &end);
  int64_t zp = 0;
  if (*end == ':') zp = std::strtoll(end + 1, &end, 10);
  if (end == text.c_str() || *end != '\0') throw Error(cat("malformed quantization parameter '", text, "'"));
  return {scale, zp};
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n"), e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// !quant.uniform<i8:f32, 0.5:3> or !quant.uniform<u8:f32:1, {0.5:3,0.25}>
void parse_quant(const std::string& text, TensorType& t) {
  const std::string head = "!quant.uniform<";
  if (text.rfind(head, 0) != 0 || text.back() != '>')
    throw Error(cat("element type ", text, " is not a float, an integer or !quant.uniform<...>"));
  const std::string body = text.substr(head.size(), text.size() - head.size() - 1);
  const size_t comma = body.find(',');
  if (comma == std::string::npos) throw Error(cat("malformed quantized type ", text));
  const std::string storage = body.substr(0, body.find(':'));
  if (storage.find('<') != std::string::npos) throw Error(cat("storage ranges are not supported: ", text));
  t.dtype = storage_dtype(storage);
  const std::string types = body.substr(0, comma);
  const size_t axis_colon = types.find(':', storage.size() + 1);
  std::string params = trim(body.substr(comma + 1));
  std::vector<std::string> parts;
  if (axis_colon != std::string::npos) {
    t.quant_axis = std::strtoll(types.c_str() + axis_colon + 1, nullptr, 10);
    if (params.size() < 2 || params.front() != '{' || params.back() != '}')
      throw Error(cat("malformed per-axis quantized type ", text));
    params = params.substr(1, params.size() - 2);
    for (size_t start = 0;;) {
      size_t next = params.find(',', start);
      parts.push_back(trim(params.substr(start, next - start)));
      if (next == std::string::npos) break;
      start = next + 1;
    }
  } else {
    parts.push_back(params);
  }
  bool any_zp = false;
  for (const std::string& p : parts) {
    auto [scale, zp] = quant_param(p);
    t.scale.push_back(scale);
    t.zero_point.push_back(zp);
    any_zp = any_zp || zp != 0;
  }
  if (!any_zp) t.zero_point.clear();
}

}  // namespace

TensorType parse_tensor_type(const std::string& text) {
  TensorType t;
  if (text == "none") {
    t.none = true;
    return t;
  }
  const std::string head = "tensor<";
  if (text.rfind(head, 0) != 0 || text.back() != '>')
    throw Error(cat("type ", text, " is not a tensor type (tensor<...>) or none"));
  const std::string body = text.substr(head.size(), text.size() - head.size() - 1);
  size_t pos = 0;
  while (pos < body.size()) {
    if (body[pos] == '?' || body[pos] == '*') throw Error(cat("type ", text, " has unknown dimensions"));
    size_t end = pos;
    while (end < body.size() && std::isdigit(static_cast<unsigned char>(body[end]))) ++end;
    if (end == pos || end >= body.size() || body[end] != 'x') break;
    t.shape.push_back(std::strtoll(body.c_str() + pos, nullptr, 10));
    pos = end + 1;
  }
  const std::string element = body.substr(pos);
  if (element.rfind("!quant.", 0) == 0) {
    parse_quant(element, t);
    return t;
  }
  if (element.find(',') != std::string::npos) throw Error(cat("type ", text, ": tensor encodings are not supported"));
  t.dtype = storage_dtype(element);
  return t;
}

}  // namespace kiln::tpulang::mlir
