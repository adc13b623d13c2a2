// Copies a tensor between layouts (kiln/attrs/layout.h): layout_transform's kernel, and the
// blocked nn.conv2d's reference kernel, which converts to NCHW / OIHW around the plain one.
#pragma once

#include "kiln/attrs/layout.h"
#include "kiln/runtime/ndarray.h"

namespace kiln {

// `out` must already have the shape src.convert_shape(data.shape(), dst) and data's dtype.
void copy_between_layouts(const NDArray& data, const Layout& src, NDArray& out, const Layout& dst);

}  // namespace kiln
