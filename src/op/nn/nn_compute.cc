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

namespace {

std::string operand_name(const std::string& base, size_t i) { return cat(base, "_operand", i); }

}  // namespace

te::Tensor stand_in(const std::vector<int64_t>& out_shape, const std::vector<te::Tensor>& operands,
                    const std::string& name, bool whole) {
  if (!whole)
    return te::compute(out_shape, name, [&](const te::Indices&) {
      tir::PrimExpr sum;
      for (const te::Tensor& t : operands) {
        const tir::PrimExpr first = t(std::vector<tir::PrimExpr>(t.ndim(), tir::PrimExpr(int64_t{0})));
        sum = sum.defined() ? sum + first : first;
      }
      return sum;
    });
  std::vector<te::IterVar> axes;
  tir::PrimExpr product;
  for (size_t i = 0; i < operands.size(); ++i) {
    const te::Tensor& t = operands[i];
    std::vector<tir::PrimExpr> index;
    for (size_t d = 0; d < t.ndim(); ++d) {
      axes.push_back(te::reduce_axis(t.shape()[d], cat("r", i, "_", d)));
      index.push_back(tir::PrimExpr(axes.back()));
    }
    product = product.defined() ? product * t(index) : t(index);
  }
  return te::compute(out_shape, name, [&](const te::Indices&) { return te::sum(product, axes); });
}

bool all_placeholders(const std::vector<te::Tensor>& operands) {
  return std::all_of(operands.begin(), operands.end(), [](const te::Tensor& t) { return t.op()->is_placeholder; });
}

te::Tensor stand_in_description(const ComputeInput& call, const std::vector<int64_t>& shape, const std::string& name) {
  std::vector<te::Tensor> slots;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const te::Tensor& arg = call.args[i];
    slots.push_back(te::placeholder(arg.shape(), arg.dtype(), cat("A", i)));
  }
  return stand_in(shape, slots, name, !all_placeholders(call.args));
}

te::Tensor operand_in_memory(const ComputeInput& call, size_t i) {
  const te::Tensor& arg = call.args.at(i);
  if (arg.op()->is_placeholder) return arg;
  return te::compute(arg.shape(), operand_name(call.name, i), [&](const te::Indices& index) {
    return arg(std::vector<tir::PrimExpr>(index.begin(), index.end()));
  });
}

std::string float32_static_reason(const std::vector<Type>& arg_types, const Type& out_type, const std::string& kernel) {
  std::vector<Type> all = arg_types;
  all.push_back(out_type);
  for (const Type& t : all) {
    const TensorTypeNode* tt = as_tensor(t);
    if (!tt || tt->dtype != DType::kFloat32) return cat("the ", kernel, " kernel is float32 only");
    for (int64_t d : tt->shape)
      if (d <= 0) return cat("the ", kernel, " kernel needs static, non-empty operands");
  }
  return "";
}

void schedule_around_stand_in(const ScheduleInput& in, const te::Tensor& out) {
  for (size_t i = 0; i < in.call.args.size(); ++i)
    if (te::Tensor copy = find_tensor(out, operand_name(in.call.name, i)); copy.defined())
      schedule_injective_stage(in.schedule[copy], in.target);
  for (const te::Tensor& o : in.outputs)
    if (!o.same_as(out)) schedule_injective_stage(in.schedule[o], in.target);
}

}  // namespace kiln::nn
