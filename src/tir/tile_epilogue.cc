#include "kiln/tir/tile_epilogue.h"

#include <algorithm>
#include <limits>

#include "kiln/tir/functor.h"
#include "kiln/tir/simplify.h"

namespace kiln::tir {

namespace {

// A loop nest from zero down to one store.
struct LoopNest {
  std::vector<const For*> loops;
  const BufferStore* store = nullptr;
};

std::optional<LoopNest> loop_nest(const Stmt& s) {
  LoopNest nest;
  const Stmt* at = &s;
  while (const For* loop = at->as<For>()) {
    if (!loop->min.is_const_int(0) || !loop->extent.is_int_imm()) return std::nullopt;
    nest.loops.push_back(loop);
    at = &loop->body;
  }
  nest.store = at->as<BufferStore>();
  if (!nest.store) return std::nullopt;
  return nest;
}

bool is_float_zero(const PrimExpr& e) { return e.kind() == ExprKind::kFloatImm && e->float_value == 0.0; }

bool stores_only_zeros_to(const Stmt& s, const Buffer& tile) {
  bool only = true;
  visit_stmts(s, [&](const Stmt& x) {
    if (const auto* store = x.as<BufferStore>())
      only = only && store->buffer == tile && is_float_zero(store->value);
    else if (!x.as<For>() && !x.as<SeqStmt>())
      only = false;
  });
  return only;
}

// Every loop variable of the nest at zero.
VarMap at_loop_start(const std::vector<const For*>& loops) {
  VarMap zeros;
  for (const For* loop : loops) zeros[loop->loop_var.get()] = PrimExpr(0);
  return zeros;
}

// An offset as base + sum of coefficient * loop variable over the nest's loops.
struct AffineOffset {
  PrimExpr base;
  std::vector<int64_t> coefficients;  // per loop of the nest
};

std::optional<AffineOffset> affine_offset(const Buffer& buffer, const std::vector<PrimExpr>& indices,
                                          const std::vector<const For*>& loops) {
  const PrimExpr offset = flat_offset(buffer, indices);
  const VarMap zeros = at_loop_start(loops);
  AffineOffset affine{simplify(substitute(offset, zeros)), {}};
  PrimExpr rebuilt = affine.base;
  for (const For* loop : loops) {
    VarMap at_one = zeros;
    at_one[loop->loop_var.get()] = PrimExpr(1);
    const PrimExpr coefficient = simplify(substitute(offset, at_one) - affine.base);
    if (!coefficient.is_int_imm()) return std::nullopt;
    affine.coefficients.push_back(coefficient->int_value);
    rebuilt = rebuilt + loop->loop_var * coefficient;
  }
  if (!simplify(offset - rebuilt).is_const_int(0)) return std::nullopt;
  return affine;
}

// Clamps the tail applies around v, as the relu and clip computes write them. Only forms that
// keep NaN are taken (max(x, c) returns x for NaN; max(c, x) would return c).
PrimExpr strip_clamps(PrimExpr v, double& lo, double& hi) {
  const auto bound = [](const PrimExpr& e) { return e.kind() == ExprKind::kFloatImm; };
  for (;;) {
    const auto& ops = v->operands;
    if (v.kind() == ExprKind::kSelect && (ops[0].kind() == ExprKind::kLT || ops[0].kind() == ExprKind::kGT)) {
      const PrimExpr& x = ops[0]->operands[0];
      const PrimExpr& c = ops[0]->operands[1];
      if (!bound(c) || !expr_equal(c, ops[1]) || !expr_equal(x, ops[2])) return v;
      if (ops[0].kind() == ExprKind::kLT) lo = std::max(lo, c->float_value);
      if (ops[0].kind() == ExprKind::kGT) hi = std::min(hi, c->float_value);
      v = x;
    } else if ((v.kind() == ExprKind::kMax || v.kind() == ExprKind::kMin) && bound(ops[1])) {
      if (v.kind() == ExprKind::kMax) lo = std::max(lo, ops[1]->float_value);
      if (v.kind() == ExprKind::kMin) hi = std::min(hi, ops[1]->float_value);
      v = ops[0];
    } else {
      return v;
    }
  }
}

// v when `e` is v * clamp(v * slope + offset, 0, 1) (either product's order), with the slope and
// offset in `hard_swish`; `e` itself otherwise.
PrimExpr strip_hard_swish(const PrimExpr& e, std::optional<HardSwish>& hard_swish) {
  if (e.kind() != ExprKind::kMul) return e;
  for (size_t side = 0; side < 2; ++side) {
    const PrimExpr& v = e->operands[side];
    double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
    const PrimExpr gate = strip_clamps(e->operands[1 - side], lo, hi);
    if (lo != 0.0 || hi != 1.0 || gate.kind() != ExprKind::kAdd) continue;
    const PrimExpr& scaled = gate->operands[0];
    const PrimExpr& offset = gate->operands[1];
    if (offset.kind() != ExprKind::kFloatImm || scaled.kind() != ExprKind::kMul ||
        !expr_equal(scaled->operands[0], v) || scaled->operands[1].kind() != ExprKind::kFloatImm)
      continue;
    hard_swish = HardSwish{scaled->operands[1]->float_value, offset->float_value};
    return v;
  }
  return e;
}

// The float32 loads a sum of loads adds, in `loads`; false when it adds anything else.
bool add_loads(const PrimExpr& e, std::vector<PrimExpr>& loads) {
  if (e.dtype() != DType::kFloat32) return false;
  if (e.kind() == ExprKind::kLoad) {
    loads.push_back(e);
    return true;
  }
  return e.kind() == ExprKind::kAdd && add_loads(e->operands[0], loads) && add_loads(e->operands[1], loads);
}

// Which of the tile's axes each loop of the tail runs over, from its offsets into the tile.
enum class TileAxis : uint8_t { kBlock, kPosition, kLane };

std::optional<std::vector<TileAxis>> tile_axes(const TileShape& tile, const LoopNest& nest,
                                               const AffineOffset& offset) {
  if (!offset.base.is_const_int(0)) return std::nullopt;
  std::vector<TileAxis> axes;
  bool seen[3] = {false, false, false};
  for (size_t i = 0; i < nest.loops.size(); ++i) {
    const int64_t c = offset.coefficients[i], extent = nest.loops[i]->extent->int_value;
    TileAxis axis;
    if (c == 1 && extent == tile.lanes)
      axis = TileAxis::kLane;
    else if (c == tile.lanes && extent == tile.positions && tile.positions > 1)
      axis = TileAxis::kPosition;
    else if (c == tile.block_stride && extent == tile.blocks && tile.blocks > 1)
      axis = TileAxis::kBlock;
    else
      return std::nullopt;
    if (seen[static_cast<int>(axis)]) return std::nullopt;
    seen[static_cast<int>(axis)] = true;
    axes.push_back(axis);
  }
  const bool complete = seen[2] && (seen[1] || tile.positions == 1) && (seen[0] || tile.blocks == 1);
  if (!complete) return std::nullopt;
  return axes;
}

// Whether an offset steps by `per_axis` floats along each of the loops' tile axes (block,
// position, lane); a negative entry takes any constant step, returned in `step`.
bool steps_by(const AffineOffset& offset, const std::vector<TileAxis>& axes, const int64_t (&per_axis)[3],
              int64_t& any_step) {
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t want = per_axis[static_cast<int>(axes[i])];
    if (want < 0)
      any_step = offset.coefficients[i];
    else if (offset.coefficients[i] != want)
      return false;
  }
  return true;
}

// The address `indices` give with every loop of the nest at zero.
PrimExpr address_at_loop_start(const Buffer& buffer, const std::vector<PrimExpr>& indices,
                               const std::vector<const For*>& loops) {
  const VarMap zeros = at_loop_start(loops);
  std::vector<PrimExpr> at_start;
  for (const PrimExpr& index : indices) at_start.push_back(simplify(substitute(index, zeros)));
  return address_of(buffer, std::move(at_start));
}

class EpilogueFolder : public Mutator {
 public:
  explicit EpilogueFolder(const std::vector<TileEpilogueCall>& calls) : calls_(calls) {}

  Stmt mutate_stmt(const Stmt& s) override {
    Stmt out = mutate_stmt_children(s);
    const Allocate* allocation = out.as<Allocate>();
    if (!allocation || allocation->buffer->dtype != DType::kFloat32) return out;
    std::optional<Stmt> folded = fold(*allocation);
    return folded ? *folded : out;
  }

 private:
  std::optional<Stmt> fold(const Allocate& allocation) const {
    const Buffer& tile_buffer = allocation.buffer;
    const SeqStmt* body = allocation.body.as<SeqStmt>();
    if (!body || body->stmts.size() < 3) return std::nullopt;
    const size_t n = body->stmts.size();
    for (size_t i = 0; i + 2 < n; ++i)
      if (!stores_only_zeros_to(body->stmts[i], tile_buffer)) return std::nullopt;
    const Evaluate* call = body->stmts[n - 2].as<Evaluate>();
    if (!call || call->value.kind() != ExprKind::kExternCall) return std::nullopt;
    const auto known = std::find_if(calls_.begin(), calls_.end(),
                                    [&](const TileEpilogueCall& c) { return c.call == call->value->name; });
    if (known == calls_.end()) return std::nullopt;
    const std::vector<PrimExpr>& args = call->value->operands;
    const std::optional<TileShape> tile = known->tile(args);
    if (!tile || !points_at_start(args.at(tile->pointer_arg), tile_buffer) ||
        tile->blocks * tile->positions * tile->lanes > tile_buffer->num_elements())
      return std::nullopt;
    for (size_t a = 0; a < args.size(); ++a)
      if (a != tile->pointer_arg && reads(args[a], tile_buffer)) return std::nullopt;
    std::optional<RegisterEpilogue> epilogue =
        tail_epilogue(body->stmts[n - 1], tile_buffer, *tile, known->takes_residual);
    if (!epilogue) return std::nullopt;
    // The variant writes the output while the call reads its operands.
    for (const PrimExpr& arg : args)
      if (reads(arg, epilogue->out->buffer)) return std::nullopt;
    return Stmt(Evaluate{known->with_epilogue(args, *epilogue)});
  }

  static bool points_at_start(const PrimExpr& pointer, const Buffer& buffer) {
    return pointer.kind() == ExprKind::kAddressOf && pointer->buffer == buffer &&
           simplify(flat_offset(buffer, pointer->operands)).is_const_int(0);
  }

  static bool reads(const PrimExpr& e, const Buffer& buffer) {
    bool found = false;
    visit_exprs(e, [&](const PrimExpr& x) { found = found || x->buffer == buffer; });
    return found;
  }

  // The register epilogue equal to `tail`: clamp(tile + bias [+ residual]), or its hard swish,
  // stored in the tile's order.
  static std::optional<RegisterEpilogue> tail_epilogue(const Stmt& tail, const Buffer& tile_buffer,
                                                       const TileShape& tile, bool takes_residual) {
    const std::optional<LoopNest> nest = loop_nest(tail);
    if (!nest || nest->store->buffer == tile_buffer || nest->store->buffer->dtype != DType::kFloat32)
      return std::nullopt;
    RegisterEpilogue epilogue;  // no clamp until one is found
    const PrimExpr activated = strip_hard_swish(nest->store->value, epilogue.hard_swish);
    const PrimExpr sum = epilogue.hard_swish ? activated : strip_clamps(activated, epilogue.lo, epilogue.hi);
    if (epilogue.lo > epilogue.hi) return std::nullopt;
    // The tile's load and the bias's, and a residual's if the call takes one.
    std::vector<PrimExpr> terms;
    if (!add_loads(sum, terms) || terms.size() < 2 || terms.size() > (takes_residual ? 3u : 2u)) return std::nullopt;
    const auto acc_at =
        std::find_if(terms.begin(), terms.end(), [&](const PrimExpr& t) { return t->buffer == tile_buffer; });
    if (acc_at == terms.end()) return std::nullopt;
    const PrimExpr acc = *acc_at;
    terms.erase(acc_at);
    for (const PrimExpr& t : terms)
      if (t->buffer == tile_buffer || t->buffer == nest->store->buffer) return std::nullopt;
    const std::optional<AffineOffset> tile_offset = affine_offset(tile_buffer, acc->operands, nest->loops);
    if (!tile_offset) return std::nullopt;
    const std::optional<std::vector<TileAxis>> axes = tile_axes(tile, *nest, *tile_offset);
    const std::optional<AffineOffset> out_offset =
        affine_offset(nest->store->buffer, nest->store->indices, nest->loops);
    if (!axes || !out_offset) return std::nullopt;
    int64_t out_block_stride = 0;
    if (!steps_by(*out_offset, *axes, {-1, tile.lanes, 1}, out_block_stride)) return std::nullopt;
    // The bias steps by a block's lanes and not with the position; a residual steps as the output.
    for (const PrimExpr& t : terms) {
      const std::optional<AffineOffset> offset = affine_offset(t->buffer, t->operands, nest->loops);
      if (!offset) return std::nullopt;
      const PrimExpr address = address_at_loop_start(t->buffer, t->operands, nest->loops);
      int64_t step = 0;
      if (!epilogue.bias.defined() && steps_by(*offset, *axes, {tile.lanes, 0, 1}, step))
        epilogue.bias = address;
      else if (!epilogue.residual.defined() && steps_by(*offset, *axes, {-1, tile.lanes, 1}, step) &&
               (tile.blocks == 1 || step == out_block_stride))
        epilogue.residual = address;
      else
        return std::nullopt;
    }
    if (!epilogue.bias.defined()) return std::nullopt;
    epilogue.out = address_at_loop_start(nest->store->buffer, nest->store->indices, nest->loops);
    epilogue.out_block_stride = PrimExpr(out_block_stride);
    return epilogue;
  }

  const std::vector<TileEpilogueCall>& calls_;
};

}  // namespace

Stmt fold_tile_epilogues(const Stmt& s, const std::vector<TileEpilogueCall>& calls) {
  if (calls.empty()) return s;
  return EpilogueFolder(calls).mutate_stmt(s);
}

PrimFunc fold_tile_epilogues(const PrimFunc& f, const std::vector<TileEpilogueCall>& calls) {
  return PrimFunc{f.name, f.params, fold_tile_epilogues(f.body, calls)};
}

}  // namespace kiln::tir
