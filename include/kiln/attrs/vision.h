// Attribute declarations of the vision ops; see kiln/attrs/reflect.h for the mechanism.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/attrs/reflect.h"
#include "kiln/attrs/window.h"

namespace kiln {

// vision.all_class_non_max_suppression.
struct AllClassNmsAttrs {
  bool center_point_box = false;

  template <class V>
  void visit(V& v) {
    v("center_point_box", center_point_box,
      "Boxes are [x_center, y_center, width, height] rather than two corners [y1, x1, y2, x2].");
  }
};

// vision.roi_align.
struct RoiAlignAttrs {
  std::vector<int64_t> pooled_size{1, 1};
  double spatial_scale = 1.0;
  int64_t sample_ratio = -1;
  std::string layout = "NCHW";
  std::string mode = "avg";
  bool aligned = false;

  template <class V>
  void visit(V& v) {
    v("pooled_size", pooled_size, "Bins per region: [p] or [p_h, p_w].", kRequired);
    v("spatial_scale", spatial_scale, "Scale from roi coordinates to data coordinates.");
    v("sample_ratio", sample_ratio, "Samples per bin side; <= 0: ceil(roi extent / pooled extent).");
    v("layout", layout, "Layout of the data (only NCHW).");
    v("mode", mode, "Pooling of the samples of a bin: avg or max.");
    v("aligned", aligned, "Shift the scaled box by -0.5 (half-pixel coordinates) and allow boxes under 1 x 1.");
  }
  void validate() const;
  Pair2D pooled() const { return pair_2d(pooled_size); }
};

}  // namespace kiln
