#include "kiln/tir/functor.h"

#include <type_traits>

namespace kiln::tir {

std::vector<PrimExpr> Mutator::mutate_exprs(const std::vector<PrimExpr>& exprs) {
  std::vector<PrimExpr> out;
  out.reserve(exprs.size());
  for (const auto& e : exprs) out.push_back(mutate_expr(e));
  return out;
}

PrimExpr Mutator::mutate_expr_children(const PrimExpr& e) {
  if (e->operands.empty()) return e;
  return with_operands(e, mutate_exprs(e->operands));
}

Stmt Mutator::mutate_stmt_children(const Stmt& s) {
  return std::visit(
      [&](const auto& n) -> Stmt {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, For>) {
          return For{n.loop_var, mutate_expr(n.min), mutate_expr(n.extent), n.kind, mutate_stmt(n.body)};
        } else if constexpr (std::is_same_v<T, BufferStore>) {
          return BufferStore{n.buffer, mutate_exprs(n.indices), mutate_expr(n.value)};
        } else if constexpr (std::is_same_v<T, Allocate>) {
          return Allocate{n.buffer, mutate_stmt(n.body)};
        } else if constexpr (std::is_same_v<T, LetStmt>) {
          return LetStmt{n.var, mutate_expr(n.value), mutate_stmt(n.body)};
        } else if constexpr (std::is_same_v<T, IfThenElse>) {
          return IfThenElse{mutate_expr(n.condition), mutate_stmt(n.then_case),
                            n.else_case.defined() ? mutate_stmt(n.else_case) : Stmt()};
        } else if constexpr (std::is_same_v<T, SeqStmt>) {
          std::vector<Stmt> stmts;
          for (const auto& c : n.stmts) stmts.push_back(mutate_stmt(c));
          return SeqStmt{std::move(stmts)};
        } else {
          return Evaluate{mutate_expr(n.value)};
        }
      },
      static_cast<const StmtNode::variant&>(s.node()));
}

void visit_exprs(const PrimExpr& e, const std::function<void(const PrimExpr&)>& fn) {
  if (!e.defined()) return;
  fn(e);
  for (const auto& op : e->operands) visit_exprs(op, fn);
}

void visit_stmts(const Stmt& s, const std::function<void(const Stmt&)>& fn) {
  if (!s.defined()) return;
  fn(s);
  if (const auto* n = s.as<For>()) visit_stmts(n->body, fn);
  if (const auto* n = s.as<Allocate>()) visit_stmts(n->body, fn);
  if (const auto* n = s.as<LetStmt>()) visit_stmts(n->body, fn);
  if (const auto* n = s.as<IfThenElse>()) {
    visit_stmts(n->then_case, fn);
    visit_stmts(n->else_case, fn);
  }
  if (const auto* n = s.as<SeqStmt>())
    for (const auto& c : n->stmts) visit_stmts(c, fn);
}

void visit_exprs(const Stmt& s, const std::function<void(const PrimExpr&)>& fn) {
  visit_stmts(s, [&](const Stmt& st) {
    if (const auto* n = st.as<For>()) {
      visit_exprs(n->loop_var, fn);
      visit_exprs(n->min, fn);
      visit_exprs(n->extent, fn);
    } else if (const auto* n = st.as<BufferStore>()) {
      for (const auto& i : n->indices) visit_exprs(i, fn);
      visit_exprs(n->value, fn);
    } else if (const auto* n = st.as<LetStmt>()) {
      visit_exprs(n->var, fn);
      visit_exprs(n->value, fn);
    } else if (const auto* n = st.as<IfThenElse>()) {
      visit_exprs(n->condition, fn);
    } else if (const auto* n = st.as<Evaluate>()) {
      visit_exprs(n->value, fn);
    }
  });
}

namespace {
class Substituter : public Mutator {
 public:
  explicit Substituter(const VarMap& map) : map_(map) {}
  PrimExpr mutate_expr(const PrimExpr& e) override {
    if (e.kind() == ExprKind::kVar) {
      auto it = map_.find(e.get());
      return it == map_.end() ? e : it->second;
    }
    return mutate_expr_children(e);
  }

 private:
  const VarMap& map_;
};
}  // namespace

PrimExpr substitute(const PrimExpr& e, const VarMap& map) {
  if (map.empty()) return e;
  return Substituter(map).mutate_expr(e);
}

Stmt substitute(const Stmt& s, const VarMap& map) {
  if (map.empty()) return s;
  return Substituter(map).mutate_stmt(s);
}

bool uses_var(const PrimExpr& e, const Var& v) {
  bool found = false;
  visit_exprs(e, [&](const PrimExpr& x) { found = found || x.same_as(v); });
  return found;
}

}  // namespace kiln::tir
