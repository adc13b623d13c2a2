// Arithmetic simplification of tir: constant folding, a canonical affine form for index
// expressions (linear terms collected per variable), floordiv/floormod folding from variable
// bounds, and statement clean-up (extent-1 loops, constant conditions, empty sequences).
#pragma once

#include <optional>
#include <unordered_map>

#include "kiln/tir/expr.h"
#include "kiln/tir/stmt.h"

namespace kiln::tir {

// Inclusive integer interval.
struct IntRange {
  int64_t min = 0;
  int64_t max = 0;
};

class Analyzer {
 public:
  // Declares v in [min, min + extent).
  void bind(const Var& v, int64_t min, int64_t extent);
  void unbind(const Var& v);
  std::optional<IntRange> var_range(const PrimExpr& v) const;

  // Bounds of an integer expression from the bound variables; nullopt when unknown.
  std::optional<IntRange> bound(const PrimExpr& e) const;
  PrimExpr simplify(const PrimExpr& e) const;
  // True when `condition` simplifies to true.
  bool can_prove(const PrimExpr& condition) const;
  bool is_non_negative(const PrimExpr& e) const;

 private:
  std::unordered_map<const ExprNode*, IntRange> ranges_;
};

PrimExpr simplify(const PrimExpr& e);
// `analyzer` may carry ranges of variables bound outside `s`.
Stmt simplify(const Stmt& s, Analyzer analyzer = {});
PrimFunc simplify(const PrimFunc& f);

}  // namespace kiln::tir
