// Structural equality and hashing up to renaming of bound variables (alpha-equivalence):
// two expressions are equal when they have the same shape, ops, attributes, constants and
// types, and variables correspond by where they are bound. Names do not matter.
#pragma once

#include <cstddef>

#include "kiln/ir/expr.h"
#include "kiln/ir/module.h"

namespace kiln {

bool structural_equal(const Expr& a, const Expr& b);
bool structural_equal(const IRModule& a, const IRModule& b);
size_t structural_hash(const Expr& e);

}  // namespace kiln
