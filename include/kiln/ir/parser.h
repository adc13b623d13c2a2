// Reads Relay text (as written by the printer) back into IR. Errors carry
// "<source>:<line>:<column>" and what was expected.
#pragma once

#include <string>
#include <string_view>

#include "kiln/ir/expr.h"
#include "kiln/ir/module.h"
#include "kiln/support/error.h"  // parse errors are kiln::Error

namespace kiln {

// A module of `def @name(...) { ... }` definitions. A lone `fn (...) { ... }` is
// accepted too and becomes @main.
IRModule parse_module(std::string_view text, const std::string& source_name = "<text>");
// One expression (typically `fn (...) { ... }`).
Expr parse_expr(std::string_view text, const std::string& source_name = "<text>");

}  // namespace kiln
