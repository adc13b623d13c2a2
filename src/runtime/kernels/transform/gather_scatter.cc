// Reference kernels: gather_elements, scatter_elements, gather_nd, scatter_nd.
#include <algorithm>
#include <cstring>

#include "kiln/attrs/indexing.h"
#include "kiln/support/strings.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/transform/copy_util.h"

namespace kiln {

namespace {

// Position in [0, extent) of index value `raw` (entry `i` of 'indices'); negative values
// count from the end, anything else out of range is an error.
int64_t resolve(const std::string& op, int64_t raw, int64_t extent, int64_t i) {
  if (raw < -extent || raw >= extent)
    throw std::move(Error(cat("index ", i, " of argument 'indices' is out of range"))
                        .op(op)
                        .expected(cat("in [", -extent, ", ", extent, ")"), cat(raw)));
  return raw < 0 ? raw + extent : raw;
}

using Reduction = ScatterReduction;

// out[at] = reduction(out[at], updates[from]). Integers combine in (wrapping) 64-bit
// arithmetic, floats in double, which rounds float32/16 products and sums exactly once.
void combine(NDArray& out, int64_t at, const NDArray& updates, int64_t from, Reduction r) {
  size_t bytes = dtype_bytes(out.dtype());
  auto* dst = static_cast<std::byte*>(out.raw()) + at * static_cast<int64_t>(bytes);
  const auto* src = static_cast<const std::byte*>(updates.raw()) + from * static_cast<int64_t>(bytes);
  if (r == Reduction::kUpdate) {
    std::memcpy(dst, src, bytes);
    return;
  }
  if (is_float(out.dtype())) {
    double a = out.at(at), b = updates.at(from);
    double v = r == Reduction::kAdd   ? a + b
               : r == Reduction::kMul ? a * b
               : r == Reduction::kMin ? std::min(a, b)
                                      : std::max(a, b);
    out.set(at, v);
    return;
  }
  int64_t a = out.int_at(at), b = updates.int_at(from);
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  int64_t v = r == Reduction::kAdd   ? static_cast<int64_t>(ua + ub)
              : r == Reduction::kMul ? static_cast<int64_t>(ua * ub)
              : r == Reduction::kMin ? std::min(a, b)
                                     : std::max(a, b);
  if (out.dtype() == DType::kBool) v = v != 0;
  store_from_int(out.raw(), out.dtype(), static_cast<size_t>(at), v);
}

void copy_element(NDArray& out, int64_t at, const NDArray& in, int64_t from) {
  size_t bytes = dtype_bytes(in.dtype());
  std::memcpy(static_cast<std::byte*>(out.raw()) + at * static_cast<int64_t>(bytes),
              static_cast<const std::byte*>(in.raw()) + from * static_cast<int64_t>(bytes), bytes);
}

// Flat position in 'data' of element `i` of 'indices' with the index replacing dimension axis.
int64_t element_target(const std::string& op, const NDArray& data, const NDArray& indices, int64_t axis, int64_t i) {
  std::vector<int64_t> at = unravel(i, indices.shape());
  at[axis] = resolve(op, indices.int_at(i), data.shape()[axis], i);
  for (size_t d = 0; d < at.size(); ++d)
    if (at[d] >= data.shape()[d])
      throw std::move(Error(cat("entry ", i, " of argument 'indices' lies outside argument 'data'"))
                          .op(op)
                          .expected(shape_str(data.shape()), shape_str(indices.shape())));
  return ravel(at, data.shape());
}

void gather_elements_kernel(const GatherElementsAttrs& attrs, std::span<const NDArray> inputs,
                            std::span<NDArray> outputs) {
  expect_arity("gather_elements", inputs, 2, outputs, 1);
  const NDArray& data = inputs[0];
  const NDArray& indices = inputs[1];
  int64_t axis = checked_axis("gather_elements", attrs.axis, data.ndim());
  expect_output("gather_elements", outputs[0], indices.shape(), data.dtype());
  for (int64_t i = 0; i < indices.numel(); ++i)
    copy_element(outputs[0], i, data, element_target("gather_elements", data, indices, axis, i));
}

void scatter_elements_kernel(const ScatterElementsAttrs& attrs, std::span<const NDArray> inputs,
                             std::span<NDArray> outputs) {
  expect_arity("scatter_elements", inputs, 3, outputs, 1);
  const NDArray& data = inputs[0];
  const NDArray& indices = inputs[1];
  const NDArray& updates = inputs[2];
  int64_t axis = checked_axis("scatter_elements", attrs.axis, data.ndim());
  Reduction r = attrs.kind();
  check(updates.shape() == indices.shape(), "scatter_elements: updates ", shape_str(updates.shape()),
        " must have the shape of indices ", shape_str(indices.shape()));
  expect_output("scatter_elements", outputs[0], data.shape(), data.dtype());
  std::memcpy(outputs[0].raw(), data.raw(), data.nbytes());
  for (int64_t i = 0; i < indices.numel(); ++i)
    combine(outputs[0], element_target("scatter_elements", data, indices, axis, i), updates, i, r);
}

// The index tensor (M, Y...) seen as: for each of the N = prod(Y) positions, the flat
// offset (in elements of 'data') of the slice it selects; slices are `slice` elements long.
struct NdIndexPlan {
  std::vector<int64_t> offsets;
  int64_t slice = 1;
};

NdIndexPlan plan_nd_indices(const std::string& op, const Shape& data_shape, const NDArray& indices,
                            int64_t batch_dims) {
  check(indices.ndim() >= 1, op, ": argument 'indices' needs the index length as its first axis");
  int64_t m = indices.shape()[0];
  check(batch_dims + m <= static_cast<int64_t>(data_shape.size()), op, ": indices of length ", m, " do not fit data ",
        shape_str(data_shape));
  int64_t positions =
      m == 0 ? num_elements(Shape(indices.shape().begin() + 1, indices.shape().end())) : indices.numel() / m;
  NdIndexPlan plan;
  for (size_t d = static_cast<size_t>(batch_dims + m); d < data_shape.size(); ++d) plan.slice *= data_shape[d];
  // Elements of data under one batch position: the product of the non-batch extents.
  int64_t batch_stride = plan.slice;
  for (int64_t d = batch_dims; d < batch_dims + m; ++d) batch_stride *= data_shape[d];
  // Positions under one batch position: prod(Y[batch_dims:]).
  int64_t per_batch = 1;
  for (size_t d = static_cast<size_t>(batch_dims) + 1; d < indices.shape().size(); ++d) per_batch *= indices.shape()[d];
  std::vector<int64_t> strides = contiguous_strides(data_shape);
  for (int64_t p = 0; p < positions; ++p) {
    int64_t offset = (per_batch == 0 ? 0 : p / per_batch) * batch_stride;
    for (int64_t k = 0; k < m; ++k) {
      int64_t i = k * positions + p;
      offset += resolve(op, indices.int_at(i), data_shape[batch_dims + k], i) * strides[batch_dims + k];
    }
    plan.offsets.push_back(offset);
  }
  return plan;
}

void gather_nd_kernel(const GatherNDAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  expect_arity("gather_nd", inputs, 2, outputs, 1);
  const NDArray& data = inputs[0];
  const NDArray& indices = inputs[1];
  int64_t batch_dims = attrs.batch_dims;
  NdIndexPlan plan = plan_nd_indices("gather_nd", data.shape(), indices, batch_dims);
  Shape out_shape(indices.shape().begin() + 1, indices.shape().end());
  out_shape.insert(out_shape.end(), data.shape().begin() + batch_dims + indices.shape()[0], data.shape().end());
  expect_output("gather_nd", outputs[0], out_shape, data.dtype());
  auto elem = static_cast<int64_t>(dtype_bytes(data.dtype()));
  int64_t bytes = elem * plan.slice;
  if (bytes == 0) return;
  for (size_t p = 0; p < plan.offsets.size(); ++p)
    std::memcpy(static_cast<std::byte*>(outputs[0].raw()) + static_cast<int64_t>(p) * bytes,
                static_cast<const std::byte*>(data.raw()) + plan.offsets[p] * elem, static_cast<size_t>(bytes));
}

void scatter_nd_kernel(const ScatterNDAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  expect_arity("scatter_nd", inputs, 3, outputs, 1);
  const NDArray& data = inputs[0];
  const NDArray& indices = inputs[1];
  const NDArray& updates = inputs[2];
  Reduction r = attrs.kind();
  NdIndexPlan plan = plan_nd_indices("scatter_nd", data.shape(), indices, 0);
  check(updates.numel() == static_cast<int64_t>(plan.offsets.size()) * plan.slice, "scatter_nd: updates ",
        shape_str(updates.shape()), " do not fit indices ", shape_str(indices.shape()), " into data ",
        shape_str(data.shape()));
  expect_output("scatter_nd", outputs[0], data.shape(), data.dtype());
  std::memcpy(outputs[0].raw(), data.raw(), data.nbytes());
  for (size_t p = 0; p < plan.offsets.size(); ++p)
    for (int64_t e = 0; e < plan.slice; ++e)
      combine(outputs[0], plan.offsets[p] + e, updates, static_cast<int64_t>(p) * plan.slice + e, r);
}

}  // namespace

void register_transform_gather_scatter_kernels(KernelRegistry& registry) {
  registry.add<GatherElementsAttrs>("gather_elements", gather_elements_kernel);
  registry.add<ScatterElementsAttrs>("scatter_elements", scatter_elements_kernel);
  registry.add<GatherNDAttrs>("gather_nd", gather_nd_kernel);
  registry.add<ScatterNDAttrs>("scatter_nd", scatter_nd_kernel);
}

}  // namespace kiln
