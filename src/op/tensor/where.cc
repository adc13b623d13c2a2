// Ops: where(condition, x, y) — x where condition is true, else y. The three arguments
// broadcast together numpy-style; condition is bool and x, y share a dtype.
#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {
namespace {

Type where_relation(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& condition = arg_tensor(args, 0, "condition");
  const TensorTypeNode& x = arg_tensor(args, 1, "x");
  const TensorTypeNode& y = arg_tensor(args, 2, "y");
  if (condition.dtype != DType::kBool)
    throw std::move(
        Error("argument 'condition' must be bool").expected("bool", std::string(dtype_name(condition.dtype))));
  require_same_dtype("x", x.dtype, "y", y.dtype);
  Shape shape = broadcast_args("x", x.shape, "y", y.shape);
  shape = broadcast_args("condition", condition.shape, "x and y (broadcast)", shape);
  return tensor_type(std::move(shape), x.dtype);
}

}  // namespace

void register_tensor_where_ops(OpRegistry& registry) {
  OpDef& where =
      registry.add("where")
          .describe("Selects x where condition is true and y elsewhere; the three arguments broadcast together.")
          .arg("condition")
          .arg("x")
          .arg("y")
          .set_relation(named_relation("where", where_relation))
          .set_pattern(OpPattern::kBroadcast);
  set_compute(where, [](const ComputeInput& call) {
    const te::Tensor condition = call.args[0], x = call.args[1], y = call.args[2];
    return std::vector<te::Tensor>{
        te::compute(expect_tensor(call.out_type, "result").shape, call.name, [&](const te::Indices& i) {
          return tir::select(broadcast_read(condition, i), broadcast_read(x, i), broadcast_read(y, i));
        })};
  });
}

}  // namespace kiln
