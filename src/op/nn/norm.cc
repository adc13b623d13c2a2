// Ops: nn.batch_norm, nn.layer_norm.
// layer_norm computes a row's sum and sum of squares in double, then its outputs; in
// float32 along the last axis both are the row kernels of kiln/runtime/microkernels.h.
// batch_norm has inference semantics (the moving statistics normalise the data) and, like
// Relay, returns (out, mean, var) where mean and var are the moving statistics.
#include "kiln/attrs/nn.h"
#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/nn/nn_compute.h"
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

// A per-channel parameter: 1-D, floating point, with the extent of the normalised axis.
const TensorTypeNode& channel_param(const std::vector<Type>& args, size_t i, const std::string& name,
                                    const TensorTypeNode& data, int64_t axis) {
  const TensorTypeNode& p = arg_tensor(args, i, name);
  check_float_arg(p, name);
  int64_t channels = data.shape[axis];
  if (p.ndim() != 1 || (p.shape[0] >= 0 && channels >= 0 && p.shape[0] != channels))
    throw std::move(Error(cat("argument '", name, "' must match axis ", axis, " of 'data' ", shape_str(data.shape)))
                        .expected(shape_str({channels}), shape_str(p.shape)));
  return p;
}

// epsilon is checked by NormAttrs::validate.
const TensorTypeNode& normalised_data(const std::vector<Type>& args, const NormAttrs& attrs, int64_t* axis) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  check_float_arg(data, "data");
  *axis = normalize_axis(attrs.axis, data.ndim(), cat("attribute 'axis' of 'data' ", shape_str(data.shape)));
  return data;
}

Type batch_norm_relation(const std::vector<Type>& args, const BatchNormAttrs& attrs) {
  int64_t axis;
  const TensorTypeNode& data = normalised_data(args, attrs, &axis);
  channel_param(args, 1, "gamma", data, axis);
  channel_param(args, 2, "beta", data, axis);
  channel_param(args, 3, "moving_mean", data, axis);
  channel_param(args, 4, "moving_var", data, axis);
  return tuple_type({args[0], args[3], args[4]});
}

Type layer_norm_relation(const std::vector<Type>& args, const LayerNormAttrs& attrs) {
  int64_t axis;
  const TensorTypeNode& data = normalised_data(args, attrs, &axis);
  channel_param(args, 1, "gamma", data, axis);
  channel_param(args, 2, "beta", data, axis);
  return args[0];
}

// A row statistic in double, shape (..., 1, ...): the sum of the row, or of its squares. Neither
// depends on the other (both run while the row is in L1), and E[x^2] - E[x]^2 in double stays
// well within float rounding of the reference's two-pass variance. Built by the same functions for the compute and for
// the descriptions of the row kernels that the schedule tensorizes them with.
te::Tensor row_sum_of(const te::Tensor& x, size_t axis, const std::vector<int64_t>& shape, const std::string& name,
                      bool squares) {
  const te::IterVar k = te::reduce_axis(x.shape()[axis], "k");
  return te::compute(shape, name, [&](const te::Indices& i) {
    const tir::PrimExpr v = tir::cast(DType::kFloat64, x(at_axis(i, axis, k)));
    return te::sum(squares ? v * v : v, {k});
  });
}

// (x - mean) * (1 / sqrt(var + epsilon)) * gamma + beta, the statistics worked out in double.
te::Tensor normalised_of(const te::Tensor& x, const te::Tensor& sum, const te::Tensor& squares, const te::Tensor& gamma,
                         const te::Tensor& beta, size_t axis, const std::vector<int64_t>& shape,
                         const std::string& name, const LayerNormAttrs& attrs) {
  const DType dtype = x.dtype(), f64 = DType::kFloat64;
  const int64_t extent = x.shape()[axis];
  const tir::PrimExpr inv_extent = tir::make_const(f64, 1.0 / static_cast<double>(std::max<int64_t>(extent, 1)));
  const tir::PrimExpr epsilon = tir::make_const(f64, attrs.epsilon);
  return te::compute(shape, name, [&](const te::Indices& i) {
    const std::vector<tir::PrimExpr> row = at_axis(i, axis, tir::int_imm(0));
    const tir::PrimExpr mean = sum(row) * inv_extent;
    const tir::PrimExpr var = tir::max(squares(row) * inv_extent - mean * mean, tir::make_const(f64, 0));
    const tir::PrimExpr rstd = tir::make_const(f64, 1) / tir::call("sqrt", {var + epsilon});
    tir::PrimExpr y = tir::cast(dtype, (tir::cast(f64, x(index_exprs(i))) - mean) * rstd);
    if (attrs.scale) y = y * channel_read(gamma, i, static_cast<int64_t>(axis));
    if (attrs.center) y = y + channel_read(beta, i, static_cast<int64_t>(axis));
    return y;
  });
}

std::vector<int64_t> row_shape_of(const te::Tensor& x, size_t axis) {
  std::vector<int64_t> shape = x.shape();
  shape[axis] = 1;
  return shape;
}

std::vector<te::Tensor> layer_norm_compute(const ComputeInput& call, const LayerNormAttrs& attrs) {
  const te::Tensor x = call.args[0], gamma = call.args[1], beta = call.args[2];
  const size_t axis = static_cast<size_t>(normalize_axis(attrs.axis, x.ndim()));
  const std::vector<int64_t> row_shape = row_shape_of(x, axis);
  const te::Tensor sum = row_sum_of(x, axis, row_shape, call.name + "_sum", false);
  const te::Tensor squares = row_sum_of(x, axis, row_shape, call.name + "_squares", true);
  return {normalised_of(x, sum, squares, gamma, beta, axis, x.shape(), call.name, attrs)};
}

// The row kernels of kiln/runtime/microkernels.h for one row (every other axis is outside the
// tensorized loop).
te::TensorIntrin row_sum_intrin(const te::Tensor& x, size_t axis, bool squares) {
  const te::Tensor xt = te::placeholder(x.shape(), x.dtype(), "X_row");
  const int64_t n = x.shape()[axis];
  const char* kernel = squares ? "kiln_row_sum_squares_f64_f32" : "kiln_row_sum_f64_f32";
  auto emit = [n, kernel](const std::vector<te::BufferSlice>& in, const te::BufferSlice& out) -> tir::Stmt {
    return tir::Evaluate{tir::extern_call(kernel, {tir::PrimExpr(n), in.at(0).pointer(), out.pointer()})};
  };
  return te::TensorIntrin{kernel, row_sum_of(xt, axis, std::vector<int64_t>(x.ndim(), 1), "row_sum", squares), emit};
}

te::TensorIntrin layer_norm_row_intrin(const te::Tensor& x, size_t axis, const LayerNormAttrs& attrs) {
  const te::Tensor xt = te::placeholder(x.shape(), x.dtype(), "X_row");
  const std::vector<int64_t> row_shape = row_shape_of(x, axis);
  const te::Tensor st = te::placeholder(row_shape, DType::kFloat64, "S_row");
  const te::Tensor qt = te::placeholder(row_shape, DType::kFloat64, "Q_row");
  const te::Tensor gt = te::placeholder({x.shape()[axis]}, x.dtype(), "G_row");
  const te::Tensor bt = te::placeholder({x.shape()[axis]}, x.dtype(), "B_row");
  const int64_t n = x.shape()[axis];
  std::vector<int64_t> shape(x.ndim(), 1);
  shape[axis] = n;
  const double inv_n = 1.0 / static_cast<double>(std::max<int64_t>(n, 1)), epsilon = attrs.epsilon;
  const char* kernel = attrs.scale ? (attrs.center ? "kiln_layer_norm_row_f32" : "kiln_layer_norm_row_scale_f32")
                                   : (attrs.center ? "kiln_layer_norm_row_shift_f32" : "kiln_layer_norm_row_plain_f32");
  // Inputs in the order the body first reads them: x, the sum, the squares, then gamma and beta
  // when the body reads them.
  auto emit = [n, inv_n, epsilon, kernel](const std::vector<te::BufferSlice>& in,
                                          const te::BufferSlice& out) -> tir::Stmt {
    std::vector<tir::PrimExpr> args{tir::PrimExpr(n)};
    for (const te::BufferSlice& slice : in) args.push_back(slice.pointer());
    args.push_back(tir::make_const(DType::kFloat64, inv_n));
    args.push_back(tir::make_const(DType::kFloat64, epsilon));
    args.push_back(out.pointer());
    return tir::Evaluate{tir::extern_call(kernel, std::move(args))};
  };
  return te::TensorIntrin{"layer_norm_row", normalised_of(xt, st, qt, gt, bt, axis, shape, "layer_norm_row", attrs),
                          emit};
}

// float32 rows along the last axis: tasks of whole rows in parallel, each
// row's statistics (one pass) computed right before its outputs (a second), so the row is read
// from memory once. Anything else takes the default reduction schedule.
void layer_norm_schedule(const ScheduleInput& in, const LayerNormAttrs& attrs) {
  const te::Tensor& out = in.anchor.at(0);
  const te::Tensor& x = in.call.args.at(0);
  const size_t axis = static_cast<size_t>(normalize_axis(attrs.axis, x.ndim()));
  const te::Tensor sum = nn::find_tensor(out, in.call.name + "_sum");
  const te::Tensor squares = nn::find_tensor(out, in.call.name + "_squares");
  const bool rows = x.op()->is_placeholder && in.call.args.at(1).op()->is_placeholder &&
                    in.call.args.at(2).op()->is_placeholder && x.dtype() == DType::kFloat32 && x.ndim() >= 2 &&
                    axis + 1 == x.ndim() && in.outputs.size() == 1 && in.outputs[0].same_as(out) && sum.defined() &&
                    squares.defined();
  if (!rows) {
    schedule_reduce(in);
    return;
  }
  te::Stage& stage = in.schedule[out];
  const te::IterVar row_in_task = nn::split_row_tasks(stage, axis, x.shape()[axis]);
  stage.tensorize(stage.axis(axis), layer_norm_row_intrin(x, axis, attrs));
  for (const auto& [stat, is_squares] : {std::pair{sum, false}, std::pair{squares, true}}) {
    te::Stage& s = in.schedule[stat];
    s.compute_at(stage, row_in_task);
    s.tensorize(s.reduce_axis(0), row_sum_intrin(x, axis, is_squares));
  }
}

}  // namespace

void register_nn_norm_ops(OpRegistry& registry) {
  registry.add("nn.batch_norm")
      .describe(
          "Batch normalisation with the moving statistics: "
          "(data - moving_mean) / sqrt(moving_var + epsilon) * gamma + beta along 'axis'. "
          "Returns (out, moving_mean, moving_var).")
      .arg("data")
      .arg("gamma")
      .arg("beta")
      .arg("moving_mean")
      .arg("moving_var")
      .attrs<BatchNormAttrs>()
      .set_relation<BatchNormAttrs>(batch_norm_relation)
      .set_pattern(OpPattern::kOpaque);

  registry.add("nn.layer_norm")
      .describe(
          "Normalises 'data' by its mean and variance along 'axis', "
          "then scales by gamma and shifts by beta (both of that axis' extent).")
      .arg("data")
      .arg("gamma")
      .arg("beta")
      .attrs<LayerNormAttrs>()
      .set_relation<LayerNormAttrs>(layer_norm_relation)
      .set_pattern(OpPattern::kOpaque);
  set_compute<LayerNormAttrs>(registry.get_mutable("nn.layer_norm"), layer_norm_compute);
  set_schedule<LayerNormAttrs>(registry.get_mutable("nn.layer_norm"), layer_norm_schedule);
}

}  // namespace kiln
