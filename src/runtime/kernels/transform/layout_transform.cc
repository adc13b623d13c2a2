// Reference kernels: layout_transform.
#include <cstring>

#include "kiln/attrs/layout.h"
#include "kiln/attrs/transform.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/transform/copy_util.h"
#include "runtime/kernels/transform/layout_copy.h"

namespace kiln {

// Copies `data` (in layout `src`) into `out` (in layout `dst`, already shaped): each output
// element reads the source element source_axes() names. Weights of whole networks pass here
// at build time, so nothing is allocated per element.
void copy_between_layouts(const NDArray& data, const Layout& src, NDArray& out, const Layout& dst) {
  const std::vector<SourceAxis> axes = source_axes(src, dst);
  const auto div = [](int64_t a, int64_t b) { return a / b; };
  const auto mod = [](int64_t a, int64_t b) { return a % b; };
  const Shape& out_shape = out.shape();
  const std::vector<int64_t> src_strides = contiguous_strides(data.shape());
  const size_t bytes = dtype_bytes(data.dtype());
  const auto* in = static_cast<const char*>(data.raw());
  auto* dst_bytes = static_cast<char*>(out.raw());
  std::vector<int64_t> index(out_shape.size(), 0);
  const int64_t total = out.numel();
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t offset = 0;
    for (size_t d = 0; d < axes.size(); ++d) offset += axes[d].from(index, div, mod) * src_strides[d];
    std::memcpy(dst_bytes + flat * static_cast<int64_t>(bytes), in + offset * static_cast<int64_t>(bytes), bytes);
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
}

namespace {

void layout_transform_kernel(const LayoutTransformAttrs& attrs, std::span<const NDArray> inputs,
                             std::span<NDArray> outputs) {
  expect_arity("layout_transform", inputs, 1, outputs, 1);
  const Layout src = Layout::parse(attrs.src_layout), dst = Layout::parse(attrs.dst_layout);
  expect_output("layout_transform", outputs[0], src.convert_shape(inputs[0].shape(), dst), inputs[0].dtype());
  copy_between_layouts(inputs[0], src, outputs[0], dst);
}

}  // namespace

void register_transform_layout_kernels(KernelRegistry& registry) {
  registry.add<LayoutTransformAttrs>("layout_transform", layout_transform_kernel);
}

}  // namespace kiln
