// The default schedules every op without a schedule of its own gets, by pattern.
#include <algorithm>

#include "kiln/op/strategy.h"

namespace kiln {
namespace {

// Elements per parallel task: large enough that one task amortises its dispatch.
constexpr int64_t kElementsPerTask = 1 << 12;

int64_t extent_product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace

namespace {

// Rows shorter than this are joined with the axes before them: the per-row loop overhead would
// outweigh the index divisions it saves.
constexpr int64_t kMinRowElements = 8;
// A row of one axis shorter than this takes the axis before it as a second loop.
constexpr int64_t kShortRowElements = 64;
// Fewer rows than this leave the parallel loop without enough tasks; the flat schedule is used.
constexpr int64_t kMinRows = 4;

// `wanted` rows per task, or a divisor of `rows` at least half of it: a split that divides leaves no
// bounds test inside the rows, which would keep their loops from vectorising.
int64_t rows_per_task(int64_t rows, int64_t wanted) {
  for (int64_t n = wanted; 2 * n >= wanted; --n)
    if (rows % n == 0) return n;
  return wanted;
}

// Rows of the innermost axes (joined until a row has kMinRowElements), the outer axes fused and
// run in parallel, each row one vectorised loop. Fusing every axis would make each element divide
// the flat index back into all its coordinates (concat, slice, transpose, broadcast operands):
// per row those divisions happen once. A row of one short axis (a blocked layout's 16 channels)
// takes the axis before it as a loop of its own, so that the divisions happen once per plane row
// rather than once per vector. False (stage untouched) when the shape has too few rows.
bool schedule_injective_rows(te::Stage& stage, const std::vector<te::IterVar>& leaves) {
  size_t first_row_axis = leaves.size() - 1;
  int64_t row = leaves.back()->extent;
  while (first_row_axis > 0 && row < kMinRowElements) row *= leaves[--first_row_axis]->extent;
  const bool short_row = first_row_axis == leaves.size() - 1 && row < kShortRowElements && first_row_axis >= 2;
  if (short_row) row *= leaves[--first_row_axis]->extent;
  if (first_row_axis == 0) return false;
  int64_t rows = 1;
  for (size_t i = 0; i < first_row_axis; ++i) rows *= leaves[i]->extent;
  if (rows < kMinRows) return false;
  te::IterVar outer = leaves[0];
  for (size_t i = 1; i < first_row_axis; ++i) outer = stage.fuse(outer, leaves[i]);
  if (short_row) {
    stage.vectorize(leaves.back());
  } else {
    te::IterVar inner = leaves[first_row_axis];
    for (size_t i = first_row_axis + 1; i < leaves.size(); ++i) inner = stage.fuse(inner, leaves[i]);
    stage.vectorize(inner);
  }
  if (rows * row < kMinParallelElements) return true;
  auto [task, rest] = stage.split(outer, rows_per_task(rows, std::max<int64_t>(1, kElementsPerTask / row)));
  (void)rest;
  stage.parallel(task);
  return true;
}

}  // namespace

void schedule_injective_stage(te::Stage& stage, const Target& target) {
  std::vector<te::IterVar> leaves = stage.leaf_iter_vars();
  if (leaves.empty()) return;
  if (leaves.size() >= 2 && schedule_injective_rows(stage, leaves)) return;
  te::IterVar fused = leaves[0];
  for (size_t i = 1; i < leaves.size(); ++i) fused = stage.fuse(fused, leaves[i]);
  const int64_t total = fused->extent;
  const int64_t lanes = std::max(1, target.vector_lanes);
  if (total < 2 * lanes) return;
  auto [outer, inner] = stage.split(fused, lanes);
  stage.vectorize(inner);
  if (total < kMinParallelElements) return;
  auto [task, rest] = stage.split(outer, std::max<int64_t>(1, kElementsPerTask / lanes));
  (void)rest;
  stage.parallel(task);
}

void schedule_injective(const ScheduleInput& in) {
  for (const te::Tensor& out : in.outputs) {
    te::Stage& stage = in.schedule[out];
    if (stage.attach() == te::Stage::Attach::kRoot && !stage.op()->reduce) schedule_injective_stage(stage, in.target);
  }
}

// The reductions of the anchor: its own tensors, or the stages they finish (mean's sum).
std::vector<te::Tensor> anchor_reductions(const ScheduleInput& in) {
  std::vector<te::Tensor> out;
  for (const te::Tensor& t : in.anchor) {
    if (t.op()->reduce) out.push_back(t);
    for (const te::Tensor& input : t.op()->reduce ? std::vector<te::Tensor>{} : t.op()->inputs)
      if (input.op()->reduce) out.push_back(input);
  }
  return out;
}

void schedule_reduce(const ScheduleInput& in) {
  for (const te::Tensor& t : anchor_reductions(in)) {
    te::Stage& stage = in.schedule[t];
    if (stage.op()->axis.empty()) continue;
    // Data-parallel axes come first among the leaves; fuse them and run the outer part in parallel.
    te::IterVar fused = stage.axis(0);
    for (size_t i = 1; i < stage.op()->axis.size(); ++i) fused = stage.fuse(fused, stage.axis(i));
    int64_t work = extent_product(t.shape());
    for (const auto& r : stage.op()->reduce_axis) work *= r->extent;
    if (work >= kMinParallelElements && fused->extent > 1) stage.parallel(fused);
  }
  for (const te::Tensor& out : in.outputs) {
    te::Stage& stage = in.schedule[out];
    if (!stage.op()->reduce && stage.attach() == te::Stage::Attach::kRoot) schedule_injective_stage(stage, in.target);
  }
}

}  // namespace kiln
