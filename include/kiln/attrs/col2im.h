// Attribute declaration of nn.col2im; see kiln/attrs/reflect.h for the mechanism.
// src/op/nn/col2im.cc derives the schema from it, the reference kernel
// (src/runtime/kernels/nn/col2im.cc) and the ONNX Col2Im converter build and read the same
// struct. The window attributes are written as for the convolutions (kiln/attrs/window.h): one
// value for every spatial axis or one per axis, padding also as all begins then all ends.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/attrs/reflect.h"
#include "kiln/attrs/window.h"

namespace kiln {

struct Col2ImAttrs {
  std::vector<int64_t> image_shape;
  std::vector<int64_t> block_shape;
  std::vector<int64_t> strides{1};
  std::vector<int64_t> dilation{1};
  std::vector<int64_t> padding{0};

  template <class V>
  void visit(V& v) {
    v("image_shape", image_shape, "Spatial extents of the image the blocks are summed into.", kRequired);
    v("block_shape", block_shape, "Spatial extents of one block (one per image axis).", kRequired);
    v("strides", strides, "Step between blocks per spatial axis: [s] or one per axis.");
    v("dilation", dilation, "Spacing of a block's elements in the image: [d] or one per axis.");
    v("padding", padding, "Padding of the image: [p], one per axis, or all begins then all ends.");
  }
  void validate() const;
  size_t rank() const { return image_shape.size(); }
  WindowGeometry window() const { return window_geometry(strides, dilation, padding, rank()); }
  // Number of block positions along spatial axis `axis` of the padded image.
  int64_t blocks_along(size_t axis) const;
};

}  // namespace kiln
