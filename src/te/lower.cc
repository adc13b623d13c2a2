#include "kiln/te/lower.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "kiln/support/error.h"
#include "kiln/support/strings.h"
#include "kiln/tir/block_split.h"
#include "kiln/tir/functor.h"
#include "kiln/tir/printer.h"
#include "kiln/tir/simplify.h"
#include "kiln/tir/tile_epilogue.h"
#include "kiln/tir/unswitch.h"

namespace kiln::te {

namespace {

using tir::ExprKind;
using tir::ExprNode;
using tir::Stmt;

// Where a tensor lives while it is computed and read: a buffer, and the tensor coordinates of
// the buffer's element 0 (non-zero when compute_at realises only a region of it).
struct Realization {
  tir::Buffer buffer;
  std::vector<PrimExpr> offset;
};

// A guard that the loops may overshoot (non-divisible split, or a region past the tensor's end).
struct Guard {
  PrimExpr condition;
  bool involves_reduce = false;
};

// Everything lowering decides about one stage.
struct StagePlan {
  const Stage* stage = nullptr;
  PrimExpr body;                 // after inlining
  PrimExpr init;                 // reductions only
  std::vector<PrimExpr> offset;  // per data-parallel axis: first computed coordinate
  std::vector<int64_t> extent;   // per data-parallel axis: number of computed coordinates
  std::unordered_map<const IterVarNode*, int64_t> iter_extent;
  // Axis value counted from `offset`, in terms of leaf loop variables.
  std::unordered_map<const IterVarNode*, PrimExpr> local_value;
  tir::VarMap axis_values;  // axis var -> offset + local value (what the body is evaluated at)
  std::vector<Guard> guards;
  Realization realization;
  std::vector<const StagePlan*> attached;  // producers computed inside this stage's loops
};

// Inclusive bounds of an index expression whose inner loop variables range over constants.
struct SymbolicRange {
  PrimExpr min, max;
};

using InnerRanges = std::unordered_map<const ExprNode*, tir::IntRange>;

std::optional<SymbolicRange> eval_range(const PrimExpr& e, const InnerRanges& inner) {
  auto point = [](PrimExpr x) { return SymbolicRange{x, x}; };
  switch (e.kind()) {
    case ExprKind::kIntImm: return point(e);
    case ExprKind::kVar: {
      auto it = inner.find(e.get());
      if (it == inner.end()) return point(e);
      return SymbolicRange{PrimExpr(it->second.min), PrimExpr(it->second.max)};
    }
    case ExprKind::kAdd:
    case ExprKind::kSub: {
      auto a = eval_range(e->operands[0], inner), b = eval_range(e->operands[1], inner);
      if (!a || !b) return std::nullopt;
      if (e.kind() == ExprKind::kAdd) return SymbolicRange{a->min + b->min, a->max + b->max};
      return SymbolicRange{a->min - b->max, a->max - b->min};
    }
    case ExprKind::kMul: {
      auto a = eval_range(e->operands[0], inner), b = eval_range(e->operands[1], inner);
      if (!a || !b) return std::nullopt;
      for (int swap = 0; swap < 2; ++swap) {
        const SymbolicRange& x = swap ? *b : *a;
        const PrimExpr& c = swap ? e->operands[0] : e->operands[1];
        if (!c.is_int_imm()) continue;
        if (c->int_value >= 0) return SymbolicRange{x.min * c, x.max * c};
        return SymbolicRange{x.max * c, x.min * c};
      }
      if (expr_equal(a->min, a->max) && expr_equal(b->min, b->max)) return point(e);
      return std::nullopt;
    }
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod: {
      const PrimExpr& c = e->operands[1];
      auto a = eval_range(e->operands[0], inner);
      if (!a || !c.is_int_imm() || c->int_value <= 0) return std::nullopt;
      if (e.kind() == ExprKind::kFloorDiv) return SymbolicRange{floordiv(a->min, c), floordiv(a->max, c)};
      if (expr_equal(a->min, a->max)) return point(e);
      return SymbolicRange{PrimExpr(0), c - 1};
    }
    case ExprKind::kMin:
    case ExprKind::kMax: {
      auto a = eval_range(e->operands[0], inner), b = eval_range(e->operands[1], inner);
      if (!a || !b) return std::nullopt;
      if (e.kind() == ExprKind::kMin) return SymbolicRange{tir::min(a->min, b->min), tir::min(a->max, b->max)};
      return SymbolicRange{tir::max(a->min, b->min), tir::max(a->max, b->max)};
    }
    default: {
      bool uses_inner = false;
      tir::visit_exprs(e, [&](const PrimExpr& x) { uses_inner = uses_inner || inner.count(x.get()); });
      if (!uses_inner) return point(e);
      return std::nullopt;
    }
  }
}

// Loads of realised-elsewhere tensors go to their realisation buffer, shifted by its offset.
class RealizationRewriter : public tir::Mutator {
 public:
  explicit RealizationRewriter(const std::unordered_map<const tir::BufferNode*, Realization>& map) : map_(map) {}
  PrimExpr mutate_expr(const PrimExpr& e) override {
    PrimExpr x = mutate_expr_children(e);
    if (x.kind() != ExprKind::kLoad && x.kind() != ExprKind::kAddressOf) return x;
    auto it = map_.find(x->buffer.get());
    if (it == map_.end() || it->second.buffer == x->buffer) return x;
    std::vector<PrimExpr> indices;
    for (size_t d = 0; d < x->operands.size(); ++d) indices.push_back(x->operands[d] - it->second.offset[d]);
    return tir::with_buffer(x, it->second.buffer, std::move(indices));
  }

 private:
  const std::unordered_map<const tir::BufferNode*, Realization>& map_;
};

// Replaces loads of inlined tensors by their bodies.
class Inliner : public tir::Mutator {
 public:
  explicit Inliner(const std::unordered_map<const tir::BufferNode*, const StagePlan*>& inlined) : inlined_(inlined) {}
  PrimExpr mutate_expr(const PrimExpr& e) override {
    PrimExpr x = mutate_expr_children(e);
    if (x.kind() != ExprKind::kLoad) return x;
    auto it = inlined_.find(x->buffer.get());
    if (it == inlined_.end()) return x;
    const auto& axes = it->second->stage->op()->axis;
    tir::VarMap map;
    for (size_t d = 0; d < axes.size(); ++d) map[axes[d]->var.get()] = x->operands[d];
    return tir::substitute(it->second->body, map);
  }

 private:
  const std::unordered_map<const tir::BufferNode*, const StagePlan*>& inlined_;
};

std::vector<PrimExpr> loads_of(const PrimExpr& e, const tir::Buffer& buffer) {
  std::vector<PrimExpr> loads;
  tir::visit_exprs(e, [&](const PrimExpr& x) {
    if ((x.kind() == ExprKind::kLoad || x.kind() == ExprKind::kAddressOf) && x->buffer == buffer) loads.push_back(x);
  });
  return loads;
}

class Lowering {
 public:
  Lowering(const Schedule& schedule, const std::vector<Tensor>& args, std::string name)
      : schedule_(schedule), args_(args), name_(std::move(name)) {}

  tir::PrimFunc run() {
    make_plans();
    check_args();
    inline_bodies();
    for (auto it = plans_.rbegin(); it != plans_.rend(); ++it) infer_bounds(**it);
    std::vector<Stmt> nests;
    std::vector<tir::Buffer> scratch;
    for (auto& plan : plans_) {
      Stage::Attach attach = plan->stage->attach();
      if (attach == Stage::Attach::kScope) plan_of(*plan->stage->attach_stage()).attached.push_back(plan.get());
    }
    for (auto& plan : plans_) {
      if (plan->stage->attach() != Stage::Attach::kRoot) continue;
      nests.push_back(emit_stage(*plan));
      if (!is_arg(plan->stage->tensor())) scratch.push_back(plan->realization.buffer);
    }
    Stmt body = tir::seq(std::move(nests));
    for (auto it = scratch.rbegin(); it != scratch.rend(); ++it) body = tir::Allocate{*it, body};
    std::vector<tir::Buffer> params;
    for (const auto& t : args_) params.push_back(t.buffer());
    const tir::PrimFunc simplified = tir::simplify(tir::PrimFunc{name_, params, body});
    return tir::unswitch_vector_loops(
        tir::split_vector_loops_at_blocks(tir::fold_tile_epilogues(simplified, tile_epilogue_calls())));
  }

 private:
  Error error(const StagePlan& plan, const std::string& message) const {
    return Error(cat("lower '", name_, "': stage '", plan.stage->op()->name, "': ", message));
  }

  std::vector<tir::TileEpilogueCall> tile_epilogue_calls() const {
    std::vector<tir::TileEpilogueCall> calls;
    for (const auto& stage : schedule_.stages())
      if (const TensorIntrin* intrin = stage->tensorize_intrin(); intrin && intrin->epilogue)
        calls.push_back(*intrin->epilogue);
    return calls;
  }

  StagePlan& plan_of(const Stage& stage) {
    for (auto& p : plans_)
      if (p->stage == &stage) return *p;
    throw Error(cat("lower '", name_, "': stage '", stage.op()->name, "' is not computed"));
  }

  void make_plans() {
    for (const auto& s : schedule_.stages()) {
      if (s->is_placeholder()) continue;
      auto plan = std::make_unique<StagePlan>();
      plan->stage = s.get();
      plans_.push_back(std::move(plan));
    }
  }

  bool is_arg(const Tensor& t) const {
    return std::any_of(args_.begin(), args_.end(), [&](const Tensor& a) { return a.same_as(t); });
  }

  void check_args() {
    for (const auto& s : schedule_.stages()) {
      const Tensor& t = s->tensor();
      if (s->is_placeholder() && !is_arg(t))
        throw Error(cat("lower '", name_, "': placeholder '", t.name(), "' is read but not an argument"));
      if (schedule_.is_output(t) && !is_arg(t))
        throw Error(cat("lower '", name_, "': output '", t.name(), "' is not an argument"));
      if (schedule_.is_output(t) && s->attach() != Stage::Attach::kRoot)
        throw Error(cat("lower '", name_, "': output '", t.name(), "' cannot be inlined or computed at another stage"));
    }
  }

  void inline_bodies() {
    std::unordered_map<const tir::BufferNode*, const StagePlan*> inlined;
    for (auto& plan : plans_) {
      const Operation& op = plan->stage->op();
      Inliner inliner(inlined);
      plan->body = inliner.mutate_expr(op->body);
      if (op->reduce) plan->init = inliner.mutate_expr(op->init);
      if (plan->stage->attach() == Stage::Attach::kInline) inlined[plan->stage->tensor().buffer().get()] = plan.get();
    }
  }

  // Decides which part of the tensor the stage computes, then its loop extents and axis values.
  void infer_bounds(StagePlan& plan) {
    const Stage& stage = *plan.stage;
    const auto& shape = stage.tensor().shape();
    if (stage.attach() == Stage::Attach::kInline) return;
    if (stage.attach() == Stage::Attach::kScope) {
      infer_region(plan);
      plan.realization =
          Realization{tir::make_buffer(stage.tensor().name(), stage.tensor().dtype(), plan.extent), plan.offset};
    } else {
      for (int64_t d : shape) {
        plan.offset.push_back(PrimExpr(0));
        plan.extent.push_back(d);
      }
      plan.realization = Realization{stage.tensor().buffer(), plan.offset};
    }
    derive_loops(plan);
    const auto& leaves = stage.leaf_iter_vars();
    if (stage.tensorize_intrin() && std::find(leaves.begin(), leaves.end(), stage.tensorize_leaf()) == leaves.end())
      throw error(plan, "tensorize: the loop is no longer a loop of the stage (split or fused afterwards)");
    for (const auto& leaf : leaves) analyzer_.bind(leaf->var, 0, plan.iter_extent.at(leaf.get()));
  }

  // The region of `plan`'s tensor read inside the attach loop: by its attach stage, and by the other
  // stages computed at the same loop (a softmax's row max, read by its sum and its outputs).
  void infer_region(StagePlan& plan) {
    const Stage& stage = *plan.stage;
    const tir::Buffer& buffer = stage.tensor().buffer();
    const StagePlan& consumer = plan_of(*stage.attach_stage());
    if (consumer.stage->attach() == Stage::Attach::kInline)
      throw error(plan, "compute_at: the attach stage is inlined");
    const auto& leaves = consumer.stage->leaf_iter_vars();
    auto at = std::find(leaves.begin(), leaves.end(), stage.attach_leaf());
    if (at == leaves.end())
      throw error(plan, cat("compute_at: the attach loop is no longer a loop of '", consumer.stage->op()->name,
                            "' (split or fused afterwards)"));
    // Each read with the ranges of the loops it sits in: inside the attach point, the attach
    // stage's inner loops; a sibling's loops all.
    struct Read {
      PrimExpr load;
      const StagePlan* reader;
      const InnerRanges* ranges;
    };
    InnerRanges inner;
    for (auto it = at + 1; it != leaves.end(); ++it)
      inner[(*it)->var.get()] = tir::IntRange{0, consumer.iter_extent.at(it->get()) - 1};
    std::vector<std::unique_ptr<InnerRanges>> sibling_ranges;
    std::vector<Read> reads;
    for (const auto& other : plans_) {
      if (other->stage->attach() == Stage::Attach::kInline) continue;
      std::vector<PrimExpr> loads = loads_of(other->body, buffer);
      if (other->init.defined())
        for (auto& l : loads_of(other->init, buffer)) loads.push_back(l);
      if (loads.empty()) continue;
      const bool sibling = other.get() != &consumer && other->stage->attach() == Stage::Attach::kScope &&
                           other->stage->attach_stage() == consumer.stage &&
                           other->stage->attach_leaf() == stage.attach_leaf();
      if (other.get() != &consumer && !sibling)
        throw error(plan, cat("compute_at: also read by '", other->stage->op()->name, "', outside the attach loop"));
      const InnerRanges* ranges = &inner;
      if (sibling) {
        sibling_ranges.push_back(std::make_unique<InnerRanges>());
        for (const auto& leaf : other->stage->leaf_iter_vars())
          (*sibling_ranges.back())[leaf->var.get()] = tir::IntRange{0, other->iter_extent.at(leaf.get()) - 1};
        ranges = sibling_ranges.back().get();
      }
      for (auto& l : loads) reads.push_back(Read{l, other.get(), ranges});
    }
    if (reads.empty()) throw error(plan, cat("compute_at: '", consumer.stage->op()->name, "' does not read it"));

    const auto& shape = stage.tensor().shape();
    for (size_t d = 0; d < shape.size(); ++d) {
      std::optional<SymbolicRange> region;
      bool known = true;
      for (const Read& read : reads) {
        PrimExpr index = analyzer_.simplify(tir::substitute(read.load->operands[d], read.reader->axis_values));
        auto r = eval_range(index, *read.ranges);
        if (!r) {
          known = false;
          break;
        }
        r = SymbolicRange{analyzer_.simplify(r->min), analyzer_.simplify(r->max)};
        region = region ? union_range(*region, *r) : r;
        if (!region) {
          known = false;
          break;
        }
      }
      std::optional<int64_t> extent;
      if (known) extent = constant_extent(*region);
      if (!extent) {  // unknown: compute the whole dimension
        plan.offset.push_back(PrimExpr(0));
        plan.extent.push_back(shape[d]);
        continue;
      }
      plan.offset.push_back(region->min);
      plan.extent.push_back(*extent);
    }
  }

  std::optional<SymbolicRange> union_range(const SymbolicRange& a, const SymbolicRange& b) {
    PrimExpr dmin = analyzer_.simplify(a.min - b.min), dmax = analyzer_.simplify(a.max - b.max);
    if (!dmin.is_int_imm() || !dmax.is_int_imm()) return std::nullopt;
    return SymbolicRange{dmin->int_value <= 0 ? a.min : b.min, dmax->int_value >= 0 ? a.max : b.max};
  }

  std::optional<int64_t> constant_extent(const SymbolicRange& r) {
    PrimExpr extent = analyzer_.simplify(r.max - r.min + 1);
    if (extent.is_int_imm()) return extent->int_value;
    auto bound = analyzer_.bound(extent);
    if (bound && bound->max > 0) return bound->max;
    return std::nullopt;
  }

  // Loop extents from the axis extents through splits and fuses, and each axis's value from the loops.
  void derive_loops(StagePlan& plan) {
    const Stage& stage = *plan.stage;
    const Operation& op = stage.op();
    for (size_t d = 0; d < op->axis.size(); ++d) plan.iter_extent[op->axis[d].get()] = plan.extent[d];
    for (const auto& r : op->reduce_axis) plan.iter_extent[r.get()] = r->extent;
    for (const auto& rel : stage.relations()) {
      if (rel.kind == IterVarRelation::Kind::kSplit) {
        int64_t parent = plan.iter_extent.at(rel.parent.get());
        int64_t inner = rel.by_nparts ? (parent + rel.factor - 1) / rel.factor : rel.factor;
        plan.iter_extent[rel.inner.get()] = inner;
        plan.iter_extent[rel.outer.get()] = rel.by_nparts ? rel.factor : (parent + inner - 1) / inner;
      } else {
        plan.iter_extent[rel.fused.get()] = plan.iter_extent.at(rel.outer.get()) * plan.iter_extent.at(rel.inner.get());
      }
    }
    for (const auto& leaf : stage.leaf_iter_vars()) plan.local_value[leaf.get()] = leaf->var;
    const auto& relations = stage.relations();
    for (auto it = relations.rbegin(); it != relations.rend(); ++it) {
      const auto& rel = *it;
      if (rel.kind == IterVarRelation::Kind::kSplit) {
        int64_t inner = plan.iter_extent.at(rel.inner.get()), outer = plan.iter_extent.at(rel.outer.get());
        int64_t parent = plan.iter_extent.at(rel.parent.get());
        PrimExpr value = plan.local_value.at(rel.outer.get()) * inner + plan.local_value.at(rel.inner.get());
        plan.local_value[rel.parent.get()] = value;
        if (inner * outer != parent)
          plan.guards.push_back({tir::lt(value, parent), rel.parent->kind == IterKind::kReduce});
      } else {
        int64_t inner = plan.iter_extent.at(rel.inner.get());
        PrimExpr fused = plan.local_value.at(rel.fused.get());
        plan.local_value[rel.outer.get()] = floordiv(fused, inner);
        plan.local_value[rel.inner.get()] = floormod(fused, inner);
      }
    }
    const auto& shape = stage.tensor().shape();
    for (size_t d = 0; d < op->axis.size(); ++d) {
      PrimExpr value = plan.offset[d] + plan.local_value.at(op->axis[d].get());
      plan.axis_values[op->axis[d]->var.get()] = value;
      // A region computed for compute_at may reach past the tensor's edge.
      if (stage.attach() == Stage::Attach::kScope) {
        plan.guards.push_back({tir::ge(value, 0), false});
        plan.guards.push_back({tir::lt(value, shape[d]), false});
      }
    }
    for (const auto& r : op->reduce_axis) plan.axis_values[r->var.get()] = plan.local_value.at(r.get());
  }

  // ----- emission -----

  Stmt emit_stage(const StagePlan& plan) { return emit_level(plan, 0); }

  size_t reduce_start(const StagePlan& plan) const {
    const auto& leaves = plan.stage->leaf_iter_vars();
    for (size_t i = 0; i < leaves.size(); ++i)
      if (leaves[i]->kind == IterKind::kReduce) return i;
    return leaves.size();
  }

  Stmt emit_level(const StagePlan& plan, size_t level) {
    const Stage& stage = *plan.stage;
    const auto& leaves = stage.leaf_iter_vars();
    bool is_reduce = stage.op()->reduce.has_value();
    if (level < leaves.size() && stage.tensorize_intrin() && leaves[level] == stage.tensorize_leaf()) {
      std::vector<Stmt> stmts;
      if (is_reduce && reduce_start(plan) >= level) stmts.push_back(emit_init(plan, level));
      stmts.push_back(emit_tensorized(plan, level));
      return tir::seq(std::move(stmts));
    }
    if (level == leaves.size()) return emit_update(plan);

    // Producers computed at this loop, realised in scratch buffers around the rest of the body.
    std::vector<Stmt> body;
    for (const StagePlan* p : plan.attached)
      if (p->stage->attach_leaf() == leaves[level]) realizations_[p->stage->tensor().buffer().get()] = p->realization;
    for (const StagePlan* p : plan.attached)
      if (p->stage->attach_leaf() == leaves[level]) body.push_back(emit_stage(*p));
    body.push_back(emit_level(plan, level + 1));
    Stmt inner = tir::seq(std::move(body));
    for (const StagePlan* p : plan.attached) {
      if (p->stage->attach_leaf() != leaves[level]) continue;
      inner = tir::Allocate{p->realization.buffer, inner};
      realizations_.erase(p->stage->tensor().buffer().get());
    }
    const IterVar& leaf = leaves[level];
    Stmt loop = tir::for_loop(leaf->var, 0, plan.iter_extent.at(leaf.get()), stage.leaf_kind(leaf), inner);
    if (is_reduce && level == reduce_start(plan)) return tir::seq({emit_init(plan, level), loop});
    return loop;
  }

  PrimExpr realized_value(const PrimExpr& e) { return RealizationRewriter(realizations_).mutate_expr(e); }

  std::vector<PrimExpr> store_indices(const StagePlan& plan) const {
    std::vector<PrimExpr> indices;
    for (const auto& a : plan.stage->op()->axis) indices.push_back(plan.local_value.at(a.get()));
    return indices;
  }

  Stmt guarded(const StagePlan& plan, Stmt s, bool include_reduce) const {
    PrimExpr condition;
    for (const auto& g : plan.guards) {
      if (g.involves_reduce && !include_reduce) continue;
      condition = condition.defined() ? tir::logical_and(condition, g.condition) : g.condition;
    }
    return condition.defined() ? Stmt(tir::IfThenElse{condition, s, Stmt()}) : s;
  }

  Stmt emit_update(const StagePlan& plan) {
    const tir::Buffer& out = plan.realization.buffer;
    std::vector<PrimExpr> indices = store_indices(plan);
    PrimExpr value = realized_value(tir::substitute(plan.body, plan.axis_values));
    if (auto kind = plan.stage->op()->reduce) value = reduce_combine(*kind, tir::load(out, indices), value);
    return guarded(plan, tir::store(out, indices, value), true);
  }

  // The reduction's start value, stored by loops over the data-parallel leaves from `level` inward.
  Stmt emit_init(const StagePlan& plan, size_t level) {
    PrimExpr value = realized_value(tir::substitute(plan.init, plan.axis_values));
    Stmt s = guarded(plan, tir::store(plan.realization.buffer, store_indices(plan), value), false);
    const auto& leaves = plan.stage->leaf_iter_vars();
    for (size_t i = leaves.size(); i-- > level;) {
      if (leaves[i]->kind == IterKind::kReduce) continue;
      s = tir::for_loop(leaves[i]->var, 0, plan.iter_extent.at(leaves[i].get()), plan.stage->leaf_kind(leaves[i]), s);
    }
    return s;
  }

  Stmt emit_tensorized(const StagePlan& plan, size_t level) {
    const Stage& stage = *plan.stage;
    const TensorIntrin& intrin = *stage.tensorize_intrin();
    const Operation& op = stage.op();
    const Operation& desc = intrin.desc.op();
    auto fail = [&](const std::string& why) { return error(plan, cat("tensorize with '", intrin.name, "': ", why)); };
    const auto& leaves = stage.leaf_iter_vars();
    tir::VarMap inner_zero;
    for (size_t i = level; i < leaves.size(); ++i) inner_zero[leaves[i]->var.get()] = PrimExpr(0);
    for (const auto& g : plan.guards)
      if (!analyzer_.can_prove(g.condition)) throw fail("the tiled loops do not divide the tensor evenly");

    // Each axis must be a base (outer loops) plus at most one whole inner loop.
    auto tile_of = [&](const IterVar& axis) -> std::pair<PrimExpr, int64_t> {
      PrimExpr value = analyzer_.simplify(plan.local_value.at(axis.get()));
      PrimExpr base = analyzer_.simplify(tir::substitute(value, inner_zero));
      PrimExpr inner = analyzer_.simplify(value - base);
      if (inner.is_const_int(0)) return {base, 1};
      for (size_t i = level; i < leaves.size(); ++i)
        if (inner.same_as(leaves[i]->var)) return {base, plan.iter_extent.at(leaves[i].get())};
      throw fail(
          cat("axis '", axis->var.name(), "' is not tiled by a single inner loop (", tir::to_string(inner), ")"));
    };
    if (op->reduce != desc->reduce) throw fail("the reduction does not match");
    tir::VarMap to_desc;
    auto match_axes = [&](const std::vector<IterVar>& axes, const std::vector<IterVar>& desc_axes) {
      std::vector<IterVar> tiled, desc_tiled;
      for (const auto& a : axes)
        if (tile_of(a).second > 1)
          tiled.push_back(a);
        else
          to_desc[a->var.get()] = PrimExpr(0);
      for (const auto& a : desc_axes)
        if (a->extent > 1)
          desc_tiled.push_back(a);
        else
          to_desc[a->var.get()] = PrimExpr(0);
      if (tiled.size() != desc_tiled.size()) throw fail("the number of tiled loops differs from the intrinsic's");
      for (size_t i = 0; i < tiled.size(); ++i) {
        if (tile_of(tiled[i]).second != desc_tiled[i]->extent)
          throw fail(cat("loop of '", tiled[i]->var.name(), "' has extent ", tile_of(tiled[i]).second,
                         ", the intrinsic's ", desc_tiled[i]->extent));
        to_desc[tiled[i]->var.get()] = desc_tiled[i]->var;
      }
    };
    match_axes(op->axis, desc->axis);
    match_axes(op->reduce_axis, desc->reduce_axis);

    // Compare bodies with loads renamed to the intrinsic's inputs and indices relative to the tile.
    std::vector<tir::Buffer> inputs;
    tir::visit_exprs(plan.body, [&](const PrimExpr& x) {
      if (x.kind() == ExprKind::kLoad && std::find(inputs.begin(), inputs.end(), x->buffer) == inputs.end())
        inputs.push_back(x->buffer);
    });
    if (inputs.size() != desc->inputs.size()) throw fail("the number of inputs differs from the intrinsic's");
    struct ToDesc : tir::Mutator {
      const std::vector<tir::Buffer>* inputs;
      const Operation* desc;
      PrimExpr mutate_expr(const PrimExpr& e) override {
        PrimExpr x = mutate_expr_children(e);
        if (x.kind() != ExprKind::kLoad) return x;
        size_t n = static_cast<size_t>(std::find(inputs->begin(), inputs->end(), x->buffer) - inputs->begin());
        const tir::Buffer& target = (*desc)->inputs[n].buffer();
        if (target->shape.size() != x->operands.size()) return x;  // will not compare equal
        tir::VarMap zero;
        tir::visit_exprs(x, [&](const PrimExpr& v) {
          if (v.kind() == ExprKind::kVar) zero[v.get()] = PrimExpr(0);
        });
        std::vector<PrimExpr> indices;
        for (const auto& i : x->operands) indices.push_back(tir::simplify(i - tir::substitute(i, zero)));
        return tir::load(target, indices);
      }
    } rename;
    rename.inputs = &inputs;
    rename.desc = &desc;
    PrimExpr ours = tir::simplify(rename.mutate_expr(tir::substitute(plan.body, to_desc)));
    PrimExpr theirs = tir::simplify(tir::substitute(desc->body, to_desc));
    if (!tir::expr_equal(ours, theirs))
      throw fail(cat("the computation ", tir::to_string(ours), " does not match ", tir::to_string(theirs)));

    // Slices start where the inner loops are all zero.
    std::vector<BufferSlice> slices;
    PrimExpr body_at_origin = tir::substitute(tir::substitute(plan.body, plan.axis_values), inner_zero);
    for (const auto& buffer : inputs) {
      PrimExpr first = realized_value(loads_of(body_at_origin, buffer).front());
      std::vector<PrimExpr> origin;
      for (const auto& i : first->operands) origin.push_back(analyzer_.simplify(i));
      slices.push_back(BufferSlice{first->buffer, origin});
    }
    std::vector<PrimExpr> out_origin;
    for (const auto& i : store_indices(plan)) out_origin.push_back(analyzer_.simplify(tir::substitute(i, inner_zero)));
    return intrin.emit(slices, BufferSlice{plan.realization.buffer, out_origin});
  }

  const Schedule& schedule_;
  const std::vector<Tensor>& args_;
  std::string name_;
  std::vector<std::unique_ptr<StagePlan>> plans_;
  tir::Analyzer analyzer_;
  std::unordered_map<const tir::BufferNode*, Realization> realizations_;
};

}  // namespace

tir::PrimFunc lower(const Schedule& schedule, const std::vector<Tensor>& args, const std::string& name) {
  return Lowering(schedule, args, name).run();
}

TensorIntrin gemm_f32_intrin(int64_t m, int64_t n, int64_t k) {
  check(m > 0 && n > 0 && k > 0, "gemm intrinsic needs positive sizes, got ", m, "x", n, "x", k);
  Tensor a = placeholder({m, k}, DType::kFloat32, "A_tile");
  Tensor b = placeholder({k, n}, DType::kFloat32, "B_tile");
  IterVar r = reduce_axis(k, "k");
  Tensor c = compute({m, n}, "C_tile", [&](const Indices& i) { return sum(a(i[0], r) * b(r, i[1]), {r}); });
  auto emit = [m, n, k](const std::vector<BufferSlice>& in, const BufferSlice& out) -> Stmt {
    for (const auto* s : {&in[0], &in[1], &out})
      check(s->buffer->strides.back() == 1, "gemm intrinsic: buffer '", s->buffer->name, "' is not contiguous in rows");
    auto ld = [](const BufferSlice& s) {
      return PrimExpr(s.buffer->strides.size() > 1 ? s.stride(s.buffer->strides.size() - 2) : 0);
    };
    std::vector<PrimExpr> args;
    std::string fn = "kiln_sgemm_f32_4x16";
    if (m != 4 || n != 16) {
      fn = "kiln_sgemm_f32";
      args = {PrimExpr(m), PrimExpr(n)};
    }
    for (PrimExpr x : {PrimExpr(k), in[0].pointer(), ld(in[0]), in[1].pointer(), ld(in[1]), out.pointer(), ld(out)})
      args.push_back(x);
    return tir::Evaluate{tir::extern_call(fn, args)};
  };
  return TensorIntrin{cat("gemm_f32_", m, "x", n, "x", k), c, emit};
}

}  // namespace kiln::te
