// Op: topk(data; k, axis, ret_type, is_ascend, dtype) -- the k largest (or, with is_ascend,
// smallest) elements along an axis, sorted, with their indices (Relay's topk). Equal values
// keep their order, so the lower index comes first; NaN counts as larger than any number.
// k < 1 selects the whole axis (as in Relay). ret_type "both" gives the tuple (values,
// indices), "values" or "indices" one tensor. Indices are int64 by default (ONNX TopK's
// type; Relay defaults to int32).
#include "kiln/attrs/tensor.h"
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {
namespace {

Type topk_relation(const std::vector<Type>& args, const TopKAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  require_dtype("data", data.dtype, DTypeClass::kNumeric);
  const int64_t axis = checked_axis(attrs.axis, "axis", data.shape);
  const int64_t k = attrs.k;
  const int64_t extent = data.shape[static_cast<size_t>(axis)];
  if (k > extent && extent != kAnyDim)
    throw std::move(Error(cat("attribute 'k' = ", k, " exceeds axis ", axis, " of data shape ", shape_str(data.shape)))
                        .expected(cat("k <= ", extent), cat(k)));
  Shape out = data.shape;
  if (k >= 1) out[static_cast<size_t>(axis)] = k;
  Type values = tensor_type(out, data.dtype);
  Type indices = tensor_type(out, attrs.indices_dtype());
  if (!attrs.returns_indices()) return values;
  if (!attrs.returns_values()) return indices;
  return tuple_type({values, indices});
}

}  // namespace

void register_tensor_topk_ops(OpRegistry& registry) {
  registry.add("topk")
      .describe(
          "The k largest (is_ascend: smallest) elements along axis, sorted, and their indices; ties "
          "keep the lower index first, NaN is larger than any number; k < 1 takes the whole axis.")
      .arg("data")
      .attrs<TopKAttrs>()
      .set_relation<TopKAttrs>(topk_relation)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
