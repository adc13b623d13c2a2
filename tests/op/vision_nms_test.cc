// vision.all_class_non_max_suppression: type relation and selections worked out by hand.
#include "op_test_util.h"

namespace kiln::testing {
namespace {

// Runs the kernel, which sizes its own (?, 3) output.
NDArray nms(const NDArray& boxes, const NDArray& scores, int64_t max_boxes, double iou, double score,
            bool center = false) {
  std::vector<NDArray> inputs{boxes, scores, NDArray::scalar(DType::kInt64, double(max_boxes)),
                              NDArray::scalar(DType::kFloat32, iou), NDArray::scalar(DType::kFloat32, score)};
  std::vector<NDArray> outputs(1);
  const OpDef& def = OpRegistry::global().get("vision.all_class_non_max_suppression");
  KernelRegistry::global().get(def.kernel)(def.normalize({{"center_point_box", center}}), inputs, outputs);
  return outputs[0];
}

// Boxes 0 and 1 overlap with IoU 0.9 / 1.1; box 2 is apart; box 3 has flipped corners.
NDArray corner_boxes() {
  return tensor({1, 4, 4}, {0, 0, 1, 1, /**/ 0, 0.1, 1, 1.1, /**/ 0, 2, 1, 3, /**/ 3, 3, 2, 2});
}
NDArray two_class_scores() { return tensor({1, 2, 4}, {0.9, 0.95, 0.5, 0.3, /**/ 0.1, 0.2, 0.8, 0.05}); }

TEST(VisionNmsType, ShapeAndErrors) {
  Type scalar_i = tensor_type({1}, DType::kInt64), scalar_f = f32({});
  EXPECT_EQ(type_str(infer_op("vision.all_class_non_max_suppression",
                              {f32({2, 10, 4}), f32({2, 3, 10}), scalar_i, scalar_f, scalar_f})),
            "Tensor[(?, 3), int64]");
  std::string e = infer_op_error("vision.all_class_non_max_suppression",
                                 {f32({2, 10, 4}), f32({2, 3, 9}), scalar_i, scalar_f, scalar_f});
  EXPECT_NE(e.find("'boxes' (2, 10, 4)"), std::string::npos) << e;
  EXPECT_NE(e.find("'scores' (2, 3, 9)"), std::string::npos) << e;
  e = infer_op_error("vision.all_class_non_max_suppression",
                     {f32({2, 10, 4}), f32({2, 3, 10}), f32({1}), scalar_f, scalar_f});
  EXPECT_NE(e.find("'max_output_boxes_per_class' must be an integer"), std::string::npos) << e;
}

TEST(VisionNmsKernel, SuppressesByIouAndScore) {
  NDArray out = nms(corner_boxes(), two_class_scores(), 3, 0.5, 0.25);
  EXPECT_EQ(out.shape(), (Shape{4, 3}));
  EXPECT_EQ(out.dtype(), DType::kInt64);
  // Class 0: box 1 first (0.95); box 0 overlaps it; 2 and 3 stay. Class 1: only box 2 scores > 0.25.
  EXPECT_EQ(out.to_ints(), (std::vector<int64_t>{0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 1, 2}));
  // At most 2 per class; with a high IoU threshold box 0 is kept too.
  EXPECT_EQ(nms(corner_boxes(), two_class_scores(), 2, 0.5, 0.25).to_ints(),
            (std::vector<int64_t>{0, 0, 1, 0, 0, 2, 0, 1, 2}));
  EXPECT_EQ(nms(corner_boxes(), two_class_scores(), 2, 0.9, 0.25).to_ints(),
            (std::vector<int64_t>{0, 0, 1, 0, 0, 0, 0, 1, 2}));
  EXPECT_EQ(nms(corner_boxes(), two_class_scores(), 0, 0.5, 0.25).shape(), (Shape{0, 3}));
}

TEST(VisionNmsKernel, CenterPointBoxes) {
  // The corner boxes above as (x_center, y_center, width, height).
  NDArray centers = tensor({1, 4, 4}, {0.5, 0.5, 1, 1, /**/ 0.6, 0.5, 1, 1, /**/ 2.5, 0.5, 1, 1, /**/ 2.5, 2.5, 1, 1});
  EXPECT_EQ(nms(centers, two_class_scores(), 3, 0.5, 0.25, true).to_ints(),
            (std::vector<int64_t>{0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 1, 2}));
}

}  // namespace
}  // namespace kiln::testing
