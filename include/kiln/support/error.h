// The one error type kiln throws. It carries where the problem is (file, node, op)
// and, when known, what was expected and what was found, so the command line can
// print a single precise line.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace kiln {

class Error : public std::exception {
 public:
  explicit Error(std::string message) : message_(std::move(message)) { compose(); }

  Error& file(std::string f) { return set(file_, std::move(f)); }
  Error& node(std::string n) { return set(node_, std::move(n)); }
  Error& op(std::string o) { return set(op_, std::move(o)); }
  Error& expected(std::string expected, std::string found) {
    expected_ = std::move(expected);
    return set(found_, std::move(found));
  }

  // A broken invariant inside kiln rather than a problem with the user's model or input:
  // the text says so, and that it should be reported.
  static Error bug(std::string message) {
    Error e(std::move(message));
    e.internal_ = true;
    e.compose();
    return e;
  }
  bool is_bug() const { return internal_; }

  const std::string& message() const { return message_; }
  const std::string& file() const { return file_; }
  const std::string& node() const { return node_; }
  const std::string& op() const { return op_; }
  const char* what() const noexcept override { return text_.c_str(); }

 private:
  Error& set(std::string& field, std::string value) {
    if (field.empty()) field = std::move(value);  // innermost context wins
    compose();
    return *this;
  }
  void compose();

  std::string message_, file_, node_, op_, expected_, found_, text_;
  bool internal_ = false;
};

// Concatenates anything streamable: cat("axis ", 3, " out of range").
template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// Throws Error::bug when an invariant kiln itself maintains does not hold.
template <class... Args>
void check_invariant(bool condition, const Args&... message) {
  if (!condition) throw Error::bug(cat(message...));
}

// Throws an Error when a condition about user input does not hold.
template <class... Args>
void check(bool condition, const Args&... message) {
  if (!condition) throw Error(cat(message...));
}

}  // namespace kiln
