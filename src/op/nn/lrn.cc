// Ops: nn.lrn.
// Relay's local response normalisation across channels:
//   out[c] = data[c] / (bias + alpha / size * sum of data[c']^2 over the window)^beta,
// the window along 'axis' running from c - (size - 1) / 2 to c + size / 2 (ONNX's floor/ceil
// split, which is Relay's symmetric window for odd sizes), clipped to the tensor.
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

Type lrn_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  check_float_arg(data, "data");
  if (data.ndim() == 0)
    throw std::move(Error("argument 'data' must have at least 1 dimension").expected("(..., C, ...)", "()"));
  normalize_axis(attrs.get_int("axis"), data.ndim(), cat("attribute 'axis' of 'data' ", shape_str(data.shape)));
  if (attrs.get_int("size") < 1)
    throw std::move(Error("attribute 'size' must be positive").expected(">= 1", attrs.get("size").to_string()));
  return args[0];
}

}  // namespace

void register_nn_lrn_ops(OpRegistry& registry) {
  registry.add("nn.lrn")
      .describe(
          "Local response normalisation: data / (bias + alpha / size * window sum of data^2)^beta, "
          "the window of 'size' elements along 'axis'.")
      .arg("data")
      .attr("size", AttrKind::kInt, int64_t{5})
      .attr("axis", AttrKind::kInt, int64_t{1})
      .attr("bias", AttrKind::kFloat, 2.0)
      .attr("alpha", AttrKind::kFloat, 1e-5)
      .attr("beta", AttrKind::kFloat, 0.75)
      .set_relation(lrn_relation)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
