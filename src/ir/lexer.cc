#include "ir/lexer.h"

#include "ir/text_format.h"
#include "kiln/support/error.h"

namespace kiln::text {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  LexResult run() {
    LexResult out;
    while (true) {
      skip_space_and_comments();
      if (at_end()) break;
      if (peek() == '#') {
        if (directive(out)) break;
        continue;
      }
      out.tokens.push_back(next_token());
    }
    Token end;
    end.kind = Tok::kEnd;
    end.line = line_;
    end.col = col_;
    out.tokens.push_back(std::move(end));
    return out;
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  void advance(size_t n = 1) {
    for (size_t i = 0; i < n && pos_ < text_.size(); ++i) {
      if (text_[pos_] == '\n') {
        ++line_;
        col_ = 1;
      } else {
        ++col_;
      }
      ++pos_;
    }
  }

  [[noreturn]] void fail(int line, int col, const std::string& message) const {
    throw Error(cat(source_, ":", line, ":", col, ": ", message));
  }

  void skip_space_and_comments() {
    while (!at_end()) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else if (c == '/' && peek(1) == '/') {
        while (!at_end() && peek() != '\n') advance();
      } else if (c == '/' && peek(1) == '*') {
        int line = line_, col = col_;
        advance(2);
        while (!at_end() && !(peek() == '*' && peek(1) == '/')) advance();
        if (at_end()) fail(line, col, "unterminated comment: expected '*/', found end of input");
        advance(2);
      } else {
        break;
      }
    }
  }

  // #[version = "0.0.5"] is skipped; #[metadata] ends the tokens (returns true).
  bool directive(LexResult& out) {
    int line = line_, col = col_;
    advance();
    if (peek() != '[') fail(line, col, "expected '#[version = ...]' or '#[metadata]' after '#'");
    advance();
    size_t start = pos_;
    while (is_alpha(peek())) advance();
    std::string_view word = text_.substr(start, pos_ - start);
    if (word == "metadata") {
      if (peek() != ']') fail(line_, col_, "expected ']' after '#[metadata'");
      advance();
      out.has_metadata = true;
      out.metadata = text_.substr(pos_);
      out.metadata_line = line_;
      pos_ = text_.size();
      return true;
    }
    if (word != "version") fail(line, col, cat("unknown directive '#[", word, "'; expected version or metadata"));
    while (!at_end() && peek() != ']') {
      if (peek() == '"') {
        read_string(line_, col_);
      } else {
        advance();
      }
    }
    if (at_end()) fail(line, col, "unterminated '#[version' header: expected ']', found end of input");
    advance();
    return false;
  }

  // Reads a "..." string starting at the opening quote; returns the unescaped contents.
  std::string read_string(int line, int col) {
    advance();
    std::string out;
    while (true) {
      if (at_end()) fail(line, col, "unterminated string: expected '\"', found end of input");
      char c = peek();
      advance();
      if (c == '"') return out;
      if (c == '\\') {
        if (at_end()) fail(line, col, "unterminated string: expected '\"', found end of input");
        char e = peek();
        advance();
        out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      } else {
        out += c;
      }
    }
  }

  // The name after % or @: quoted, or plain characters.
  std::string read_name(char sigil, int line, int col) {
    if (peek() == '"') return read_string(line_, col_);
    size_t n = plain_name_length(text_.substr(pos_));
    if (n == 0) fail(line, col, cat("expected a name after '", sigil, "', found ", found_char()));
    std::string name(text_.substr(pos_, n));
    advance(n);
    return name;
  }

  std::string found_char() const {
    if (at_end()) return "end of input";
    return cat("'", peek(), "'");
  }

  int64_t read_index(int line, int col) {
    size_t start = pos_;
    while (is_digit(peek())) advance();
    std::string_view digits = text_.substr(start, pos_ - start);
    if (digits.size() > 9) fail(line, col, cat("index ", digits, " is too large"));
    return std::stoll(std::string(digits));
  }

  void read_number(Token& t) {
    size_t start = pos_;
    if (peek() == '-') advance();
    while (is_digit(peek())) advance();
    if (peek() == '.' && is_digit(peek(1))) {
      advance();
      while (is_digit(peek())) advance();
    }
    if ((peek() == 'e' || peek() == 'E') &&
        (is_digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_digit(peek(2))))) {
      advance(2);
      while (is_digit(peek())) advance();
    }
    while (is_alnum(peek())) advance();  // dtype suffix: f, f64, i64, u8 ...
    t.kind = Tok::kNumber;
    t.text = std::string(text_.substr(start, pos_ - start));
  }

  void read_ident(Token& t) {
    size_t start = pos_;
    while (true) {
      while (is_alnum(peek())) advance();
      if (peek() == '.' && is_alpha(peek(1))) {
        advance();
        continue;
      }
      break;
    }
    t.kind = Tok::kIdent;
    t.text = std::string(text_.substr(start, pos_ - start));
  }

  Token next_token() {
    Token t;
    t.line = line_;
    t.col = col_;
    char c = peek();
    auto single = [&](Tok kind) {
      t.kind = kind;
      t.text = std::string(1, c);
      advance();
      return t;
    };
    switch (c) {
      case '(': return single(Tok::kLParen);
      case ')': return single(Tok::kRParen);
      case '[': return single(Tok::kLBracket);
      case ']': return single(Tok::kRBracket);
      case '{': return single(Tok::kLBrace);
      case '}': return single(Tok::kRBrace);
      case ',': return single(Tok::kComma);
      case ';': return single(Tok::kSemi);
      case ':': return single(Tok::kColon);
      case '=': return single(Tok::kEqual);
      case '?': return single(Tok::kQuestion);
      default: break;
    }
    if (c == '%') {
      advance();
      if (is_digit(peek())) {
        t.kind = Tok::kLocalNum;
        t.index = read_index(t.line, t.col);
        t.text = std::to_string(t.index);
      } else {
        t.kind = Tok::kLocal;
        t.text = read_name('%', t.line, t.col);
      }
      return t;
    }
    if (c == '@') {
      advance();
      t.kind = Tok::kGlobal;
      t.text = read_name('@', t.line, t.col);
      return t;
    }
    if (c == '"') {
      t.kind = Tok::kString;
      t.text = read_string(t.line, t.col);
      return t;
    }
    if (c == '.' && is_digit(peek(1))) {
      advance();
      t.kind = Tok::kDotIndex;
      t.index = read_index(t.line, t.col);
      t.text = "." + std::to_string(t.index);
      return t;
    }
    if (c == '-') {
      if (peek(1) == '>') {
        advance(2);
        t.kind = Tok::kArrow;
        t.text = "->";
        return t;
      }
      if (is_digit(peek(1))) {
        read_number(t);
        return t;
      }
      return single(Tok::kMinus);
    }
    if (is_digit(c)) {
      read_number(t);
      return t;
    }
    if (is_alpha(c)) {
      read_ident(t);
      return t;
    }
    fail(t.line, t.col, cat("unexpected character '", c, "'"));
  }

  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

}  // namespace

LexResult lex(std::string_view text, const std::string& source) { return Lexer(text, source).run(); }

std::string describe(const Token& token) {
  switch (token.kind) {
    case Tok::kEnd: return "end of input";
    case Tok::kLocal: return cat("'%", name_text(token.text), "'");
    case Tok::kLocalNum: return cat("'%", token.index, "'");
    case Tok::kGlobal: return cat("'@", name_text(token.text), "'");
    case Tok::kNumber: return cat("number ", token.text);
    case Tok::kString: return cat("string ", quote(token.text));
    default: return cat("'", token.text, "'");
  }
}

}  // namespace kiln::text
