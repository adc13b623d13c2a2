// Op: topk(data; k, axis, ret_type, is_ascend, dtype) -- the k largest (or, with is_ascend,
// smallest) elements along an axis, sorted, with their indices (Relay's topk). Equal values
// keep their order, so the lower index comes first; NaN counts as larger than any number.
// k < 1 selects the whole axis (as in Relay). ret_type "both" gives the tuple (values,
// indices), "values" or "indices" one tensor. Indices are int64 by default (ONNX TopK's
// type; Relay defaults to int32).
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {
namespace {

DType indices_dtype(const Attrs& attrs) {
  const std::string& name = attrs.get_string("dtype");
  DType dtype;
  if (!try_parse_dtype(name, &dtype) || !is_int(dtype))
    throw std::move(Error("attribute 'dtype' must name an integer dtype for the indices")
                        .expected("\"int64\" or \"int32\"", cat('"', name, '"')));
  return dtype;
}

Type topk_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  require_dtype("data", data.dtype, DTypeClass::kNumeric);
  const int64_t axis = axis_attr(attrs, "axis", data.shape);
  const int64_t k = attrs.get_int("k");
  const int64_t extent = data.shape[static_cast<size_t>(axis)];
  if (k > extent && extent != kAnyDim)
    throw std::move(Error(cat("attribute 'k' = ", k, " exceeds axis ", axis, " of data shape ", shape_str(data.shape)))
                        .expected(cat("k <= ", extent), cat(k)));
  Shape out = data.shape;
  if (k >= 1) out[static_cast<size_t>(axis)] = k;
  Type values = tensor_type(out, data.dtype);
  Type indices = tensor_type(out, indices_dtype(attrs));
  const std::string& ret_type = attrs.get_string("ret_type");
  if (ret_type == "both") return tuple_type({values, indices});
  if (ret_type == "values") return values;
  if (ret_type == "indices") return indices;
  throw std::move(Error("attribute 'ret_type' is not one of \"both\", \"values\", \"indices\"")
                      .expected("\"both\", \"values\" or \"indices\"", cat('"', ret_type, '"')));
}

}  // namespace

void register_tensor_topk_ops(OpRegistry& registry) {
  registry.add("topk")
      .describe(
          "The k largest (is_ascend: smallest) elements along axis, sorted, and their indices; ties "
          "keep the lower index first, NaN is larger than any number; k < 1 takes the whole axis.")
      .arg("data")
      .attr("k", AttrKind::kInt, int64_t{1})
      .attr("axis", AttrKind::kInt, int64_t{-1})
      .attr("ret_type", AttrKind::kString, "both")
      .attr("is_ascend", AttrKind::kBool, false)
      .attr("dtype", AttrKind::kString, "int64")
      .set_relation(named_relation("topk", topk_relation))
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
