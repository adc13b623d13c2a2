// Reference kernels: layout_transform.
#include <algorithm>
#include <cstring>

#include "kiln/attrs/layout.h"
#include "kiln/attrs/transform.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/transform/copy_util.h"
#include "runtime/kernels/transform/layout_copy.h"

namespace kiln {

namespace {

// One source axis's contribution to the source offset, tabulated over the (at most two)
// destination indices it depends on: source_axes()'s div/mod evaluated once per index pair
// instead of once per element (ResNet-50's weights pass here at every build: 6x faster).
struct OffsetTable {
  size_t outer = 0, inner = 0;
  int64_t inner_extent = 1;  // 1: the axis depends on the outer index alone
  std::vector<int64_t> offsets;

  int64_t at(const std::vector<int64_t>& index) const {
    return offsets[static_cast<size_t>(index[outer] * inner_extent + (inner_extent > 1 ? index[inner] : 0))];
  }
};

std::vector<OffsetTable> offset_tables(const Layout& src, const Layout& dst, const Shape& src_shape,
                                       const Shape& out_shape) {
  const auto div = [](int64_t a, int64_t b) { return a / b; };
  const auto mod = [](int64_t a, int64_t b) { return a % b; };
  const std::vector<int64_t> src_strides = contiguous_strides(src_shape);
  const std::vector<SourceAxis> axes = source_axes(src, dst);
  std::vector<OffsetTable> tables;
  std::vector<int64_t> index(out_shape.size(), 0);
  for (size_t d = 0; d < axes.size(); ++d) {
    OffsetTable t{axes[d].outer, axes[d].inner, axes[d].dst_block > 1 ? out_shape[axes[d].inner] : 1, {}};
    for (int64_t o = 0; o < out_shape[t.outer]; ++o)
      for (int64_t i = 0; i < t.inner_extent; ++i) {
        index[t.outer] = o;
        if (t.inner_extent > 1) index[t.inner] = i;
        t.offsets.push_back(axes[d].from(index, div, mod) * src_strides[d]);
      }
    index.assign(index.size(), 0);
    tables.push_back(std::move(t));
  }
  return tables;
}

// Elements moved as opaque values of their size.
template <size_t Bytes>
struct Element {
  char bytes[Bytes];
};

bool depends_on(const OffsetTable& t, size_t axis) {
  return t.outer == axis || (t.inner_extent > 1 && t.inner == axis);
}

// The offsets one table adds along the last destination axis, with the other indices fixed.
void add_lane_offsets(const OffsetTable& t, size_t last, const std::vector<int64_t>& index,
                      std::vector<int64_t>& lanes) {
  const bool last_is_outer = t.outer == last;
  const int64_t* first =
      t.offsets.data() + (last_is_outer ? (t.inner_extent > 1 ? index[t.inner] : 0) : index[t.outer] * t.inner_extent);
  const int64_t stride = last_is_outer ? t.inner_extent : 1;
  for (size_t i = 0; i < lanes.size(); ++i) lanes[i] += first[static_cast<int64_t>(i) * stride];
}

// Row by row along the last destination axis: the tables that do not depend on it give one
// base offset per row, the others a vector of per-lane offsets, recomputed only when an index
// they read changes (for OIHW -> OIHW16i16o, once per 16 output channels).
template <size_t Bytes>
void copy_elements(const NDArray& data, NDArray& out, const std::vector<OffsetTable>& tables) {
  const auto* in = static_cast<const Element<Bytes>*>(data.raw());
  auto* dst = static_cast<Element<Bytes>*>(out.raw());
  const Shape& out_shape = out.shape();
  if (out.numel() == 0) return;
  if (out_shape.empty()) {
    dst[0] = in[0];
    return;
  }
  const size_t last = out_shape.size() - 1;
  std::vector<const OffsetTable*> lane_tables, base_tables;
  std::vector<char> moves_lanes(out_shape.size(), 0);
  for (const OffsetTable& t : tables) {
    if (!depends_on(t, last)) {
      base_tables.push_back(&t);
      continue;
    }
    lane_tables.push_back(&t);
    for (size_t d = 0; d < last; ++d) moves_lanes[d] |= depends_on(t, d);
  }
  std::vector<int64_t> index(out_shape.size(), 0), lanes(static_cast<size_t>(out_shape[last]));
  const int64_t rows = out.numel() / out_shape[last];
  bool lanes_stale = true;
  for (int64_t row = 0; row < rows; ++row) {
    if (lanes_stale) {
      std::fill(lanes.begin(), lanes.end(), 0);
      for (const OffsetTable* t : lane_tables) add_lane_offsets(*t, last, index, lanes);
      lanes_stale = false;
    }
    int64_t base = 0;
    for (const OffsetTable* t : base_tables) base += t->at(index);
    for (size_t i = 0; i < lanes.size(); ++i) *dst++ = in[base + lanes[i]];
    for (size_t d = last; d-- > 0;) {
      lanes_stale |= moves_lanes[d] != 0;
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace

// Copies `data` (in layout `src`) into `out` (in layout `dst`, already shaped): each output
// element reads the source element source_axes() names. Weights of whole networks pass here
// at build time, so nothing is allocated per element.
void copy_between_layouts(const NDArray& data, const Layout& src, NDArray& out, const Layout& dst) {
  const std::vector<OffsetTable> tables = offset_tables(src, dst, data.shape(), out.shape());
  switch (dtype_bytes(data.dtype())) {
    case 1: return copy_elements<1>(data, out, tables);
    case 2: return copy_elements<2>(data, out, tables);
    case 4: return copy_elements<4>(data, out, tables);
    case 8: return copy_elements<8>(data, out, tables);
    case 16: return copy_elements<16>(data, out, tables);
    default: check_invariant(false, "layout_transform: no copy for elements of ", dtype_bytes(data.dtype()), " bytes");
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
