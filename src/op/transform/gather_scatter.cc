// Ops: gather_elements, scatter_elements, gather_nd, scatter_nd.
//
// gather_nd and scatter_nd take Relay's index layout: the M coordinates of each index lie
// along the FIRST axis of 'indices' (shape (M, Y_0, ..., Y_K-1)); ONNX puts them last, and
// its converter moves that axis to the front.
#include "kiln/attrs/indexing.h"
#include "op/op_util.h"
#include "op/transform/transform_util.h"

namespace kiln {

namespace {

void require_int_indices(const TensorTypeNode& indices) {
  if (!is_int(indices.dtype))
    throw std::move(Error(cat("argument 'indices' with shape ", shape_str(indices.shape), " must hold integers"))
                        .expected("an integer dtype", std::string(dtype_name(indices.dtype))));
}

void require_same_rank(const std::string& name, const TensorTypeNode& t, const TensorTypeNode& data) {
  if (t.ndim() != data.ndim())
    throw std::move(Error(cat("argument '", name, "' must have the rank of argument 'data' ", shape_str(data.shape)))
                        .expected(cat("rank ", data.ndim()), cat("rank ", t.ndim(), " ", shape_str(t.shape))));
}

// Equal extents where both are known.
bool compatible(const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i] && a[i] != kAnyDim && b[i] != kAnyDim) return false;
  return true;
}

Type gather_elements_relation(const std::vector<Type>& args, const GatherElementsAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& indices = arg_tensor(args, 1, "indices");
  require_int_indices(indices);
  require_same_rank("indices", indices, data);
  normalize_axis(attrs.axis, data.ndim(), "gather_elements axis");
  return tensor_type(indices.shape, data.dtype);
}

Type scatter_elements_relation(const std::vector<Type>& args, const ScatterElementsAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& indices = arg_tensor(args, 1, "indices");
  const TensorTypeNode& updates = arg_tensor(args, 2, "updates");
  require_int_indices(indices);
  require_same_rank("indices", indices, data);
  if (!compatible(indices.shape, updates.shape))
    throw std::move(Error("argument 'updates' must have the shape of argument 'indices'")
                        .expected(shape_str(indices.shape), shape_str(updates.shape)));
  if (updates.dtype != data.dtype)
    throw std::move(Error("argument 'updates' must have the dtype of argument 'data'")
                        .expected(std::string(dtype_name(data.dtype)), std::string(dtype_name(updates.dtype))));
  normalize_axis(attrs.axis, data.ndim(), "scatter_elements axis");
  return args[0];
}

// M, the length of each index (first axis of 'indices'), which must be known.
int64_t index_length(const TensorTypeNode& indices, const TensorTypeNode& data, int64_t batch_dims) {
  require_int_indices(indices);
  if (indices.ndim() < 1 || indices.shape[0] == kAnyDim)
    throw std::move(Error("argument 'indices' needs a known first axis (the index length M)")
                        .expected("shape (M, ...)", shape_str(indices.shape)));
  int64_t m = indices.shape[0];
  if (batch_dims < 0 || m + batch_dims > data.ndim() || batch_dims > indices.ndim() - 1)
    throw std::move(Error(cat("indices of length ", m, " with ", batch_dims, " batch dims do not fit argument 'data' ",
                              shape_str(data.shape)))
                        .expected(cat("M + batch_dims <= ", data.ndim()), cat("indices ", shape_str(indices.shape))));
  for (int64_t b = 0; b < batch_dims; ++b) {
    int64_t di = data.shape[b], ii = indices.shape[b + 1];
    if (di != ii && di != kAnyDim && ii != kAnyDim)
      throw std::move(Error(cat("batch dim ", b, " of argument 'indices' differs from argument 'data'"))
                          .expected(shape_str(data.shape), shape_str(indices.shape)));
  }
  return m;
}

Type gather_nd_relation(const std::vector<Type>& args, const GatherNDAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& indices = arg_tensor(args, 1, "indices");
  int64_t batch_dims = attrs.batch_dims;
  int64_t m = index_length(indices, data, batch_dims);
  Shape out(indices.shape.begin() + 1, indices.shape.end());
  out.insert(out.end(), data.shape.begin() + batch_dims + m, data.shape.end());
  return tensor_type(std::move(out), data.dtype);
}

Type scatter_nd_relation(const std::vector<Type>& args, const ScatterNDAttrs&) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& indices = arg_tensor(args, 1, "indices");
  const TensorTypeNode& updates = arg_tensor(args, 2, "updates");
  int64_t m = index_length(indices, data, 0);
  Shape expected(indices.shape.begin() + 1, indices.shape.end());
  expected.insert(expected.end(), data.shape.begin() + m, data.shape.end());
  if (!compatible(expected, updates.shape))
    throw std::move(Error(cat("argument 'updates' does not fit indices ", shape_str(indices.shape), " into data ",
                              shape_str(data.shape)))
                        .expected(shape_str(expected), shape_str(updates.shape)));
  if (updates.dtype != data.dtype)
    throw std::move(Error("argument 'updates' must have the dtype of argument 'data'")
                        .expected(std::string(dtype_name(data.dtype)), std::string(dtype_name(updates.dtype))));
  return args[0];
}

}  // namespace

void register_transform_gather_scatter_ops(OpRegistry& registry) {
  registry.add("gather_elements")
      .describe(
          "out[i_0, ..., i_n] = data[i_0, ..., indices[i_0, ..., i_n], ..., i_n] with the index replacing "
          "dimension 'axis' (ONNX GatherElements, Relay gather). Negative indices count from the end.")
      .arg("data")
      .arg("indices")
      .attrs<GatherElementsAttrs>()
      .set_relation<GatherElementsAttrs>(gather_elements_relation)
      .set_pattern(OpPattern::kInjective);

  registry.add("scatter_elements")
      .describe(
          "A copy of 'data' where out[..., indices[i], ...] (the index replacing dimension 'axis') is combined with "
          "updates[i]: reduction=\"update\" replaces, \"add\"/\"mul\"/\"min\"/\"max\" accumulate, in index order.")
      .arg("data")
      .arg("indices")
      .arg("updates")
      .attrs<ScatterElementsAttrs>()
      .set_relation<ScatterElementsAttrs>(scatter_elements_relation)
      .set_pattern(OpPattern::kOpaque);

  registry.add("gather_nd")
      .describe(
          "Gathers slices of 'data' at M-coordinate indices laid along the first axis of 'indices' (M, Y...): "
          "out[y..., x...] = data[b..., indices[:, y...], x...], the first 'batch_dims' axes of Y matching the "
          "leading axes of 'data'. Negative coordinates count from the end.")
      .arg("data")
      .arg("indices")
      .attrs<GatherNDAttrs>()
      .set_relation<GatherNDAttrs>(gather_nd_relation)
      .set_pattern(OpPattern::kInjective);

  registry.add("scatter_nd")
      .describe(
          "A copy of 'data' where the slices at the M-coordinate indices (laid along the first axis of 'indices') "
          "are combined with 'updates' of shape Y... + data.shape[M:]; mode as scatter_elements' reduction.")
      .arg("data")
      .arg("indices")
      .arg("updates")
      .attrs<ScatterNDAttrs>()
      .set_relation<ScatterNDAttrs>(scatter_nd_relation)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
