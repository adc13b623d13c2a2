// Ops: nn.softmax, nn.log_softmax.
#include <limits>

#include "kiln/attrs/nn.h"
#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/nn/nn_compute.h"
#include "op/nn/softmax_rows.h"
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

Type softmax_relation(const std::vector<Type>& args, const SoftmaxAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  check_float_arg(data, "data");
  if (data.ndim() == 0)
    throw std::move(Error("argument 'data' must have at least 1 dimension").expected("(..., n)", "()"));
  normalize_axis(attrs.axis, data.ndim(), cat("attribute 'axis' of 'data' ", shape_str(data.shape)));
  return args[0];
}

}  // namespace

namespace nn {

// As the reference kernel: the row maximum (0 for a row of -inf, so that exp gives 0, not
// NaN) is subtracted before exp; softmax multiplies by 1/sum, log_softmax subtracts
// max + log(sum). The two reductions are built by the same functions for the compute and
// for the descriptions of the row kernels that the schedule tensorizes them with.
te::Tensor row_max_of(const te::Tensor& x, size_t axis, const std::vector<int64_t>& shape, const std::string& name) {
  const te::IterVar k = te::reduce_axis(x.shape()[axis], "k");
  return te::compute(shape, name, [&](const te::Indices& i) { return te::max(x(at_axis(i, axis, k)), {k}); });
}

tir::PrimExpr shift_of(const te::Tensor& row_max, const te::Indices& i, size_t axis) {
  const DType dtype = row_max.dtype();
  const tir::PrimExpr m = row_max(at_axis(i, axis, tir::int_imm(0)));
  const tir::PrimExpr minus_inf = tir::make_const(dtype, -std::numeric_limits<double>::infinity());
  return tir::select(tir::eq(m, minus_inf), tir::make_const(dtype, 0), m);
}

te::Tensor row_sum_of(const te::Tensor& x, const te::Tensor& row_max, size_t axis, const std::vector<int64_t>& shape,
                      const std::string& name) {
  const te::IterVar j = te::reduce_axis(x.shape()[axis], "j");
  return te::compute(shape, name, [&](const te::Indices& i) {
    return te::sum(tir::call("exp", {x(at_axis(i, axis, j)) - shift_of(row_max, i, axis)}), {j});
  });
}

te::Tensor softmax_of(const te::Tensor& x, const te::Tensor& row_max, const te::Tensor& row_sum, size_t axis,
                      const std::vector<int64_t>& shape, const std::string& name, bool is_log) {
  return te::compute(shape, name, [&](const te::Indices& i) {
    const tir::PrimExpr v = x(index_exprs(i)), s = row_sum(at_axis(i, axis, tir::int_imm(0)));
    if (is_log) return v - (shift_of(row_max, i, axis) + tir::call("log", {s}));
    return tir::call("exp", {v - shift_of(row_max, i, axis)}) * (tir::make_const(x.dtype(), 1) / s);
  });
}

}  // namespace nn

namespace {

std::function<std::vector<te::Tensor>(const ComputeInput&, const SoftmaxAttrs&)> softmax_compute(bool is_log) {
  return [is_log](const ComputeInput& call, const SoftmaxAttrs& attrs) {
    const te::Tensor x = call.args[0];
    const size_t axis = static_cast<size_t>(normalize_axis(attrs.axis, x.ndim()));
    std::vector<int64_t> row_shape = x.shape();
    row_shape[axis] = 1;
    const te::Tensor row_max = nn::row_max_of(x, axis, row_shape, call.name + "_max");
    const te::Tensor row_sum = nn::row_sum_of(x, row_max, axis, row_shape, call.name + "_sum");
    return std::vector<te::Tensor>{nn::softmax_of(x, row_max, row_sum, axis, x.shape(), call.name, is_log)};
  };
}

}  // namespace

namespace nn {

// The row kernels of kiln/runtime/microkernels.h for one row of x (shape of ones: every axis
// but the row's is outside the tensorized loop).
te::TensorIntrin row_max_intrin(const te::Tensor& x, size_t axis) {
  const te::Tensor xt = te::placeholder(x.shape(), x.dtype(), "X_row");
  const int64_t n = x.shape()[axis];
  auto emit = [n](const std::vector<te::BufferSlice>& in, const te::BufferSlice& out) -> tir::Stmt {
    return tir::Evaluate{tir::extern_call("kiln_row_max_f32", {tir::PrimExpr(n), in.at(0).pointer(), out.pointer()})};
  };
  return te::TensorIntrin{"row_max", row_max_of(xt, axis, std::vector<int64_t>(x.ndim(), 1), "row_max"), emit};
}

te::TensorIntrin row_sum_exp_intrin(const te::Tensor& x, size_t axis) {
  const te::Tensor xt = te::placeholder(x.shape(), x.dtype(), "X_row");
  std::vector<int64_t> row_shape = x.shape();
  row_shape[axis] = 1;
  const te::Tensor mt = te::placeholder(row_shape, x.dtype(), "M_row");
  const int64_t n = x.shape()[axis];
  auto emit = [n](const std::vector<te::BufferSlice>& in, const te::BufferSlice& out) -> tir::Stmt {
    return tir::Evaluate{tir::extern_call("kiln_row_sum_exp_f32",
                                          {tir::PrimExpr(n), in.at(0).pointer(), in.at(1).pointer(), out.pointer()})};
  };
  return te::TensorIntrin{"row_sum_exp", row_sum_of(xt, mt, axis, std::vector<int64_t>(x.ndim(), 1), "row_sum"), emit};
}

te::TensorIntrin softmax_row_intrin(const te::Tensor& x, size_t axis) {
  const te::Tensor xt = te::placeholder(x.shape(), x.dtype(), "X_row");
  std::vector<int64_t> row_shape = x.shape();
  row_shape[axis] = 1;
  const te::Tensor mt = te::placeholder(row_shape, x.dtype(), "M_row");
  const te::Tensor st = te::placeholder(row_shape, x.dtype(), "S_row");
  const int64_t n = x.shape()[axis];
  std::vector<int64_t> shape(x.ndim(), 1);
  shape[axis] = n;
  auto emit = [n](const std::vector<te::BufferSlice>& in, const te::BufferSlice& out) -> tir::Stmt {
    return tir::Evaluate{tir::extern_call(
        "kiln_softmax_row_f32",
        {tir::PrimExpr(n), in.at(0).pointer(), in.at(1).pointer(), in.at(2).pointer(), out.pointer()})};
  };
  return te::TensorIntrin{"softmax_row", softmax_of(xt, mt, st, axis, shape, "softmax_row", false), emit};
}

}  // namespace nn

namespace {

using nn::row_max_intrin;
using nn::row_max_of;
using nn::row_sum_exp_intrin;
using nn::row_sum_of;
using nn::softmax_of;
using nn::softmax_row_intrin;

// float32 rows along the last axis: the reductions as plain loops neither vectorise nor keep the
// row in cache, so each runs the vectorised row kernel; tasks of whole rows in parallel, each row's
// sum computed right before its (vectorised) outputs.
void schedule_rows(const ScheduleInput& in, const SoftmaxAttrs& attrs, bool is_log) {
  const te::Tensor& out = in.anchor.at(0);
  const te::Tensor& x = in.call.args.at(0);
  const size_t axis = static_cast<size_t>(normalize_axis(attrs.axis, x.ndim()));
  const te::Tensor row_max = nn::find_tensor(out, in.call.name + "_max");
  const te::Tensor row_sum = nn::find_tensor(out, in.call.name + "_sum");
  // The row kernels read x from memory: a producer inlined into the stages takes the default.
  const bool rows = x.op()->is_placeholder && x.dtype() == DType::kFloat32 && x.ndim() >= 2 && axis + 1 == x.ndim() &&
                    in.outputs.size() == 1 && in.outputs[0].same_as(out) && row_max.defined() && row_sum.defined();
  if (!rows) {
    schedule_reduce(in);
    return;
  }
  te::Stage& stage = in.schedule[out];
  const te::IterVar row_in_task = nn::split_row_tasks(stage, axis, x.shape()[axis]);
  if (is_log)
    stage.vectorize(stage.axis(axis));
  else
    stage.tensorize(stage.axis(axis), softmax_row_intrin(x, axis));
  te::Stage& sum = in.schedule[row_sum];
  sum.compute_at(stage, row_in_task);
  sum.tensorize(sum.reduce_axis(0), row_sum_exp_intrin(x, axis));
  // The max stays a pass of its own (the sum and the outputs both read it, and a stage can only
  // be computed inside the one loop nest that reads it), over all rows in parallel.
  te::Stage& max = in.schedule[row_max];
  nn::split_row_tasks(max, axis, x.shape()[axis]);
  max.tensorize(max.reduce_axis(0), row_max_intrin(x, axis));
}

void softmax_schedule(const ScheduleInput& in, const SoftmaxAttrs& attrs) { schedule_rows(in, attrs, false); }
void log_softmax_schedule(const ScheduleInput& in, const SoftmaxAttrs& attrs) { schedule_rows(in, attrs, true); }

}  // namespace

void register_nn_softmax_ops(OpRegistry& registry) {
  OpDef& softmax = registry.add("nn.softmax")
                       .describe("exp(x - max) / sum(exp(x - max)) along 'axis'.")
                       .arg("data")
                       .attrs<SoftmaxAttrs>()
                       .set_relation<SoftmaxAttrs>(softmax_relation)
                       .set_pattern(OpPattern::kOpaque);
  set_compute<SoftmaxAttrs>(softmax, softmax_compute(false));
  set_schedule<SoftmaxAttrs>(softmax, softmax_schedule);
  OpDef& log_softmax = registry.add("nn.log_softmax")
                           .describe("x - max - log(sum(exp(x - max))) along 'axis'.")
                           .arg("data")
                           .attrs<SoftmaxAttrs>()
                           .set_relation<SoftmaxAttrs>(softmax_relation)
                           .set_pattern(OpPattern::kOpaque);
  set_compute<SoftmaxAttrs>(log_softmax, softmax_compute(true));
  set_schedule<SoftmaxAttrs>(log_softmax, log_softmax_schedule);
}

}  // namespace kiln
