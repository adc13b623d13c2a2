// Interpreter internals shared by its files: closures and value/type comparisons.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kiln/interp/interpreter.h"

namespace kiln {

// A function value: a `fn` expression with the values of its free variables, or a
// global function (no captures), named for error messages.
struct Closure {
  Function fn;
  std::vector<std::pair<Var, Value>> captured;
  std::string name;  // "@f" for globals, "a local function" otherwise
};

namespace interp {

// The type of a runtime value (closures: their function's checked type, or null).
Type value_type(const Value& v);
std::string value_type_str(const Value& v);
// True when `v` may be passed where `expected` is declared; unknown dims accept any
// extent, and a null `expected` accepts anything.
bool value_matches(const Type& expected, const Value& v);

}  // namespace interp
}  // namespace kiln
