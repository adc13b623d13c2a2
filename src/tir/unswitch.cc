#include "kiln/tir/unswitch.h"

#include <algorithm>
#include <vector>

#include "kiln/tir/functor.h"

namespace kiln::tir {

namespace {

// Variables that take new values inside `loop`: its own, nested loops' and lets'.
std::vector<Var> vars_bound_in(const For& loop) {
  std::vector<Var> vars = {loop.loop_var};
  visit_stmts(loop.body, [&](const Stmt& s) {
    if (const For* f = s.as<For>()) vars.push_back(f->loop_var);
    if (const LetStmt* let = s.as<LetStmt>()) vars.push_back(let->var);
  });
  return vars;
}

// Buffers that `loop` may write, by a store or through an address it passes to an extern call: a
// condition reading one of them may change between iterations.
std::vector<const BufferNode*> buffers_written_in(const For& loop) {
  std::vector<const BufferNode*> written;
  visit_stmts(loop.body, [&](const Stmt& s) {
    if (const BufferStore* store = s.as<BufferStore>()) written.push_back(store->buffer.get());
  });
  visit_exprs(loop.body, [&](const PrimExpr& e) {
    if (e.kind() == ExprKind::kAddressOf) written.push_back(e->buffer.get());
  });
  return written;
}

// Whether `e` loads from one of `buffers` or calls an extern function (which may read anything).
bool reads_any(const PrimExpr& e, const std::vector<const BufferNode*>& buffers) {
  bool reads = false;
  visit_exprs(e, [&](const PrimExpr& x) {
    if (x.kind() == ExprKind::kExternCall)
      reads = true;
    else if (x.kind() == ExprKind::kLoad && std::find(buffers.begin(), buffers.end(), x->buffer.get()) != buffers.end())
      reads = true;
  });
  return reads;
}

// The condition of the first select in `body` that is the same on every iteration, if any.
PrimExpr invariant_condition(const For& loop) {
  const std::vector<Var> bound = vars_bound_in(loop);
  const std::vector<const BufferNode*> written = buffers_written_in(loop);
  PrimExpr found;
  visit_exprs(loop.body, [&](const PrimExpr& e) {
    if (found.defined() || e.kind() != ExprKind::kSelect) return;
    const PrimExpr& condition = e->operands[0];
    if (reads_any(condition, written)) return;
    for (const Var& v : bound)
      if (uses_var(condition, v)) return;
    found = condition;
  });
  return found;
}

// Every select on `condition` replaced by the operand it takes when the condition is `value`.
class ResolveSelect : public Mutator {
 public:
  ResolveSelect(PrimExpr condition, bool value) : condition_(std::move(condition)), value_(value) {}

  PrimExpr mutate_expr(const PrimExpr& e) override {
    if (e.kind() == ExprKind::kSelect && expr_equal(e->operands[0], condition_))
      return mutate_expr(e->operands[value_ ? 1 : 2]);
    return mutate_expr_children(e);
  }

 private:
  PrimExpr condition_;
  bool value_;
};

class Unswitcher : public Mutator {
 public:
  explicit Unswitcher(int max_copies) : max_copies_(max_copies) {}

  Stmt mutate_stmt(const Stmt& s) override {
    Stmt out = mutate_stmt_children(s);
    const For* loop = out.as<For>();
    if (!loop || loop->kind != ForKind::kVectorized) return out;
    int copies = 1;
    return unswitch(*loop, copies);
  }

 private:
  // `copies` counts the copies of the original loop made so far.
  Stmt unswitch(const For& loop, int& copies) {
    if (copies >= max_copies_) return loop;
    PrimExpr condition = invariant_condition(loop);
    if (!condition.defined()) return loop;
    ++copies;
    For then_loop = loop, else_loop = loop;
    then_loop.body = ResolveSelect(condition, true).mutate_stmt(loop.body);
    else_loop.body = ResolveSelect(condition, false).mutate_stmt(loop.body);
    Stmt then_case = unswitch(then_loop, copies);
    Stmt else_case = unswitch(else_loop, copies);
    return IfThenElse{condition, then_case, else_case};
  }

  int max_copies_;
};

}  // namespace

Stmt unswitch_vector_loops(const Stmt& s, int max_copies) { return Unswitcher(max_copies).mutate_stmt(s); }

PrimFunc unswitch_vector_loops(const PrimFunc& f, int max_copies) {
  return PrimFunc{f.name, f.params, unswitch_vector_loops(f.body, max_copies)};
}

}  // namespace kiln::tir
