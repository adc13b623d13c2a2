// Op: vision.all_class_non_max_suppression (Relay's op for ONNX NonMaxSuppression), with
// ONNX's output: the selected boxes as rows (batch, class, box index), (?, 3) int64, whose
// length depends on the data. For every batch and class, boxes scoring above
// score_threshold are taken greedily by descending score (ties: lower index first); a box
// is dropped when its IoU with a box already taken exceeds iou_threshold; at most
// max_output_boxes_per_class are taken. boxes: (batch, num_boxes, 4) as [y1, x1, y2, x2]
// (any corner order), or [x_center, y_center, width, height] with center_point_box.
#include "kiln/attrs/vision.h"
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

// A scalar or a one-element tensor.
void check_scalar_arg(const TensorTypeNode& t, const std::string& arg_name) {
  if (t.ndim() > 1 || (t.ndim() == 1 && t.shape[0] != 1 && t.shape[0] != kAnyDim))
    throw std::move(Error(cat("argument '", arg_name, "' must be a scalar or a 1-element tensor"))
                        .expected("() or (1,)", shape_str(t.shape)));
}

Type nms_relation(const std::vector<Type>& args, const AllClassNmsAttrs&) {
  const TensorTypeNode& boxes = arg_tensor_of_rank(args, 0, "boxes", 3, "batch, num_boxes, 4");
  const TensorTypeNode& scores = arg_tensor_of_rank(args, 1, "scores", 3, "batch, num_classes, num_boxes");
  check_float_arg(boxes, "boxes");
  check_float_arg(scores, "scores");
  check_same_extent(boxes.shape[2], 4, "box coordinates (axis 2)", "boxes", boxes.shape, "boxes",
                    {kAnyDim, kAnyDim, 4});
  check_same_extent(boxes.shape[0], scores.shape[0], "batch sizes (axis 0)", "boxes", boxes.shape, "scores",
                    scores.shape);
  check_same_extent(boxes.shape[1], scores.shape[2], "box counts (boxes axis 1, scores axis 2)", "boxes", boxes.shape,
                    "scores", scores.shape);
  const TensorTypeNode& max_boxes = arg_tensor(args, 2, "max_output_boxes_per_class");
  if (!is_int(max_boxes.dtype))
    throw std::move(Error("argument 'max_output_boxes_per_class' must be an integer")
                        .expected("an integer dtype", std::string(dtype_name(max_boxes.dtype))));
  check_scalar_arg(max_boxes, "max_output_boxes_per_class");
  for (size_t i = 3; i < 5; ++i) {
    const char* name = i == 3 ? "iou_threshold" : "score_threshold";
    const TensorTypeNode& t = arg_tensor(args, i, name);
    check_float_arg(t, name);
    check_scalar_arg(t, name);
  }
  return tensor_type({kAnyDim, 3}, DType::kInt64);
}

}  // namespace

void register_vision_nms_ops(OpRegistry& registry) {
  registry.add("vision.all_class_non_max_suppression")
      .describe(
          "Greedy non-maximum suppression per batch and class; returns the (batch, class, box) rows kept, "
          "(?, 3) int64.")
      .arg("boxes")
      .arg("scores")
      .arg("max_output_boxes_per_class")
      .arg("iou_threshold")
      .arg("score_threshold")
      .attrs<AllClassNmsAttrs>()
      .set_relation<AllClassNmsAttrs>(nms_relation)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
