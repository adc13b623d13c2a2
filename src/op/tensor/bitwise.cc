// Ops: bitwise_and, bitwise_or, bitwise_xor (broadcasting) and bitwise_not, on integer
// dtypes (as ONNX's Bitwise* ops; bool is not one of them). The computes use tir's bitwise
// intrinsics, which generated C writes with its own operators.
#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {
namespace {

void require_integer(const std::string& arg_name, DType t) {
  if (!is_int(t))
    throw std::move(Error(cat("argument '", arg_name, "' has an unsupported dtype"))
                        .expected("an integer dtype", std::string(dtype_name(t))));
}

Type bitwise_binary_relation(const std::vector<Type>& args) {
  const TensorTypeNode& lhs = arg_tensor(args, 0, "lhs");
  const TensorTypeNode& rhs = arg_tensor(args, 1, "rhs");
  require_integer("lhs", lhs.dtype);
  require_same_dtype("lhs", lhs.dtype, "rhs", rhs.dtype);
  return tensor_type(broadcast_args("lhs", lhs.shape, "rhs", rhs.shape), lhs.dtype);
}

Type bitwise_not_relation(const std::vector<Type>& args) {
  require_integer("data", arg_tensor(args, 0, "data").dtype);
  return args[0];
}

void add_binary(OpRegistry& registry, const std::string& name, const std::string& doc) {
  OpDef& op = registry.add(name)
                  .describe(doc)
                  .arg("lhs")
                  .arg("rhs")
                  .set_relation(named_relation(
                      name, [](const std::vector<Type>& args, const Attrs&) { return bitwise_binary_relation(args); }))
                  .set_pattern(OpPattern::kBroadcast);
  set_compute(op, [name](const ComputeInput& call) {
    const TensorTypeNode& out = expect_tensor(call.out_type, "result");
    const te::Tensor a = call.args[0], b = call.args[1];
    return std::vector<te::Tensor>{te::compute(out.shape, call.name, [&](const te::Indices& i) {
      return tir::call(name, {broadcast_read(a, i), broadcast_read(b, i)});
    })};
  });
}

}  // namespace

void register_tensor_bitwise_ops(OpRegistry& registry) {
  add_binary(registry, "bitwise_and", "lhs & rhs for integers, broadcasting.");
  add_binary(registry, "bitwise_or", "lhs | rhs for integers, broadcasting.");
  add_binary(registry, "bitwise_xor", "lhs ^ rhs for integers, broadcasting.");

  OpDef& bitwise_not =
      registry.add("bitwise_not")
          .describe("~x for integers: every bit flipped.")
          .arg("data")
          .set_relation(named_relation(
              "bitwise_not", [](const std::vector<Type>& args, const Attrs&) { return bitwise_not_relation(args); }))
          .set_pattern(OpPattern::kElemwise);
  set_compute(bitwise_not,
              elementwise_compute([](tir::PrimExpr v, const ComputeInput&) { return tir::call("bitwise_not", {v}); }));
}

}  // namespace kiln
