#include "kiln/attrs/col2im.h"

#include "kiln/support/strings.h"

namespace kiln {

void Col2ImAttrs::validate() const {
  if (image_shape.empty())
    throw std::move(Error("attribute 'image_shape' must name at least one spatial axis").expected("[h, w, ...]", "[]"));
  if (block_shape.size() != image_shape.size())
    throw std::move(Error("attribute 'block_shape' must have one value per image axis")
                        .expected(cat(image_shape.size(), " values"), cat(block_shape.size(), " values")));
  for (int64_t v : image_shape) check_at_least("image_shape", v, 1);
  for (int64_t v : block_shape) check_at_least("block_shape", v, 1);
  check_spatial("strides", strides, rank(), 1);
  check_spatial("dilation", dilation, rank(), 1);
  check_padding("padding", padding, rank());
  for (size_t axis = 0; axis < rank(); ++axis)
    if (blocks_along(axis) < 1)
      throw std::move(Error(cat("the dilated block does not fit the padded image along spatial axis ", axis))
                          .expected(cat("(block - 1) * dilation + 1 <= image + padding = ",
                                        image_shape[axis] + window().pad_before[axis] + window().pad_after[axis]),
                                    cat((block_shape[axis] - 1) * window().dilation[axis] + 1)));
}

int64_t Col2ImAttrs::blocks_along(size_t axis) const {
  const WindowGeometry w = window();
  const int64_t padded = image_shape[axis] + w.pad_before[axis] + w.pad_after[axis];
  const int64_t extent = (block_shape[axis] - 1) * w.dilation[axis] + 1;
  if (padded < extent) return 0;
  return (padded - extent) / w.strides[axis] + 1;
}

}  // namespace kiln
