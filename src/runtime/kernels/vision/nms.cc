// Reference kernel: vision.all_class_non_max_suppression (ONNX NonMaxSuppression). Allocates
// its (num_selected, 3) int64 output, whose length depends on the data.
#include <algorithm>
#include <numeric>

#include "kiln/attrs/vision.h"
#include "kiln/support/strings.h"
#include "runtime/kernels/nn/compute_view.h"

namespace kiln {

namespace {

struct Box {
  double y1, x1, y2, x2;  // y1 <= y2, x1 <= x2
  double area() const { return (y2 - y1) * (x2 - x1); }
};

Box box_at(const double* b, bool center_point_box) {
  if (center_point_box) {
    const double xc = b[0], yc = b[1], w = b[2], h = b[3];
    return {yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

// True when the boxes overlap with an IoU above the threshold.
bool suppresses(const Box& a, const Box& b, double iou_threshold) {
  const double h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1), w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (h <= 0 || w <= 0) return false;
  const double intersection = h * w, area_a = a.area(), area_b = b.area();
  const double union_area = area_a + area_b - intersection;
  if (area_a <= 0 || area_b <= 0 || union_area <= 0) return false;
  return intersection / union_area > iou_threshold;
}

// The selected box indices of one (batch, class), in selection order.
std::vector<int64_t> select_boxes(const std::vector<Box>& boxes, const double* scores, int64_t max_boxes,
                                  double iou_threshold, double score_threshold) {
  std::vector<int64_t> order;
  for (int64_t i = 0; i < static_cast<int64_t>(boxes.size()); ++i)
    if (scores[i] > score_threshold) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  std::vector<int64_t> selected;
  for (int64_t i : order) {
    if (static_cast<int64_t>(selected.size()) >= max_boxes) break;
    bool keep = std::none_of(selected.begin(), selected.end(),
                             [&](int64_t s) { return suppresses(boxes[s], boxes[i], iou_threshold); });
    if (keep) selected.push_back(i);
  }
  return selected;
}

void nms_kernel(const AllClassNmsAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray& boxes_in = inputs[0];
  const NDArray& scores_in = inputs[1];
  check(inputs[2].numel() == 1 && inputs[3].numel() == 1 && inputs[4].numel() == 1,
        "max_output_boxes_per_class, iou_threshold and score_threshold must hold one value each");
  const int64_t max_boxes = inputs[2].int_at(0);
  const double iou_threshold = inputs[3].at(0), score_threshold = inputs[4].at(0);
  const bool center_point_box = attrs.center_point_box;
  const int64_t batch = boxes_in.shape()[0], num_boxes = boxes_in.shape()[1], classes = scores_in.shape()[1];
  ConstView<double> b(boxes_in), s(scores_in);
  std::vector<int64_t> rows;
  for (int64_t n = 0; n < batch; ++n) {
    std::vector<Box> boxes;
    for (int64_t i = 0; i < num_boxes; ++i)
      boxes.push_back(box_at(b.data() + (n * num_boxes + i) * 4, center_point_box));
    for (int64_t c = 0; c < classes; ++c) {
      const double* scores = s.data() + (n * classes + c) * num_boxes;
      for (int64_t i : select_boxes(boxes, scores, max_boxes, iou_threshold, score_threshold))
        rows.insert(rows.end(), {n, c, i});
    }
  }
  NDArray out = NDArray::empty({static_cast<int64_t>(rows.size() / 3), 3}, DType::kInt64);
  std::copy(rows.begin(), rows.end(), out.data<int64_t>());
  outputs[0] = out;
}

}  // namespace

void register_vision_nms_kernels(KernelRegistry& registry) {
  registry.add<AllClassNmsAttrs>("vision.all_class_non_max_suppression", nms_kernel);
}

}  // namespace kiln
