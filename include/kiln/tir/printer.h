// Readable, TVMScript-like text of tir for debugging and tests:
//
//   @prim_func
//   def add(A: Buffer((4,), "float32"), B: Buffer((4,), "float32")):
//     for i in range(4):
//       B[i] = A[i] + 1.0f
#pragma once

#include <string>

#include "kiln/tir/expr.h"
#include "kiln/tir/stmt.h"

namespace kiln::tir {

std::string to_string(const PrimExpr& e);
std::string to_string(const Stmt& s);
std::string to_string(const PrimFunc& f);

}  // namespace kiln::tir
