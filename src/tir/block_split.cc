#include "kiln/tir/block_split.h"

#include <optional>

#include "kiln/tir/functor.h"
#include "kiln/tir/simplify.h"

namespace kiln::tir {

namespace {

bool is_integer_division(const PrimExpr& e) {
  return e.kind() == ExprKind::kFloorDiv || e.kind() == ExprKind::kFloorMod ||
         (e.kind() == ExprKind::kDiv && e.dtype() != DType::kFloat32 && e.dtype() != DType::kFloat64);
}

// The one divisor by which `loop`'s body divides its variable in a memory offset, if it splits
// the loop into blocks: greater than one, below the extent, dividing it.
std::optional<int64_t> block_of(const For& loop) {
  if (!loop.min.is_const_int(0) || !loop.extent.is_int_imm()) return std::nullopt;
  const int64_t extent = loop.extent->int_value;
  Analyzer analyzer;
  analyzer.bind(loop.loop_var, 0, extent);
  std::optional<int64_t> block;
  bool mixed = false;
  // Offsets are flattened and simplified first: divisions that only undo a split of one axis
  // (a fused h * W + w read as [hw / W, hw % W]) cancel there.
  const auto find_divisions = [&](const Buffer& buffer, const std::vector<PrimExpr>& indices) {
    visit_exprs(analyzer.simplify(flat_offset(buffer, indices)), [&](const PrimExpr& e) {
      if (!is_integer_division(e) || !e->operands[0].same_as(loop.loop_var) || !e->operands[1].is_int_imm()) return;
      const int64_t divisor = e->operands[1]->int_value;
      if (block && *block != divisor) mixed = true;
      block = divisor;
    });
  };
  visit_exprs(loop.body, [&](const PrimExpr& e) {
    if (e.kind() == ExprKind::kLoad || e.kind() == ExprKind::kAddressOf) find_divisions(e->buffer, e->operands);
  });
  visit_stmts(loop.body, [&](const Stmt& s) {
    if (const BufferStore* store = s.as<BufferStore>()) find_divisions(store->buffer, store->indices);
  });
  if (mixed || !block || *block <= 1 || *block >= extent || extent % *block != 0) return std::nullopt;
  return block;
}

class BlockSplitter : public Mutator {
 public:
  Stmt mutate_stmt(const Stmt& s) override {
    Stmt out = mutate_stmt_children(s);
    const For* loop = out.as<For>();
    if (!loop || loop->kind != ForKind::kVectorized) return out;
    const std::optional<int64_t> block = block_of(*loop);
    if (!block) return out;
    Var blocks(loop->loop_var.name() + "_block"), lanes(loop->loop_var.name() + "_lane");
    const Stmt body = substitute(loop->body, {{loop->loop_var.get(), blocks * *block + lanes}});
    const int64_t extent = loop->extent->int_value;
    return simplify(
        for_loop(blocks, 0, extent / *block, ForKind::kSerial, for_loop(lanes, 0, *block, ForKind::kVectorized, body)));
  }
};

}  // namespace

Stmt split_vector_loops_at_blocks(const Stmt& s) { return BlockSplitter().mutate_stmt(s); }

PrimFunc split_vector_loops_at_blocks(const PrimFunc& f) {
  return PrimFunc{f.name, f.params, split_vector_loops_at_blocks(f.body)};
}

}  // namespace kiln::tir
