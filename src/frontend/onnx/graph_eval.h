// Evaluating parts of the graph while it is being built.
#pragma once

#include <optional>
#include <unordered_map>

#include "kiln/ir/expr.h"

namespace kiln::frontend {

// The value of `e` computed now with the reference interpreter, when every variable it
// reaches has a value in `known` (initializer params); nullopt when one has not or when
// evaluation fails.
std::optional<NDArray> evaluate_at_import(const Expr& e, const std::unordered_map<const VarNode*, NDArray>& known);

}  // namespace kiln::frontend
