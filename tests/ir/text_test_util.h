// Helpers for the IR text tests: whitespace-insensitive comparison and long chains.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/expr.h"
#include "kiln/ir/visit.h"

namespace kiln::testing {

// `text` with every run of whitespace collapsed to one space, trimmed at both ends.
inline std::string squash(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// fn (%x: Tensor[(2), float32]) { %0 = add(%x, %x); %1 = add(%0, %0); ... } with n adds.
inline Function add_chain(int n) {
  Var x = make_var("x", tensor_type({2}, DType::kFloat32));
  Expr e = x;
  for (int i = 0; i < n; ++i) e = call_op("add", {e, e});
  return make_function({x}, e);
}

// Releasing a 50,000-deep chain through its root recurses once per node in the
// shared_ptr destructors, deep enough to overflow the stack under ASan. A keeper declared
// before the chain holds every node and releases them parents first.
class ReleaseParentsFirst {
 public:
  ReleaseParentsFirst() = default;
  ReleaseParentsFirst(const ReleaseParentsFirst&) = delete;
  ReleaseParentsFirst& operator=(const ReleaseParentsFirst&) = delete;
  ~ReleaseParentsFirst() {
    while (!nodes_.empty()) nodes_.pop_back();
  }
  void hold(const Expr& root) {
    post_order_visit(root, [&](const Expr& e) { nodes_.push_back(e); });
  }

 private:
  std::vector<Expr> nodes_;
};

}  // namespace kiln::testing
