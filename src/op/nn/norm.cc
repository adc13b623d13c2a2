// Ops: nn.batch_norm, nn.layer_norm.
// batch_norm has inference semantics (the moving statistics normalise the data) and, like
// Relay, returns (out, mean, var) where mean and var are the moving statistics.
#include "kiln/attrs/nn.h"
#include "kiln/op/strategy.h"
#include "op/compute_util.h"
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

// As the reference kernel: two passes (the mean, then the mean of squared deviations), then
// (x - mean) * (1 / sqrt(var + epsilon)) * gamma + beta.
std::vector<te::Tensor> layer_norm_compute(const ComputeInput& call, const LayerNormAttrs& attrs) {
  const te::Tensor x = call.args[0], gamma = call.args[1], beta = call.args[2];
  const size_t axis = static_cast<size_t>(normalize_axis(attrs.axis, x.ndim()));
  const int64_t extent = x.shape()[axis];
  std::vector<int64_t> row_shape = x.shape();
  row_shape[axis] = 1;
  const DType dtype = x.dtype();
  const tir::PrimExpr inv_extent = tir::make_const(dtype, 1.0 / static_cast<double>(std::max<int64_t>(extent, 1)));
  const te::IterVar k = te::reduce_axis(extent, "k"), j = te::reduce_axis(extent, "j");
  const te::Tensor mean = te::compute(row_shape, call.name + "_mean",
                                      [&](const te::Indices& i) { return te::sum(x(at_axis(i, axis, k)), {k}); });
  auto row_mean = [&](const te::Indices& i) { return mean(at_axis(i, axis, tir::int_imm(0))) * inv_extent; };
  const te::Tensor var = te::compute(row_shape, call.name + "_var", [&](const te::Indices& i) {
    const tir::PrimExpr d = x(at_axis(i, axis, j)) - row_mean(i);
    return te::sum(d * d, {j});
  });
  const tir::PrimExpr epsilon = tir::make_const(dtype, attrs.epsilon);
  const bool scale = attrs.scale, center = attrs.center;
  return {te::compute(x.shape(), call.name, [&](const te::Indices& i) {
    const tir::PrimExpr v = var(at_axis(i, axis, tir::int_imm(0)));
    const tir::PrimExpr rstd = tir::make_const(dtype, 1) / tir::call("sqrt", {v * inv_extent + epsilon});
    tir::PrimExpr y = (x(index_exprs(i)) - row_mean(i)) * rstd;
    if (scale) y = y * channel_read(gamma, i, static_cast<int64_t>(axis));
    if (center) y = y + channel_read(beta, i, static_cast<int64_t>(axis));
    return y;
  })};
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
}

}  // namespace kiln
