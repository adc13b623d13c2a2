#include "op/nn/nn_compute.h"

#include <algorithm>
#include <unordered_set>

#include "kiln/support/error.h"
#include "kiln/support/strings.h"
#include "op/compute_util.h"

namespace kiln::nn {

using tir::PrimExpr;

DType accumulate_dtype(DType dtype) { return dtype == DType::kFloat32 ? DType::kFloat32 : DType::kFloat64; }

PrimExpr to_out_dtype(const PrimExpr& value, DType out) {
  // OutView rounds to nearest before saturating.
  const bool rounds = is_float(value.dtype()) && is_int(out);
  return saturating_cast(rounds ? tir::call("round", {value}) : value, out);
}

namespace {

const std::vector<std::pair<int64_t, int64_t>>& nn_tiles() {
  static const std::vector<std::pair<int64_t, int64_t>> tiles = {{1, 16}, {2, 16}, {4, 16}, {8, 16},
                                                                 {1, 32}, {2, 32}, {4, 32}, {8, 32}};
  return tiles;
}

const std::vector<std::pair<int64_t, int64_t>>& nt_tiles() {
  static const std::vector<std::pair<int64_t, int64_t>> tiles = {{1, 1}, {1, 4}, {1, 8}, {2, 4}, {4, 4}};
  return tiles;
}

}  // namespace

bool has_nn_tile(int64_t mr, int64_t nr) {
  const auto& t = nn_tiles();
  return std::find(t.begin(), t.end(), std::pair{mr, nr}) != t.end();
}

bool has_sgemm_nn_tile(int64_t mr, int64_t nr) { return has_nn_tile(mr, nr) || (mr == 12 && nr == 32); }

bool has_nt_tile(int64_t mr, int64_t nr) {
  const auto& t = nt_tiles();
  return std::find(t.begin(), t.end(), std::pair{mr, nr}) != t.end();
}

tir::Stmt sgemm_nn_call(const NNTileCall& t) {
  check(has_sgemm_nn_tile(t.mr, t.nr), "no NN micro-kernel tile ", t.mr, "x", t.nr);
  std::vector<PrimExpr> args = {t.k, t.taps_h, t.taps_w, t.a,    t.a_row, t.a_k,   t.a_th, t.a_tw,
                                t.b, t.b_k,    t.b_th,   t.b_tw, t.c,     t.c_row, t.n};
  return tir::Evaluate{tir::extern_call(cat("kiln_sgemm_nn_f32_", t.mr, "x", t.nr), std::move(args))};
}

tir::Stmt igemm_nn_call(const NNTileCall& t) {
  check(has_nn_tile(t.mr, t.nr), "no integer NN micro-kernel tile ", t.mr, "x", t.nr);
  std::vector<PrimExpr> args = {t.k, t.taps_h, t.taps_w, t.a,    t.a_row, t.a_k,   t.a_th, t.a_tw,
                                t.b, t.b_k,    t.b_th,   t.b_tw, t.c,     t.c_row, t.n};
  return tir::Evaluate{tir::extern_call(cat("kiln_igemm_nn_s16_", t.mr, "x", t.nr), std::move(args))};
}

tir::Stmt sgemm_nt_call(int64_t mr, int64_t nr, PrimExpr k, PrimExpr a, PrimExpr lda, PrimExpr b, PrimExpr ldb,
                        PrimExpr c, PrimExpr ldc) {
  check(has_nt_tile(mr, nr), "no NT micro-kernel tile ", mr, "x", nr);
  return tir::Evaluate{tir::extern_call(cat("kiln_sgemm_nt_f32_", mr, "x", nr), {k, a, lda, b, ldb, c, ldc})};
}

int64_t first_divisor(int64_t extent, std::initializer_list<int64_t> options) {
  for (int64_t o : options)
    if (o > 0 && extent % o == 0) return o;
  return 0;
}

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

te::Tensor find_tensor(const te::Tensor& root, const std::string& name) {
  std::vector<te::Tensor> stack = {root};
  std::unordered_set<const te::OperationNode*> seen;
  while (!stack.empty()) {
    te::Tensor t = stack.back();
    stack.pop_back();
    if (!seen.insert(t.op().get()).second) continue;
    if (t.name() == name) return t;
    for (const te::Tensor& in : t.op()->inputs) stack.push_back(in);
  }
  return {};
}

te::Tensor single_output_like(const ScheduleInput& in, const te::Tensor& anchor_out) {
  if (in.outputs.size() != 1 || in.outputs[0].shape() != anchor_out.shape()) return {};
  return in.outputs[0];
}

te::IterVar fuse_all(te::Stage& stage, const std::vector<te::IterVar>& leaves) {
  te::IterVar fused = leaves.at(0);
  for (size_t i = 1; i < leaves.size(); ++i) fused = stage.fuse(fused, leaves[i]);
  return fused;
}

te::IterVar split_row_tasks(te::Stage& stage, size_t axis, int64_t row_length) {
  te::IterVar row = stage.axis(0);
  for (size_t d = 1; d < axis; ++d) row = stage.fuse(row, stage.axis(d));
  const int64_t num_rows = row->extent;
  int64_t per_task = 1;
  for (int64_t c = 1; c <= num_rows && c * row_length <= 16384; ++c)
    if (num_rows % c == 0 && num_rows / c >= 16) per_task = c;
  auto [task, row_in_task] = stage.split(row, per_task);
  if (num_rows * row_length >= (1 << 14)) stage.parallel(task);
  return row_in_task;
}

}  // namespace kiln::nn
