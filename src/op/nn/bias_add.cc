// Ops: nn.bias_add(data, bias) adds the 1-D bias along data's `axis` (default 1, the
// channel axis of NCHW). It is a broadcast that keeps the frontend from having to reshape
// bias into (C, 1, 1).
#include "kiln/attrs/nn.h"
#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {
namespace {

Type bias_add_relation(const std::vector<Type>& args, const BiasAddAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& bias = arg_tensor(args, 1, "bias");
  require_dtype("data", data.dtype, DTypeClass::kNumeric);
  require_same_dtype("data", data.dtype, "bias", bias.dtype);
  const int64_t axis = checked_axis(attrs.axis, "axis", data.shape);
  const int64_t channels = data.shape[static_cast<size_t>(axis)];
  const bool matches =
      bias.ndim() == 1 && (bias.shape[0] == channels || bias.shape[0] == kAnyDim || channels == kAnyDim);
  if (!matches)
    throw std::move(Error(cat("argument 'bias' of shape ", shape_str(bias.shape), " does not match data shape ",
                              shape_str(data.shape), " at axis ", axis))
                        .expected(shape_str({channels}), shape_str(bias.shape)));
  return args[0];
}

std::vector<te::Tensor> bias_add_compute(const ComputeInput& call, const BiasAddAttrs& attrs) {
  const te::Tensor data = call.args[0], bias = call.args[1];
  const int64_t axis = attrs.axis;
  return {te::compute(data.shape(), call.name,
                      [&](const te::Indices& i) { return data(index_exprs(i)) + channel_read(bias, i, axis); })};
}

}  // namespace

void register_nn_bias_add_ops(OpRegistry& registry) {
  registry.add("nn.bias_add")
      .describe("data + bias broadcast along axis; bias has shape (data.shape[axis],). Integers wrap.")
      .arg("data")
      .arg("bias")
      .attrs<BiasAddAttrs>()
      .set_relation<BiasAddAttrs>(bias_add_relation)
      .set_pattern(OpPattern::kBroadcast);
  set_compute<BiasAddAttrs>(registry.get_mutable("nn.bias_add"), bias_add_compute);
}

}  // namespace kiln
