// Reference kernel: nn.col2im over any number of spatial axes. For every block element (in
// row-major order) and every block position, the column value is added to the image element
// it lands on; elements in the padding are dropped.
#include "kiln/attrs/col2im.h"

#include <vector>

#include "runtime/kernels/nn/compute_view.h"

namespace kiln {

namespace {

// Advances a row-major multi-index over `extents`; false after the last one.
bool next_index(std::vector<int64_t>& index, const std::vector<int64_t>& extents) {
  for (size_t a = index.size(); a-- > 0;) {
    if (++index[a] < extents[a]) return true;
    index[a] = 0;
  }
  return false;
}

struct Col2ImPlan {
  WindowGeometry window;
  std::vector<int64_t> image, block, blocks;
  int64_t image_size = 1, block_size = 1, columns = 1;
};

Col2ImPlan plan_of(const Col2ImAttrs& attrs) {
  Col2ImPlan p{attrs.window(), attrs.image_shape, attrs.block_shape, {}};
  for (size_t a = 0; a < attrs.rank(); ++a) {
    p.blocks.push_back(attrs.blocks_along(a));
    p.image_size *= p.image[a];
    p.block_size *= p.block[a];
    p.columns *= p.blocks[a];
  }
  return p;
}

// The flat image offset of block position `at` and block element `element`, or -1 in the padding.
int64_t image_offset(const Col2ImPlan& p, const std::vector<int64_t>& at, const std::vector<int64_t>& element) {
  int64_t offset = 0;
  for (size_t a = 0; a < p.image.size(); ++a) {
    const int64_t pos = at[a] * p.window.strides[a] - p.window.pad_before[a] + element[a] * p.window.dilation[a];
    if (pos < 0 || pos >= p.image[a]) return -1;
    offset = offset * p.image[a] + pos;
  }
  return offset;
}

// One (batch, channel) plane: `columns` is (block_size, L), `image` has image_size elements.
template <class C>
void col2im_plane(const C* columns, C* image, const Col2ImPlan& p) {
  std::vector<int64_t> element(p.block.size(), 0);
  int64_t row = 0;
  do {
    std::vector<int64_t> at(p.blocks.size(), 0);
    int64_t column = 0;
    do {
      const int64_t offset = image_offset(p, at, element);
      if (offset >= 0) image[offset] += columns[row * p.columns + column];
      ++column;
    } while (next_index(at, p.blocks));
    ++row;
  } while (next_index(element, p.block));
}

void col2im_kernel(const Col2ImAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const Col2ImPlan p = plan_of(attrs);
  const int64_t planes = outputs[0].shape()[0] * outputs[0].shape()[1];
  dispatch_compute(inputs[0].dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> x(inputs[0]);
    OutView<C> y(outputs[0]);
    std::fill(y.data(), y.data() + outputs[0].numel(), C(0));
    for (int64_t plane = 0; plane < planes; ++plane)
      col2im_plane(x.data() + plane * p.block_size * p.columns, y.data() + plane * p.image_size, p);
    y.commit();
  });
}

}  // namespace

void register_nn_col2im_kernels(KernelRegistry& registry) { registry.add<Col2ImAttrs>("nn.col2im", col2im_kernel); }

}  // namespace kiln
