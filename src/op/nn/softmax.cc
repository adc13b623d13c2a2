// Ops: nn.softmax, nn.log_softmax.
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

Type softmax_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  check_float_arg(data, "data");
  if (data.ndim() == 0)
    throw std::move(Error("argument 'data' must have at least 1 dimension").expected("(..., n)", "()"));
  normalize_axis(attrs.get_int("axis"), data.ndim(), cat("attribute 'axis' of 'data' ", shape_str(data.shape)));
  return args[0];
}

}  // namespace

void register_nn_softmax_ops(OpRegistry& registry) {
  registry.add("nn.softmax")
      .describe("exp(x - max) / sum(exp(x - max)) along 'axis'.")
      .arg("data")
      .attr("axis", AttrKind::kInt, -1)
      .set_relation(softmax_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("nn.log_softmax")
      .describe("x - max - log(sum(exp(x - max))) along 'axis'.")
      .arg("data")
      .attr("axis", AttrKind::kInt, -1)
      .set_relation(softmax_relation)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
