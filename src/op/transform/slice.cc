// Ops: strided_slice, take.
#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/op_util.h"
#include "op/transform/transform_util.h"
#include "runtime/kernels/transform/slice_plan.h"

namespace kiln {

namespace {

Type strided_slice_relation(const std::vector<Type>& args, const StridedSliceAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  StridedSliceSpec spec = parse_strided_slice(attrs, data.ndim());
  Shape out;
  for (const AxisSlice& axis : plan_strided_slice(spec, data.shape)) out.push_back(axis.length);
  return tensor_type(std::move(out), data.dtype);
}

Type take_relation(const std::vector<Type>& args, const TakeAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& indices = arg_tensor(args, 1, "indices");
  if (indices.dtype != DType::kInt32 && indices.dtype != DType::kInt64)
    throw std::move(Error(cat("argument 'indices' with shape ", shape_str(indices.shape), " must hold integers"))
                        .expected("int32 or int64", std::string(dtype_name(indices.dtype))));
  if (attrs.axis) normalize_axis(*attrs.axis, data.ndim(), "take axis");  // its error names the op
  return tensor_type(attrs.result_shape(data.shape, indices.shape), data.dtype);
}

std::vector<te::Tensor> strided_slice_compute(const ComputeInput& call, const StridedSliceAttrs& attrs) {
  const te::Tensor x = call.args[0];
  const std::vector<AxisSlice> plan =
      plan_strided_slice(parse_strided_slice(attrs, static_cast<int64_t>(x.ndim())), x.shape());
  return {te::compute(expect_tensor(call.out_type, "result").shape, call.name, [&](const te::Indices& i) {
    std::vector<tir::PrimExpr> index;
    for (size_t d = 0; d < plan.size(); ++d)
      index.push_back(tir::int_imm(plan[d].begin) + tir::int_imm(plan[d].stride) * i[d]);
    return x(index);
  })};
}

// The position an index selects, as the reference kernel's resolve_index: clip counts
// negative indices from the end and clamps; wrap takes the index modulo the extent.
tir::PrimExpr take_position(tir::PrimExpr raw, int64_t extent, const std::string& mode) {
  raw = tir::cast(DType::kInt64, raw);
  const tir::PrimExpr n = tir::int_imm(extent);
  if (mode == "wrap") return tir::floormod(raw, n);
  const tir::PrimExpr from_end = tir::select(tir::lt(raw, tir::int_imm(0)), raw + n, raw);
  return tir::min(tir::max(from_end, tir::int_imm(0)), tir::int_imm(extent - 1));
}

std::vector<te::Tensor> take_compute(const ComputeInput& call, const TakeAttrs& attrs) {
  const te::Tensor data = call.args[0], indices = call.args[1];
  const std::string& mode = attrs.mode;
  const std::vector<int64_t>& out_shape = expect_tensor(call.out_type, "result").shape;
  if (!attrs.axis) {
    // Indexes the flattened data: the position, unravelled into data's row-major indices.
    const te::Tensor flat_data =
        te::compute({num_elements(data.shape())}, call.name + "_flat",
                    [&](const te::Indices& i) { return row_major_read(data, i, {num_elements(data.shape())}); });
    return {te::compute(out_shape, call.name, [&](const te::Indices& i) {
      return flat_data({take_position(indices(index_exprs(i)), num_elements(data.shape()), mode)});
    })};
  }
  const size_t axis = static_cast<size_t>(normalize_axis(*attrs.axis, static_cast<int64_t>(data.ndim())));
  return {te::compute(out_shape, call.name, [&](const te::Indices& i) {
    std::vector<tir::PrimExpr> index_of_index(i.begin() + axis, i.begin() + axis + indices.ndim());
    std::vector<tir::PrimExpr> index(i.begin(), i.begin() + axis);
    index.push_back(take_position(indices(index_of_index), data.shape()[axis], mode));
    index.insert(index.end(), i.begin() + axis + indices.ndim(), i.end());
    return data(index);
  })};
}

// mode "fast" reports out-of-range indices, and no index fits an axis of extent 0: both stay
// with the reference kernel.
std::string take_limit(const std::vector<Type>& args, const Type&, const Attrs& attrs) {
  if (attrs_from<TakeAttrs>(attrs, "take").mode == "fast") return "mode \"fast\" reports out-of-range indices";
  for (int64_t d : expect_tensor(args[0], "data").shape)
    if (d == 0) return "data with an axis of extent 0";
  return "";
}

}  // namespace

void register_transform_slice_ops(OpRegistry& registry) {
  registry.add("strided_slice")
      .describe(
          "numpy-style slice data[begin:end:stride] on the dims in 'axes' (None: the leading dims, one per entry of "
          "'begin'). Negative indices count from the end; out-of-range ones are clamped; strides may be negative. "
          "slice_mode=\"size\" reads end[i] as a size (-1: the rest) and ignores strides.")
      .arg("data")
      .attrs<StridedSliceAttrs>()
      .set_relation<StridedSliceAttrs>(strided_slice_relation)
      .set_pattern(OpPattern::kInjective);

  registry.add("take")
      .describe(
          "Gathers the entries of 'data' at 'indices' along 'axis' (None: of the flattened data). Indices in "
          "[-n, 0) count from the end, like ONNX Gather. Beyond [-n, n): mode=\"clip\" clamps, \"wrap\" wraps "
          "around, \"fast\" is an error.")
      .arg("data")
      .arg("indices")
      .attrs<TakeAttrs>()
      .set_relation<TakeAttrs>(take_relation)
      .set_pattern(OpPattern::kInjective);
  set_compute<StridedSliceAttrs>(registry.get_mutable("strided_slice"), strided_slice_compute);
  set_compute<TakeAttrs>(registry.get_mutable("take"), take_compute, take_limit);
}

}  // namespace kiln
