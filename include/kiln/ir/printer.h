// Relay's text form. Every non-atomic sub-expression gets a `%N = ...;` binding, and
// after InferType each binding carries `/* ty=... */`. Constants that are not scalars
// print as meta[relay.Constant][i] and their contents follow in a #[metadata] section.
#pragma once

#include <string>

#include "kiln/ir/expr.h"
#include "kiln/ir/module.h"

namespace kiln {

struct PrintOptions {
  bool show_types = true;     // /* ty=... */ where types are known
  bool show_metadata = true;  // append the #[metadata] section when constants need it
};

std::string print_module(const IRModule& mod, const PrintOptions& opts = {});
std::string print_expr(const Expr& e, const PrintOptions& opts = {});

}  // namespace kiln
