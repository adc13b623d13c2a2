// Ops: nn.instance_norm.
// Relay's instance normalisation: every (batch, channel) slice of 'data' is normalised by its
// own mean and variance over the remaining axes, then scaled by gamma[channel] and shifted by
// beta[channel]. The channel axis is 'axis' (1 for NCHW-like data); axis 0 is the batch.
#include "kiln/attrs/nn.h"
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

void check_channel_param(const std::vector<Type>& args, size_t i, const std::string& name, const TensorTypeNode& data,
                         int64_t axis) {
  const TensorTypeNode& p = arg_tensor(args, i, name);
  if (p.dtype != data.dtype)
    throw std::move(Error(cat("argument '", name, "' must have the dtype of 'data'"))
                        .expected(std::string(dtype_name(data.dtype)), std::string(dtype_name(p.dtype))));
  int64_t channels = data.shape[axis];
  if (p.ndim() != 1 || (p.shape[0] >= 0 && channels >= 0 && p.shape[0] != channels))
    throw std::move(
        Error(cat("argument '", name, "' must match channel axis ", axis, " of 'data' ", shape_str(data.shape)))
            .expected(shape_str({channels}), shape_str(p.shape)));
}

// epsilon is checked by NormAttrs::validate.
Type instance_norm_relation(const std::vector<Type>& args, const InstanceNormAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  check_float_arg(data, "data");
  if (data.ndim() < 2)
    throw std::move(Error("argument 'data' must have a batch and a channel axis")
                        .expected("(N, C, d1 ... dk)", shape_str(data.shape)));
  int64_t axis = normalize_axis(attrs.axis, data.ndim(), cat("attribute 'axis' of 'data' ", shape_str(data.shape)));
  if (axis == 0)
    throw std::move(
        Error("attribute 'axis' names the batch axis 0; it must name the channel axis").expected("1 ... ndim-1", "0"));
  check_channel_param(args, 1, "gamma", data, axis);
  check_channel_param(args, 2, "beta", data, axis);
  return args[0];
}

}  // namespace

void register_nn_instance_norm_ops(OpRegistry& registry) {
  registry.add("nn.instance_norm")
      .describe(
          "Normalises every (batch, channel) slice of 'data' by its mean and variance over the other "
          "axes: (x - mean) / sqrt(var + epsilon) * gamma + beta, gamma and beta per channel ('axis').")
      .arg("data")
      .arg("gamma")
      .arg("beta")
      .attrs<InstanceNormAttrs>()
      .set_relation<InstanceNormAttrs>(instance_norm_relation)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
