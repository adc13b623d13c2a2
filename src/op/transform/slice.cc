// Ops: strided_slice, take.
#include "op/op_util.h"
#include "op/transform/transform_util.h"
#include "runtime/kernels/transform/slice_plan.h"

namespace kiln {

namespace {

Type strided_slice_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  StridedSliceSpec spec = parse_strided_slice(attrs, data.ndim());
  Shape out;
  for (const AxisSlice& axis : plan_strided_slice(spec, data.shape)) out.push_back(axis.length);
  return tensor_type(std::move(out), data.dtype);
}

void check_take_mode(const std::string& mode) {
  if (mode != "clip" && mode != "wrap" && mode != "fast")
    throw std::move(
        Error("attribute 'mode' must be \"clip\", \"wrap\" or \"fast\"").expected("clip, wrap or fast", mode));
}

Type take_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& indices = arg_tensor(args, 1, "indices");
  if (indices.dtype != DType::kInt32 && indices.dtype != DType::kInt64)
    throw std::move(Error(cat("argument 'indices' with shape ", shape_str(indices.shape), " must hold integers"))
                        .expected("int32 or int64", std::string(dtype_name(indices.dtype))));
  check_take_mode(attrs.get_string("mode"));
  if (attrs.is_none("axis")) return tensor_type(indices.shape, data.dtype);  // indexes the flattened data
  int64_t axis = normalize_axis(attrs.get_int("axis"), data.ndim(), "take axis");
  // data.shape[:axis] + indices.shape + data.shape[axis+1:]
  Shape out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  return tensor_type(std::move(out), data.dtype);
}

}  // namespace

void register_transform_slice_ops(OpRegistry& registry) {
  registry.add("strided_slice")
      .describe(
          "numpy-style slice data[begin:end:stride] on the dims in 'axes' (None: the leading dims, one per entry of "
          "'begin'). Negative indices count from the end; out-of-range ones are clamped; strides may be negative. "
          "slice_mode=\"size\" reads end[i] as a size (-1: the rest) and ignores strides.")
      .arg("data")
      .required_attr("begin", AttrKind::kInts)
      .required_attr("end", AttrKind::kInts)
      .attr("strides", AttrKind::kInts, AttrValue())
      .attr("axes", AttrKind::kInts, AttrValue())
      .attr("slice_mode", AttrKind::kString, "end")
      .set_relation(relation_of("strided_slice", strided_slice_relation))
      .set_pattern(OpPattern::kInjective);

  registry.add("take")
      .describe(
          "Gathers the entries of 'data' at 'indices' along 'axis' (None: of the flattened data). Indices in "
          "[-n, 0) count from the end, like ONNX Gather. Beyond [-n, n): mode=\"clip\" clamps, \"wrap\" wraps "
          "around, \"fast\" is an error.")
      .arg("data")
      .arg("indices")
      .attr("axis", AttrKind::kInt, AttrValue())
      .attr("mode", AttrKind::kString, "clip")
      .set_relation(relation_of("take", take_relation))
      .set_pattern(OpPattern::kInjective);
}

}  // namespace kiln
