// Reference kernels: strided_slice, take.
#include <algorithm>
#include <cstring>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/transform/copy_util.h"
#include "runtime/kernels/transform/slice_plan.h"

namespace kiln {

namespace {

void strided_slice_kernel(const StridedSliceAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  expect_arity("strided_slice", inputs, 1, outputs, 1);
  const NDArray& data = inputs[0];
  std::vector<AxisSlice> plan = plan_strided_slice(parse_strided_slice(attrs, data.ndim()), data.shape());
  std::vector<int64_t> in_strides = contiguous_strides(data.shape());
  Shape out_shape;
  std::vector<int64_t> read_strides;
  int64_t offset = 0;
  for (size_t d = 0; d < plan.size(); ++d) {
    out_shape.push_back(plan[d].length);
    // A stride only matters when it is taken: with two or more elements |stride| < extent,
    // so the product cannot overflow.
    read_strides.push_back(plan[d].length > 1 ? plan[d].stride * in_strides[d] : 0);
    if (plan[d].length > 0) offset += plan[d].begin * in_strides[d];
  }
  expect_output("strided_slice", outputs[0], out_shape, data.dtype());
  gather_strided(outputs[0].raw(), data.raw(), out_shape, read_strides, offset, dtype_bytes(data.dtype()));
}

enum class TakeMode { kClip, kWrap, kFast };

TakeMode parse_take_mode(const std::string& mode) {
  if (mode == "wrap") return TakeMode::kWrap;
  if (mode == "fast") return TakeMode::kFast;
  return TakeMode::kClip;  // the only other value TakeAttrs::validate() lets through
}

// Position in [0, extent) that index `raw` (entry `i` of the indices) selects.
int64_t resolve_index(int64_t raw, int64_t extent, TakeMode mode, int64_t i) {
  if (extent == 0)
    throw std::move(
        Error(cat("index ", i, " selects from an axis of extent 0")).op("take").expected("no indices", cat(raw)));
  switch (mode) {
    case TakeMode::kWrap: {
      int64_t wrapped = raw % extent;
      return wrapped < 0 ? wrapped + extent : wrapped;
    }
    case TakeMode::kClip: return std::clamp(raw < 0 ? raw + extent : raw, int64_t{0}, extent - 1);
    case TakeMode::kFast: break;
  }
  if (raw < -extent || raw >= extent)
    throw std::move(Error(cat("index ", i, " of argument 'indices' is out of range (mode=\"fast\")"))
                        .op("take")
                        .expected(cat("in [", -extent, ", ", extent, ")"), cat(raw)));
  return raw < 0 ? raw + extent : raw;
}

void take_kernel(const TakeAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  expect_arity("take", inputs, 2, outputs, 1);
  const NDArray& data = inputs[0];
  const NDArray& indices = inputs[1];
  check(is_int(indices.dtype()), "take: argument 'indices' must hold integers, found ", dtype_name(indices.dtype()));
  TakeMode mode = parse_take_mode(attrs.mode);
  // data seen as [outer, extent, inner]; axis=None takes from the flattened data.
  Shape out_shape = attrs.result_shape(data.shape(), indices.shape());
  int64_t outer = 1, extent = data.numel(), inner = 1;
  if (attrs.axis) {
    const Shape& shape = data.shape();
    auto axis = static_cast<size_t>(checked_axis("take", *attrs.axis, data.ndim()));
    outer = num_elements(Shape(shape.begin(), shape.begin() + axis));
    extent = shape[axis];
    inner = num_elements(Shape(shape.begin() + axis + 1, shape.end()));
  }
  expect_output("take", outputs[0], out_shape, data.dtype());

  std::vector<int64_t> positions(static_cast<size_t>(indices.numel()));
  for (int64_t i = 0; i < indices.numel(); ++i) positions[i] = resolve_index(indices.int_at(i), extent, mode, i);
  const size_t block = static_cast<size_t>(inner) * dtype_bytes(data.dtype());
  if (block == 0) return;
  const auto* src = static_cast<const std::byte*>(data.raw());
  auto* dst = static_cast<std::byte*>(outputs[0].raw());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t position : positions) {
      std::memcpy(dst, src + static_cast<size_t>(o * extent + position) * block, block);
      dst += block;
    }
  }
}

}  // namespace

void register_transform_slice_kernels(KernelRegistry& registry) {
  registry.add<StridedSliceAttrs>("strided_slice", strided_slice_kernel);
  registry.add<TakeAttrs>("take", take_kernel);
  registry.add_output_fn("strided_slice", [](const Attrs& attrs, std::span<const NDArray> in) {
    const auto fixed = attrs_from<StridedSliceAttrs>(attrs, "strided_slice");
    Shape shape;
    for (const AxisSlice& s : plan_strided_slice(parse_strided_slice(fixed, in[0].ndim()), in[0].shape()))
      shape.push_back(s.length);
    return std::vector<OutputSpec>{{shape, in[0].dtype()}};
  });
  registry.add_output_fn("take", [](const Attrs& attrs, std::span<const NDArray> in) {
    return std::vector<OutputSpec>{
        {attrs_from<TakeAttrs>(attrs, "take").result_shape(in[0].shape(), in[1].shape()), in[0].dtype()}};
  });
}

}  // namespace kiln
