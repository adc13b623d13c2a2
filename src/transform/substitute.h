// Replacing variables by expressions, shared by passes that inline or specialise.
#pragma once

#include <map>

#include "kiln/ir/expr.h"

namespace kiln {

// `e` with every occurrence of the mapped variables replaced.
Expr substitute(const Expr& e, const std::map<const VarNode*, Expr>& binding);

}  // namespace kiln
