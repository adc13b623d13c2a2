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

}  // namespace kiln::testing
