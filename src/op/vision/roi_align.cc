// Op: vision.roi_align (Relay's name, arguments and attributes): average or max of bilinear
// samples over a pooled_size grid of bins in each region of interest of NCHW data. rois is
// (num_rois, 5): batch index, then x1, y1, x2, y2 in input coordinates before spatial_scale.
// sample_ratio <= 0 means ceil(roi extent / pooled extent) samples per bin side. 'aligned'
// (an extension, ONNX's coordinate_transformation_mode=half_pixel) shifts the scaled box by
// -0.5 and lets it be smaller than one pixel; otherwise boxes are at least 1 x 1.
#include "kiln/attrs/vision.h"
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

// layout, mode and pooled_size are checked by RoiAlignAttrs::validate.
Type roi_align_relation(const std::vector<Type>& args, const RoiAlignAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", 4, "NCHW");
  const TensorTypeNode& rois = arg_tensor_of_rank(args, 1, "rois", 2, "num_rois, 5");
  check_float_arg(data, "data");
  check_float_arg(rois, "rois");
  check_same_extent(rois.shape[1], 5, "box fields (axis 1: batch index, x1, y1, x2, y2)", "rois", rois.shape, "rois",
                    {kAnyDim, 5});
  const Pair2D pooled = attrs.pooled();
  return tensor_type({rois.shape[0], data.shape[1], pooled.h, pooled.w}, data.dtype);
}

}  // namespace

void register_vision_roi_align_ops(OpRegistry& registry) {
  registry.add("vision.roi_align")
      .describe("RoIAlign over NCHW data; rois rows are (batch index, x1, y1, x2, y2).")
      .arg("data")
      .arg("rois")
      .attrs<RoiAlignAttrs>()
      .set_relation<RoiAlignAttrs>(roi_align_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);
}

}  // namespace kiln
