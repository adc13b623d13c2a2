// Ops: dyn.shape_of(data) — data's shape as a 1-D int64 tensor — and dyn.size(data), its
// number of elements as an int64 scalar (Relay's shape_of and ndarray_size). The importer
// makes them for ONNX Shape / Size of a tensor whose dimensions are known only at run time;
// once the data's shape is static, DynamicToStatic replaces them by constants, so the shape
// arithmetic around them folds and the dyn ops they feed become static.
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {
namespace {

Type shape_of_relation(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  return tensor_type({data.ndim()}, DType::kInt64);
}

Type size_relation(const std::vector<Type>& args, const Attrs&) {
  arg_tensor(args, 0, "data");
  return tensor_type({}, DType::kInt64);
}

}  // namespace

void register_dyn_shape_ops(OpRegistry& registry) {
  registry.add("dyn.shape_of")
      .describe("The shape of data as a 1-D int64 tensor; a constant once data's shape is static.")
      .arg("data")
      .set_relation(named_relation("dyn.shape_of", shape_of_relation))
      .set_pattern(OpPattern::kOpaque);
  registry.add("dyn.size")
      .describe("The number of elements of data as an int64 scalar; a constant once data's shape is static.")
      .arg("data")
      .set_relation(named_relation("dyn.size", size_relation))
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
