// Ops whose result extent depends on the data: argwhere, unique. Their relations give '?'
// for that extent; the interpreter lets the kernel size the output.
#include "kiln/attrs/transform.h"
#include "op/op_util.h"
#include "op/transform/transform_util.h"

namespace kiln {

namespace {

Type argwhere_relation(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& condition = arg_tensor(args, 0, "condition");
  return tensor_type({kAnyDim, condition.ndim()}, DType::kInt64);
}

Type unique_relation(const std::vector<Type>& args, const UniqueAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  Shape values{kAnyDim};
  int64_t compared = num_elements(data.shape);  // entries deduplicated: elements or slices
  if (attrs.axis) {
    int64_t axis = normalize_axis(*attrs.axis, data.ndim(), "unique axis");
    values = data.shape;
    values[axis] = kAnyDim;
    compared = data.shape[axis];
  } else {
    for (int64_t d : data.shape)
      if (d == kAnyDim) compared = kAnyDim;
  }
  Type index = tensor_type({kAnyDim}, DType::kInt64);
  return tuple_type({tensor_type(values, data.dtype), index, tensor_type({compared}, DType::kInt64), index});
}

}  // namespace

void register_transform_unique_ops(OpRegistry& registry) {
  registry.add("argwhere")
      .describe(
          "The coordinates of the non-zero entries of 'condition', in row-major order, as an int64 tensor of "
          "shape (count, ndim) (Relay gives int32; int64 is ONNX's index type).")
      .arg("condition")
      .set_relation(relation_of("argwhere", argwhere_relation))
      .set_pattern(OpPattern::kOpaque);

  registry.add("unique")
      .describe(
          "The distinct entries of 'data' (elements, or slices along 'axis' when given), ascending when 'sorted' "
          "(lexicographic for slices) else in order of first occurrence, as the tuple (values, first-occurrence "
          "indices, inverse indices, counts), like ONNX Unique.")
      .arg("data")
      .attrs<UniqueAttrs>()
      .set_relation<UniqueAttrs>(unique_relation)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
