// Traversal and rewriting of tir expressions and statements.
#pragma once

#include <functional>
#include <unordered_map>

#include "kiln/tir/expr.h"
#include "kiln/tir/stmt.h"

namespace kiln::tir {

// Rewrites bottom-up: override mutate_expr / mutate_stmt, and call the *_children helpers for the
// default recursion. Unchanged subtrees are returned as the same nodes.
class Mutator {
 public:
  virtual ~Mutator() = default;
  virtual PrimExpr mutate_expr(const PrimExpr& e) { return mutate_expr_children(e); }
  virtual Stmt mutate_stmt(const Stmt& s) { return mutate_stmt_children(s); }

 protected:
  PrimExpr mutate_expr_children(const PrimExpr& e);
  Stmt mutate_stmt_children(const Stmt& s);
  std::vector<PrimExpr> mutate_exprs(const std::vector<PrimExpr>& exprs);
};

// Calls `fn` on every expression node (pre-order), including the expressions inside statements.
void visit_exprs(const PrimExpr& e, const std::function<void(const PrimExpr&)>& fn);
void visit_exprs(const Stmt& s, const std::function<void(const PrimExpr&)>& fn);
// Calls `fn` on every statement node (pre-order).
void visit_stmts(const Stmt& s, const std::function<void(const Stmt&)>& fn);

// Replaces variables (keyed by their node) with expressions.
using VarMap = std::unordered_map<const ExprNode*, PrimExpr>;
PrimExpr substitute(const PrimExpr& e, const VarMap& map);
Stmt substitute(const Stmt& s, const VarMap& map);

bool uses_var(const PrimExpr& e, const Var& v);

}  // namespace kiln::tir
