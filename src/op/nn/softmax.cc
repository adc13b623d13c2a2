// Ops: nn.softmax, nn.log_softmax.
#include <limits>

#include "kiln/attrs/nn.h"
#include "kiln/op/strategy.h"
#include "op/compute_util.h"
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

// As the reference kernel: the row maximum (0 for a row of -inf, so that exp gives 0, not
// NaN) is subtracted before exp; softmax multiplies by 1/sum, log_softmax subtracts
// max + log(sum).
std::function<std::vector<te::Tensor>(const ComputeInput&, const SoftmaxAttrs&)> softmax_compute(bool is_log) {
  return [is_log](const ComputeInput& call, const SoftmaxAttrs& attrs) {
    const te::Tensor x = call.args[0];
    const size_t axis = static_cast<size_t>(normalize_axis(attrs.axis, x.ndim()));
    std::vector<int64_t> row_shape = x.shape();
    row_shape[axis] = 1;
    const DType dtype = x.dtype();
    const te::IterVar k = te::reduce_axis(x.shape()[axis], "k");
    const te::Tensor row_max = te::compute(row_shape, call.name + "_max",
                                           [&](const te::Indices& i) { return te::max(x(at_axis(i, axis, k)), {k}); });
    auto shift = [&](const te::Indices& i) {
      const tir::PrimExpr m = row_max(at_axis(i, axis, tir::int_imm(0)));
      const tir::PrimExpr minus_inf = tir::make_const(dtype, -std::numeric_limits<double>::infinity());
      return tir::select(tir::eq(m, minus_inf), tir::make_const(dtype, 0), m);
    };
    const te::IterVar j = te::reduce_axis(x.shape()[axis], "j");
    const te::Tensor row_sum = te::compute(row_shape, call.name + "_sum", [&](const te::Indices& i) {
      return te::sum(tir::call("exp", {x(at_axis(i, axis, j)) - shift(i)}), {j});
    });
    return std::vector<te::Tensor>{te::compute(x.shape(), call.name, [&](const te::Indices& i) {
      const tir::PrimExpr v = x(index_exprs(i)), s = row_sum(at_axis(i, axis, tir::int_imm(0)));
      if (is_log) return v - (shift(i) + tir::call("log", {s}));
      return tir::call("exp", {v - shift(i)}) * (tir::make_const(dtype, 1) / s);
    })};
  };
}

}  // namespace

void register_nn_softmax_ops(OpRegistry& registry) {
  OpDef& softmax = registry.add("nn.softmax")
                       .describe("exp(x - max) / sum(exp(x - max)) along 'axis'.")
                       .arg("data")
                       .attrs<SoftmaxAttrs>()
                       .set_relation<SoftmaxAttrs>(softmax_relation)
                       .set_pattern(OpPattern::kOpaque);
  set_compute<SoftmaxAttrs>(softmax, softmax_compute(false));
  OpDef& log_softmax = registry.add("nn.log_softmax")
                           .describe("x - max - log(sum(exp(x - max))) along 'axis'.")
                           .arg("data")
                           .attrs<SoftmaxAttrs>()
                           .set_relation<SoftmaxAttrs>(softmax_relation)
                           .set_pattern(OpPattern::kOpaque);
  set_compute<SoftmaxAttrs>(log_softmax, softmax_compute(true));
}

}  // namespace kiln
