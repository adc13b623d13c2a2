// Ops: nn.group_norm (ONNX GroupNormalization).
// The channels (axis 1) of every batch element are split into num_groups consecutive groups;
// each group is normalised by the mean and variance of all its elements (its channels and
// every spatial position), then scaled by gamma[channel] and shifted by beta[channel]. gamma
// and beta have one value per channel (ONNX opset 21's form; the opset 18 converter expands
// its per-group values).
#include "kiln/attrs/group_norm.h"

#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

void check_channel_param(const std::vector<Type>& args, size_t i, const std::string& name, const TensorTypeNode& data) {
  const TensorTypeNode& p = arg_tensor(args, i, name);
  if (p.dtype != data.dtype)
    throw std::move(Error(cat("argument '", name, "' must have the dtype of 'data'"))
                        .expected(std::string(dtype_name(data.dtype)), std::string(dtype_name(p.dtype))));
  const int64_t channels = data.shape[1];
  if (p.ndim() != 1 || (p.shape[0] >= 0 && channels >= 0 && p.shape[0] != channels))
    throw std::move(
        Error(cat("argument '", name, "' must have one value per channel of 'data' ", shape_str(data.shape)))
            .expected(shape_str({channels}), shape_str(p.shape)));
}

Type group_norm_relation(const std::vector<Type>& args, const GroupNormAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  check_float_arg(data, "data");
  if (data.ndim() < 2)
    throw std::move(Error("argument 'data' must have a batch and a channel axis")
                        .expected("(N, C, d1 ... dk)", shape_str(data.shape)));
  const int64_t channels = data.shape[1];
  if (channels >= 0 && channels % attrs.num_groups != 0)
    throw std::move(
        Error(cat("attribute 'num_groups' must divide the ", channels, " channels of 'data' ", shape_str(data.shape)))
            .expected(cat("a divisor of ", channels), cat(attrs.num_groups)));
  check_channel_param(args, 1, "gamma", data);
  check_channel_param(args, 2, "beta", data);
  return args[0];
}

// As the reference kernel: per (batch, group), the mean and then the mean of squared
// deviations are summed in float64; (x - mean) * rstd * gamma + beta in the data's dtype.
std::vector<te::Tensor> group_norm_compute(const ComputeInput& call, const GroupNormAttrs& attrs) {
  const te::Tensor x = call.args[0], gamma = call.args[1], beta = call.args[2];
  const DType dtype = x.dtype(), wide = DType::kFloat64;
  const int64_t batch = x.shape()[0], channels = x.shape()[1], groups = attrs.num_groups;
  const int64_t per_group = channels / groups;
  std::vector<te::IterVar> mean_axes, var_axes;
  int64_t count = per_group;
  mean_axes.push_back(te::reduce_axis(per_group, "kc"));
  var_axes.push_back(te::reduce_axis(per_group, "jc"));
  for (size_t d = 2; d < x.ndim(); ++d) {
    count *= x.shape()[d];
    mean_axes.push_back(te::reduce_axis(x.shape()[d], cat("k", d)));
    var_axes.push_back(te::reduce_axis(x.shape()[d], cat("j", d)));
  }
  // x at group g's element (c, spatial...) of batch n.
  auto element = [&](const tir::PrimExpr& n, const tir::PrimExpr& g, const std::vector<te::IterVar>& axes) {
    std::vector<tir::PrimExpr> at{n, g * tir::int_imm(per_group) + axes[0]};
    for (size_t a = 1; a < axes.size(); ++a) at.push_back(axes[a]);
    return tir::cast(wide, x(at));
  };
  const tir::PrimExpr inv_count = tir::make_const(wide, 1.0 / static_cast<double>(std::max<int64_t>(count, 1)));
  const te::Tensor total = te::compute({batch, groups}, call.name + "_sum", [&](const te::Indices& i) {
    return te::sum(element(i[0], i[1], mean_axes), mean_axes);
  });
  const te::Tensor sq = te::compute({batch, groups}, call.name + "_sq", [&](const te::Indices& i) {
    const tir::PrimExpr d = element(i[0], i[1], var_axes) - total(i[0], i[1]) * inv_count;
    return te::sum(d * d, var_axes);
  });
  const tir::PrimExpr epsilon = tir::make_const(wide, attrs.epsilon), one = tir::make_const(wide, 1);
  return {te::compute(x.shape(), call.name, [&](const te::Indices& i) {
    const tir::PrimExpr g = tir::floordiv(i[1], tir::int_imm(per_group));
    const tir::PrimExpr mean = tir::cast(dtype, total(i[0], g) * inv_count);
    const tir::PrimExpr rstd = tir::cast(dtype, one / tir::call("sqrt", {sq(i[0], g) * inv_count + epsilon}));
    return (x(index_exprs(i)) - mean) * rstd * channel_read(gamma, i, 1) + channel_read(beta, i, 1);
  })};
}

}  // namespace

void register_nn_group_norm_ops(OpRegistry& registry) {
  OpDef& group_norm =
      registry.add("nn.group_norm")
          .describe(
              "Splits the channels (axis 1) into num_groups groups and normalises each group of every batch "
              "element by its mean and variance: (x - mean) / sqrt(var + epsilon) * gamma[c] + beta[c].")
          .arg("data")
          .arg("gamma")
          .arg("beta")
          .attrs<GroupNormAttrs>()
          .set_relation<GroupNormAttrs>(group_norm_relation)
          .set_pattern(OpPattern::kOpaque);
  set_compute<GroupNormAttrs>(group_norm, group_norm_compute);
}

}  // namespace kiln
