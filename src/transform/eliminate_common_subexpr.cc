// EliminateCommonSubexpr: computes each value once, as Relay's EliminateCommonSubexpr does.
//   %0 = nn.relu(%x); %1 = nn.relu(%x); add(%0, %1)  ->  %0 = nn.relu(%x); add(%0, %0)
// Two op calls merge when they call the same op with the same argument nodes (pointers,
// after the arguments themselves were merged: the rewrite is bottom-up) and attributes equal
// once the op's defaults are filled in. Constants with the same dtype, shape and bytes merge,
// and so do projections of one tuple at one index and tuples of the same fields.
// Nondeterministic ops never merge: two draws are two samples, and each `unreachable` keeps
// its own message and source. Calls of functions are left alone, since a function may draw.
// The first occurrence in evaluation order survives, with its source.
#include <algorithm>
#include <functional>
#include <unordered_map>
#include <vector>

#include "kiln/ir/op.h"
#include "kiln/ir/visit.h"
#include "kiln/support/error.h"
#include "kiln/transform/pass.h"

namespace kiln {

namespace {

size_t combine(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

size_t hash_pointers(size_t h, const std::vector<Expr>& nodes) {
  for (const Expr& n : nodes) h = combine(h, std::hash<const ExprNode*>()(n.get()));
  return h;
}

// Attributes as the op reads them; attributes it rejects stay as written (and so merge only
// with identical ones) so that type inference, not this pass, reports them.
Attrs normalized(const OpDef& op, const Attrs& attrs) {
  try {
    return op.normalize(attrs);
  } catch (const Error&) {
    return attrs;
  }
}

// Dtype, shape and at most about 256 of the bytes, evenly spaced: whether two constants merge is
// still decided on all their bytes, but a build no longer hashes every weight byte (ResNet-50's
// 100 MB took 22 ms).
size_t sampled_constant_hash(const NDArray& data) {
  size_t h = combine(0xc0, static_cast<size_t>(data.dtype()));
  for (int64_t d : data.shape()) h = combine(h, static_cast<size_t>(d));
  const auto* bytes = static_cast<const unsigned char*>(data.raw());
  const size_t n = data.nbytes(), step = std::max<size_t>(1, n / 256);
  for (size_t i = 0; i < n; i += step) h = combine(h, bytes[i]);
  return n ? combine(h, bytes[n - 1]) : h;
}

// Attrs' == takes -0.0 for 0.0, which can change a result (clip's bounds); their text cannot.
bool same_attrs(const Attrs& a, const Attrs& b) { return a == b && a.to_string() == b.to_string(); }

class CommonSubexprEliminator : public ExprRewriter {
 protected:
  Expr post(const Expr&, const Expr& rebuilt) override {
    switch (rebuilt->kind) {
      case ExprKind::kConstant: return merge_constant(rebuilt);
      case ExprKind::kCall: return merge_call(rebuilt);
      case ExprKind::kTupleGetItem: {
        const auto& item = *as<TupleGetItemNode>(rebuilt);
        size_t h = combine(hash_pointers(0x7e, {item.tuple}), static_cast<size_t>(item.index));
        return find_or_add(h, rebuilt, [&](const Expr& other) {
          const auto& o = *as<TupleGetItemNode>(other);
          return o.tuple == item.tuple && o.index == item.index;
        });
      }
      case ExprKind::kTuple: {
        const auto& tuple = *as<TupleNode>(rebuilt);
        return find_or_add(hash_pointers(0x70, tuple.fields), rebuilt,
                           [&](const Expr& other) { return as<TupleNode>(other)->fields == tuple.fields; });
      }
      default: return rebuilt;
    }
  }

 private:
  Expr merge_constant(const Expr& e) {
    const NDArray& data = as<ConstantNode>(e)->data;
    // Bytes, not values: 0 and -0 differ, and a NaN equals the same NaN.
    return find_or_add(sampled_constant_hash(data), e,
                       [&](const Expr& other) { return as<ConstantNode>(other)->data.same_as(data); });
  }

  Expr merge_call(const Expr& e) {
    const auto& call = *as<CallNode>(e);
    const OpDef* op = call.op();
    if (!op || op->nondeterministic) return e;
    Attrs attrs = normalized(*op, call.attrs);
    size_t h = hash_pointers(combine(0xca, std::hash<const OpDef*>()(op)), call.args);
    h = combine(h, call.args.size());
    auto& bucket = table_[h];
    for (const auto& [other, other_attrs] : bucket) {
      const auto* o = as<CallNode>(other);
      if (o && o->op() == op && o->args == call.args && same_attrs(other_attrs, attrs)) return other;
    }
    bucket.emplace_back(e, std::move(attrs));
    return e;
  }

  // The node of its kind equal to `e` by `same` that came first, else `e` (remembered).
  Expr find_or_add(size_t h, const Expr& e, const std::function<bool(const Expr&)>& same) {
    auto& bucket = table_[combine(h, static_cast<size_t>(e->kind))];
    for (const auto& entry : bucket)
      if (entry.first->kind == e->kind && same(entry.first)) return entry.first;
    bucket.emplace_back(e, Attrs());
    return e;
  }

  // Hash -> earlier nodes with it (and, for op calls, their normalised attributes).
  std::unordered_map<size_t, std::vector<std::pair<Expr, Attrs>>> table_;
};

Function eliminate_common_subexpr(const Function& fn) {
  Function out = as_function(CommonSubexprEliminator().rewrite(fn));
  if (!out) throw Error::bug("EliminateCommonSubexpr turned a function into another kind of expression");
  return out;
}

}  // namespace

IRModule eliminate_common_subexpr_pass(const IRModule& mod) { return map_functions(mod, eliminate_common_subexpr); }

}  // namespace kiln
