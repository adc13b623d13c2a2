// A recursive-descent parser over the tokens of ir/lexer. Statement sequences
// (`%N = ...;`, `let ...;`) are read in a loop, so long bodies need no stack; nested
// expressions recurse, up to kMaxDepth levels.
#include "kiln/ir/parser.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "ir/lexer.h"
#include "ir/text_format.h"
#include "kiln/ir/op.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

namespace {

using text::Tok;
using text::Token;

// Deep enough for any real program, shallow enough for an 8 MiB stack under ASan.
constexpr int kMaxDepth = 1000;

bool is_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Length of the leading decimal number (digits, fraction, exponent) of `text`.
size_t numeric_length(std::string_view text) {
  size_t i = 0;
  auto digits = [&] {
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  };
  digits();
  if (i < text.size() && text[i] == '.') {
    ++i;
    digits();
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    digits();
  }
  return i;
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& source) : source_(source), lexed_(text::lex(text, source)) {
    load_metadata();
  }

  IRModule module() {
    IRModule mod;
    while (!at(Tok::kEnd)) {
      const Token& start = peek();
      std::string name;
      if (at_ident("def")) {
        next();
        name = expect(Tok::kGlobal, "a function name '@name' after 'def'").text;
      } else if (at_ident("fn")) {
        next();
        name = "main";
      } else {
        fail(start, "'def' or 'fn'");
      }
      if (mod.contains(name)) fail_at(start, cat("function @", name, " is defined twice"));
      mod.add(name, function_rest());
    }
    for (const auto& [name, token] : global_refs_)
      if (!mod.contains(name)) fail_at(token, cat("call of undefined function @", name));
    return mod;
  }

  Expr expression() {
    allow_free_vars_ = true;
    Expr e = sequence();
    if (!at(Tok::kEnd)) fail(peek(), "end of input");
    return e;
  }

 private:
  // ---- tokens ----
  const Token& peek(size_t ahead = 0) const {
    size_t i = std::min(pos_ + ahead, lexed_.tokens.size() - 1);
    return lexed_.tokens[i];
  }
  const Token& next() {
    const Token& t = lexed_.tokens[pos_];
    if (pos_ + 1 < lexed_.tokens.size()) ++pos_;
    return t;
  }
  bool at(Tok kind) const { return peek().kind == kind; }
  bool at_ident(std::string_view word) const { return at(Tok::kIdent) && peek().text == word; }
  const Token& expect(Tok kind, const std::string& what) {
    if (!at(kind)) fail(peek(), what);
    return next();
  }
  void expect_ident(std::string_view word) {
    if (!at_ident(word)) fail(peek(), cat("'", word, "'"));
    next();
  }

  [[noreturn]] void fail(const Token& found, const std::string& expected) const {
    throw Error(
        cat(source_, ":", found.line, ":", found.col, ": expected ", expected, ", found ", text::describe(found)));
  }
  [[noreturn]] void fail_at(const Token& where, const std::string& message) const {
    throw Error(cat(source_, ":", where.line, ":", where.col, ": ", message));
  }

  class DepthGuard {
   public:
    DepthGuard(Parser& p, const Token& where) : p_(p) {
      if (++p_.depth_ > kMaxDepth) p_.fail_at(where, cat("nesting deeper than ", kMaxDepth, " levels"));
    }
    ~DepthGuard() { --p_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser& p_;
  };

  // ---- scopes: local variables by name, and %N bindings ----
  struct Scope {
    std::vector<std::string> names;
    std::vector<int64_t> numbers;
  };

  void push_scope() { scopes_.emplace_back(); }
  void pop_scope() {
    for (const auto& name : scopes_.back().names) {
      auto it = vars_.find(name);
      it->second.pop_back();
      if (it->second.empty()) vars_.erase(it);
    }
    for (int64_t n : scopes_.back().numbers) bindings_.erase(n);
    scopes_.pop_back();
  }
  void declare(const Var& v) {
    vars_[v->name].push_back(v);
    scopes_.back().names.push_back(v->name);
  }
  const Var* find_var(const std::string& name) const {
    auto it = vars_.find(name);
    return it == vars_.end() ? nullptr : &it->second.back();
  }

  // %name, or (as Relay prints a tuple field of a variable) %name.0 when only %name exists.
  Expr local(const Token& t) {
    if (const Var* v = find_var(t.text)) return *v;
    for (size_t dot = t.text.rfind('.'); dot != std::string::npos && dot > 0; dot = t.text.rfind('.', dot - 1)) {
      std::string_view rest = std::string_view(t.text).substr(dot + 1);
      bool all_indices = true;
      for (const auto& part : split(rest, '.')) all_indices = all_indices && is_digits(part) && part.size() < 10;
      if (!all_indices) break;
      if (const Var* v = find_var(t.text.substr(0, dot))) {
        Expr e = *v;
        for (const auto& part : split(rest, '.')) e = make_tuple_get_item(e, std::stoi(part));
        return e;
      }
    }
    if (allow_free_vars_) {
      Var& free = free_vars_[t.text];
      if (!free) free = make_var(t.text);
      return free;
    }
    fail_at(t, cat("undefined variable %", text::name_text(t.text)));
  }

  // ---- statements ----
  // `%N = expr;` and `let %x = expr;` statements followed by the result expression.
  Expr sequence() {
    push_scope();
    std::vector<std::pair<Var, Expr>> lets;
    Expr result;
    while (true) {
      if (at(Tok::kLocalNum) && peek(1).kind == Tok::kEqual) {
        const Token& number = next();
        next();
        Expr value = expr();
        expect(Tok::kSemi, "';' after a binding");
        if (bindings_.count(number.index)) fail_at(number, cat("%", number.index, " is bound twice"));
        bindings_[number.index] = value;
        scopes_.back().numbers.push_back(number.index);
      } else if (at_ident("free_var")) {
        // TVM declares the free variables of a printed expression this way.
        next();
        const Token& name = expect(Tok::kLocal, "a variable '%name' after 'free_var'");
        Type type;
        if (at(Tok::kColon)) {
          next();
          type = parse_type();
        }
        expect(Tok::kSemi, "';' after free_var");
        declare(make_var(name.text, type));
      } else if (at_ident("let")) {
        next();
        const Token& name = expect(Tok::kLocal, "a variable '%name' after 'let'");
        Type type;
        if (at(Tok::kColon)) {
          next();
          type = parse_type();
        }
        expect(Tok::kEqual, "'=' in let");
        Expr value = expr();
        expect(Tok::kSemi, "';' after a let binding");
        Var v = make_var(name.text, type);
        declare(v);
        lets.emplace_back(v, value);
      } else {
        result = expr();
        break;
      }
    }
    pop_scope();
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) result = make_let(it->first, it->second, result);
    return result;
  }

  // `{ sequence }`
  Expr block() {
    expect(Tok::kLBrace, "'{'");
    Expr e = sequence();
    expect(Tok::kRBrace, "'}'");
    return e;
  }

  // After `fn` or `def @name`: (params, attrs) [-> type] { body }
  Function function_rest() {
    expect(Tok::kLParen, "'(' before the parameters");
    push_scope();
    std::vector<Var> params;
    Attrs attrs;
    if (!at(Tok::kRParen)) {
      while (true) {
        if (at(Tok::kLocal)) {
          const Token& name = next();
          Type type;
          if (at(Tok::kColon)) {
            next();
            type = parse_type();
          }
          for (const auto& p : params)
            if (p->name == name.text)
              fail_at(name, cat("parameter %", text::name_text(name.text), " is declared twice"));
          params.push_back(make_var(name.text, type));
          declare(params.back());
        } else if (at(Tok::kIdent) && peek(1).kind == Tok::kEqual) {
          attribute(attrs);
        } else {
          fail(peek(), "a parameter '%name' or an attribute 'name=value'");
        }
        if (!at(Tok::kComma)) break;
        next();
      }
    }
    expect(Tok::kRParen, "',' or ')' in the parameter list");
    Type ret;
    if (at(Tok::kArrow)) {
      next();
      ret = parse_type();
    }
    Expr body = block();
    pop_scope();
    return make_function(std::move(params), std::move(body), std::move(ret), std::move(attrs));
  }

  // ---- expressions ----
  Expr expr() {
    DepthGuard guard(*this, peek());
    // Errors about a node long after parsing name the line it was written on.
    SourceScope written_at(cat("line ", peek().line, ":", peek().col));
    Expr e = primary();
    while (true) {
      if (at(Tok::kLParen)) {
        e = call(e);
      } else if (at(Tok::kDotIndex)) {
        e = make_tuple_get_item(e, static_cast<int>(next().index));
      } else {
        return e;
      }
    }
  }

  Expr call(const Expr& callee) {
    expect(Tok::kLParen, "'('");
    std::vector<Expr> args;
    Attrs attrs;
    if (!at(Tok::kRParen)) {
      while (true) {
        if (at(Tok::kIdent) && peek(1).kind == Tok::kEqual) {
          attribute(attrs);
        } else {
          if (!attrs.empty()) fail(peek(), "an attribute 'name=value' (arguments come before attributes)");
          args.push_back(expr());
        }
        if (!at(Tok::kComma)) break;
        next();
      }
    }
    expect(Tok::kRParen, "',' or ')' in the argument list");
    return make_call(callee, std::move(args), std::move(attrs));
  }

  Expr primary() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::kLocal: return local(next());
      case Tok::kLocalNum: {
        next();
        auto it = bindings_.find(t.index);
        if (it == bindings_.end()) fail_at(t, cat("%", t.index, " is used before it is bound"));
        return it->second;
      }
      case Tok::kGlobal: {
        next();
        global_refs_.try_emplace(t.text, t);
        GlobalVar& g = globals_[t.text];
        if (!g) g = make_global_var(t.text);
        return g;
      }
      case Tok::kNumber: return literal(next(), t.text);
      case Tok::kMinus: {
        next();
        if (!at(Tok::kIdent)) fail(peek(), "a number after '-'");
        return literal(t, "-" + next().text);
      }
      case Tok::kLParen: return tuple();
      case Tok::kLBrace: return block();
      case Tok::kIdent: return word();
      default: fail(t, "an expression");
    }
  }

  Expr tuple() {
    expect(Tok::kLParen, "'('");
    if (at(Tok::kRParen)) {
      next();
      return make_tuple({});
    }
    Expr first = expr();
    if (at(Tok::kRParen)) {
      next();
      return first;  // parenthesised expression
    }
    std::vector<Expr> fields{first};
    while (at(Tok::kComma)) {
      next();
      if (at(Tok::kRParen)) break;
      fields.push_back(expr());
    }
    expect(Tok::kRParen, "',' or ')' in a tuple");
    return make_tuple(std::move(fields));
  }

  Expr literal(const Token& where, const std::string& spelling) {
    std::string error;
    std::optional<NDArray> value = text::parse_scalar_literal(spelling, &error);
    if (!value) fail_at(where, cat("bad literal '", spelling, "': ", error));
    return make_constant(*value);
  }

  // An expression that starts with a word: fn, if, meta, True/False, nan/inf, or an op.
  Expr word() {
    const Token& t = peek();
    if (t.text == "fn") {
      next();
      return function_rest();
    }
    if (t.text == "if") return if_expr();
    if (t.text == "loop" && peek(1).kind == Tok::kLParen) return loop_expr();
    if (t.text == "meta") return meta_ref();
    if (t.text == "True" || t.text == "False") {
      next();
      NDArray b = NDArray::empty({}, DType::kBool);
      *b.data<bool>() = t.text == "True";
      return make_constant(b);
    }
    if (t.text == "def" || t.text == "let" || t.text == "else") fail(t, "an expression");
    if (starts_with(t.text, "nan") || starts_with(t.text, "inf")) {
      std::string error;
      if (auto value = text::parse_scalar_literal(t.text, &error)) {
        next();
        return make_constant(*value);
      }
    }
    if (!OpRegistry::global().find(t.text)) fail_at(t, cat("unknown op '", t.text, "'"));
    next();
    return op_expr(t.text);
  }

  Expr if_expr() {
    expect_ident("if");
    expect(Tok::kLParen, "'(' after 'if'");
    Expr cond = expr();
    expect(Tok::kRParen, "')' after the condition");
    Expr then_branch = block();
    expect_ident("else");
    Expr else_branch = block();
    return make_if(std::move(cond), std::move(then_branch), std::move(else_branch));
  }

  // loop(%trip_count, %cond, %carried...) %body
  Expr loop_expr() {
    expect_ident("loop");
    expect(Tok::kLParen, "'(' after 'loop'");
    std::vector<Expr> operands;
    if (peek().kind != Tok::kRParen) {
      operands.push_back(expr());
      while (peek().kind == Tok::kComma) {
        next();
        operands.push_back(expr());
      }
    }
    expect(Tok::kRParen, "')' after the loop's operands");
    const Token& body_start = peek();
    Function body = as_function(expr());
    if (!body) fail_at(body_start, "a function as the loop's body");
    if (operands.size() < 2) fail_at(body_start, "a loop needs a trip count and a condition");
    Expr trip = operands[0], cond = operands[1];
    return make_loop(std::move(trip), std::move(cond), std::vector<Expr>(operands.begin() + 2, operands.end()),
                     std::move(body));
  }

  // meta[relay.Constant][i]
  Expr meta_ref() {
    const Token& start = next();
    expect(Tok::kLBracket, "'[' after 'meta'");
    const Token& kind = expect(Tok::kIdent, "a metadata kind such as relay.Constant");
    if (kind.text != "relay.Constant")
      fail_at(kind, cat("unsupported metadata kind '", kind.text, "'; only relay.Constant is supported"));
    expect(Tok::kRBracket, "']'");
    expect(Tok::kLBracket, "'['");
    const Token& index = expect(Tok::kNumber, "a constant index");
    if (!is_digits(index.text)) fail(index, "a constant index");
    expect(Tok::kRBracket, "']'");
    if (!lexed_.has_metadata) fail_at(start, "meta[relay.Constant] used but the text has no #[metadata] section");
    size_t i = index.text.size() > 9 ? constants_.size() : std::stoull(index.text);
    if (i >= constants_.size())
      fail_at(index, cat("meta[relay.Constant][", index.text, "] is out of range: the metadata holds ",
                         constants_.size(), " constants"));
    return constants_[i];
  }

  // ---- attributes ----
  void attribute(Attrs& attrs) {
    const Token& name = next();
    expect(Tok::kEqual, "'='");
    if (attrs.has(name.text)) fail_at(name, cat("attribute '", name.text, "' is given twice"));
    attrs.set(name.text, attr_value());
  }

  AttrValue attr_value() {
    DepthGuard guard(*this, peek());
    const Token& t = peek();
    switch (t.kind) {
      case Tok::kNumber: return number_attr(next(), t.text);
      case Tok::kMinus: {
        next();
        if (!at(Tok::kIdent)) fail(peek(), "a number after '-'");
        return number_attr(t, "-" + next().text);
      }
      case Tok::kString: return AttrValue(next().text);
      case Tok::kIdent: {
        if (t.text == "True" || t.text == "False") return AttrValue(next().text == "True");
        if (t.text == "None") {
          next();
          return AttrValue();
        }
        if (starts_with(t.text, "nan") || starts_with(t.text, "inf")) return number_attr(next(), t.text);
        fail(t, "an attribute value");
      }
      case Tok::kLBracket:
      case Tok::kLParen: {
        Tok close = t.kind == Tok::kLBracket ? Tok::kRBracket : Tok::kRParen;
        next();
        AttrValue::List items;
        while (!at(close)) {
          items.push_back(attr_value());
          if (!at(Tok::kComma)) break;
          next();
        }
        expect(close, close == Tok::kRBracket ? "',' or ']' in a list" : "',' or ')' in a list");
        return AttrValue(std::move(items));
      }
      default: fail(t, "an attribute value");
    }
  }

  // 3 and 3i64 are ints; 1.5, 1e-05f, 2f, nanf and inff are floats (kept as double).
  AttrValue number_attr(const Token& where, std::string_view spelling) {
    std::string_view s = spelling;
    bool negative = !s.empty() && s[0] == '-';
    std::string_view body = negative ? s.substr(1) : s;
    bool special = starts_with(body, "nan") || starts_with(body, "inf");
    size_t end = special ? 3 : numeric_length(body);
    std::string_view number = body.substr(0, end);
    std::string_view suffix = body.substr(end);
    bool float_syntax = special || number.find_first_of(".eE") != std::string_view::npos;
    bool float_suffix = suffix == "f" || suffix == "f16" || suffix == "f32" || suffix == "f64";
    bool int_suffix = suffix == "i32" || suffix == "i64";
    if (!suffix.empty() && !float_suffix && !int_suffix)
      fail_at(where, cat("bad attribute value '", spelling, "': unknown suffix '", suffix, "'"));
    if (float_syntax || float_suffix) {
      if (int_suffix) fail_at(where, cat("bad attribute value '", spelling, "'"));
      double d = 0;
      if (special) {
        d = body[0] == 'n' ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
      } else {
        auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), d);
        if (ec == std::errc::result_out_of_range) {
          d = std::strtod(std::string(number).c_str(), nullptr);  // underflow to a denormal or zero
          if (std::isinf(d)) fail_at(where, cat("attribute value '", spelling, "' is out of range"));
        } else if (ec != std::errc() || p != number.data() + number.size()) {
          fail_at(where, cat("bad attribute value '", spelling, "'"));
        }
      }
      return AttrValue(negative ? -d : d);
    }
    uint64_t magnitude = 0;
    auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), magnitude);
    if (ec != std::errc() || p != number.data() + number.size() ||
        magnitude > (negative ? 9223372036854775808ULL : 9223372036854775807ULL))
      fail_at(where, cat("integer attribute value '", spelling, "' is out of range"));
    return AttrValue(negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude));
  }

  // ---- types ----
  Type parse_type() {
    DepthGuard guard(*this, peek());
    const Token& t = peek();
    if (t.kind == Tok::kLParen) {
      next();
      std::vector<Type> fields;
      while (!at(Tok::kRParen)) {
        fields.push_back(parse_type());
        if (!at(Tok::kComma)) break;
        next();
      }
      expect(Tok::kRParen, "',' or ')' in a tuple type");
      return tuple_type(std::move(fields));
    }
    if (t.kind != Tok::kIdent) fail(t, "a type");
    if (t.text == "Tensor") {
      next();
      expect(Tok::kLBracket, "'[' after 'Tensor'");
      expect(Tok::kLParen, "'(' before the shape");
      Shape shape;
      while (!at(Tok::kRParen)) {
        shape.push_back(dimension());
        if (!at(Tok::kComma)) break;
        next();
      }
      expect(Tok::kRParen, "',' or ')' in a shape");
      expect(Tok::kComma, "',' after the shape");
      DType dtype = parse_dtype_token();
      expect(Tok::kRBracket, "']' after the dtype");
      return tensor_type(std::move(shape), dtype);
    }
    if (t.text == "fn") {
      next();
      expect(Tok::kLParen, "'(' in a function type");
      std::vector<Type> params;
      while (!at(Tok::kRParen)) {
        params.push_back(parse_type());
        if (!at(Tok::kComma)) break;
        next();
      }
      expect(Tok::kRParen, "',' or ')' in a function type");
      expect(Tok::kArrow, "'->' in a function type");
      Type ret = parse_type();
      return func_type(std::move(params), std::move(ret));
    }
    DType scalar;
    if (!try_parse_dtype(t.text, &scalar)) fail(t, "a type");
    next();
    return tensor_type({}, scalar);
  }

  int64_t dimension() {
    const Token& t = peek();
    if (t.kind == Tok::kQuestion) {
      next();
      return kAnyDim;
    }
    if (t.kind != Tok::kNumber) fail(t, "a dimension (a number or '?')");
    std::string_view digits = t.text;
    if (ends_with(digits, "i64") || ends_with(digits, "i32")) digits.remove_suffix(3);
    int64_t value = -1;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || p != digits.data() + digits.size() || value < 0)
      fail(t, "a dimension (a non-negative integer or '?')");
    next();
    return value;
  }

  DType parse_dtype_token() {
    const Token& t = peek();
    DType dtype;
    if (t.kind != Tok::kIdent || !try_parse_dtype(t.text, &dtype)) fail(t, "a dtype such as float32");
    next();
    return dtype;
  }

  // ---- metadata: {"relay.Constant": [{"dtype": ..., "shape": [...], "data": base64}, ...]} ----
  void load_metadata() {
    if (!lexed_.has_metadata) return;
    auto bad = [&](const std::string& why) {
      return Error(cat(source_, ":", lexed_.metadata_line, ": malformed #[metadata] section: ", why));
    };
    nlohmann::json meta;
    try {
      meta = nlohmann::json::parse(lexed_.metadata);
    } catch (const nlohmann::json::exception& e) {
      throw bad(e.what());
    }
    if (!meta.is_object()) throw bad("expected a JSON object");
    auto it = meta.find("relay.Constant");
    if (it == meta.end()) return;
    if (!it->is_array()) throw bad("relay.Constant must be a list");
    for (const auto& entry : *it) {
      size_t i = constants_.size();
      if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data") ||
          !entry["dtype"].is_string() || !entry["shape"].is_array() || !entry["data"].is_string())
        throw bad(cat("constant ", i, " needs \"dtype\", \"shape\" and \"data\""));
      DType dtype;
      if (!try_parse_dtype(entry["dtype"].get<std::string>(), &dtype))
        throw bad(cat("constant ", i, " has unknown dtype ", entry["dtype"].dump()));
      Shape shape;
      for (const auto& d : entry["shape"]) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0)
          throw bad(cat("constant ", i, " has a bad shape ", entry["shape"].dump()));
        shape.push_back(d.get<int64_t>());
      }
      std::optional<std::string> bytes = text::base64_decode(entry["data"].get<std::string>());
      if (!bytes) throw bad(cat("constant ", i, " has data that is not base64"));
      NDArray array = NDArray::empty(shape, dtype);
      if (bytes->size() != array.nbytes())
        throw bad(cat("constant ", i, " has ", bytes->size(), " bytes of data, expected ", array.nbytes(), " for ",
                      dtype_name(dtype), shape_str(shape)));
      if (!bytes->empty()) std::memcpy(array.raw(), bytes->data(), bytes->size());
      constants_.push_back(make_constant(array));
    }
  }

  const std::string& source_;
  text::LexResult lexed_;
  size_t pos_ = 0;
  int depth_ = 0;
  bool allow_free_vars_ = false;
  std::vector<Scope> scopes_;
  std::unordered_map<std::string, std::vector<Var>> vars_;
  std::unordered_map<int64_t, Expr> bindings_;
  std::unordered_map<std::string, Var> free_vars_;
  std::unordered_map<std::string, GlobalVar> globals_;
  std::map<std::string, Token> global_refs_;  // first use of each @name, for error messages
  std::vector<Expr> constants_;
};

}  // namespace

IRModule parse_module(std::string_view text, const std::string& source_name) {
  return Parser(text, source_name).module();
}

Expr parse_expr(std::string_view text, const std::string& source_name) {
  return Parser(text, source_name).expression();
}

}  // namespace kiln
