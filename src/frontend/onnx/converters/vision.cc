// Converters: GridSample, RoiAlign, NonMaxSuppression.
#include "kiln/attrs/vision.h"

#include <limits>

#include "frontend/onnx/converters/converter_util.h"
#include "kiln/attrs/image.h"
#include "kiln/attrs/transform.h"
#include "kiln/attrs/unary.h"

namespace kiln::frontend {

namespace {

// GridSample: ONNX's (N, H_out, W_out, 2) grid becomes Relay's (N, 2, H_out, W_out).
// Opset 20 renamed the modes linear and cubic; both spellings are accepted.
ConvertResult convert_grid_sample(ConvertContext& c) {
  check(c.input_rank(0) == 4, "GridSample supports 4-D (N, C, H, W) inputs only, found ", shape_str(c.input_shape(0)));
  std::string mode = c.attrs().get_string("mode", "bilinear");
  if (mode == "linear") mode = "bilinear";
  if (mode == "cubic") mode = "bicubic";
  Expr grid = call_op("transpose", {c.input(1)}, TransposeAttrs{.axes = std::vector<int64_t>{0, 3, 1, 2}});
  GridSampleAttrs attrs;
  attrs.method = mode;
  attrs.padding_mode = c.attrs().get_string("padding_mode", "zeros");
  attrs.align_corners = c.attrs().get_int("align_corners", 0) != 0;
  return call_op("image.grid_sample", {c.input(0), grid}, attrs);
}

// RoiAlign: rois (R, 4) and batch_indices (R,) join into Relay's (R, 5) rows. Before opset
// 16 the only coordinate mode was output_half_pixel; from 16 the default is half_pixel.
ConvertResult convert_roi_align(ConvertContext& c) {
  std::string coordinates =
      c.attrs().get_string("coordinate_transformation_mode", c.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  check(coordinates == "half_pixel" || coordinates == "output_half_pixel",
        "attribute 'coordinate_transformation_mode' must be half_pixel or output_half_pixel, found '", coordinates,
        "'");
  Expr rois = c.input(1);
  Expr batch = call_op("expand_dims", {c.input(2)}, ExpandDimsAttrs{.axis = 1});
  batch = call_op("cast", {batch}, CastAttrs{.dtype = std::string(dtype_name(c.input_dtype(1)))});
  Expr boxes = call_op("concatenate", {make_tuple({batch, rois})}, ConcatenateAttrs{.axis = 1});
  RoiAlignAttrs attrs;
  attrs.pooled_size = {c.attrs().get_int("output_height", 1), c.attrs().get_int("output_width", 1)};
  attrs.spatial_scale = c.attrs().get_float("spatial_scale", 1.0);
  attrs.sample_ratio = c.attrs().get_int("sampling_ratio", 0);
  attrs.mode = c.attrs().get_string("mode", "avg");
  attrs.aligned = coordinates == "half_pixel";
  return call_op("vision.roi_align", {c.input(0), boxes}, attrs);
}

// NonMaxSuppression: absent optional inputs take ONNX's defaults (no boxes kept, IoU
// threshold 0, no score threshold).
ConvertResult convert_nms(ConvertContext& c) {
  DType score_dtype = c.input_dtype(1);
  Expr max_boxes = c.has_input(2) ? c.input(2) : scalar_constant(DType::kInt64, 0);
  Expr iou = c.has_input(3) ? c.input(3) : scalar_constant(score_dtype, 0.0);
  Expr score = c.has_input(4) ? c.input(4) : scalar_constant(score_dtype, -std::numeric_limits<double>::infinity());
  int64_t center_point_box = c.attrs().get_int("center_point_box", 0);
  check(center_point_box == 0 || center_point_box == 1, "attribute 'center_point_box' must be 0 or 1, found ",
        center_point_box);
  return call_op("vision.all_class_non_max_suppression", {c.input(0), c.input(1), max_boxes, iou, score},
                 AllClassNmsAttrs{.center_point_box = center_point_box == 1});
}

}  // namespace

void register_vision_converters(ConverterRegistry& r) {
  r.add("GridSample", 16, convert_grid_sample);
  r.add("RoiAlign", 10, convert_roi_align);
  r.add("NonMaxSuppression", 10, convert_nms);
}

}  // namespace kiln::frontend
