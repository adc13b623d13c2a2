// vision.roi_align: type relation and hand-computed regions of the linear 4 x 4 image
// v(y, x) = 4 y + x, where bilinear samples are exact.
#include "op_test_util.h"

namespace kiln::testing {
namespace {

using Ints = std::vector<int64_t>;

NDArray ramp() {
  std::vector<double> v;
  for (int i = 0; i < 16; ++i) v.push_back(i);
  return tensor({1, 1, 4, 4}, v);
}

TEST(VisionRoiAlignType, ShapeAndErrors) {
  EXPECT_EQ(type_str(infer_op("vision.roi_align", {f32({2, 3, 8, 9}), f32({5, 5})}, {{"pooled_size", Ints{2, 3}}})),
            "Tensor[(5, 3, 2, 3), float32]");
  std::string e = infer_op_error("vision.roi_align", {f32({2, 3, 8, 9}), f32({5, 4})}, {{"pooled_size", Ints{2}}});
  EXPECT_NE(e.find("'rois' (5, 4)"), std::string::npos) << e;
  e = infer_op_error("vision.roi_align", {f32({2, 3, 8, 9}), f32({5, 5})}, {{"pooled_size", Ints{2}}, {"mode", "min"}});
  EXPECT_NE(e.find("'mode'"), std::string::npos) << e;
}

TEST(VisionRoiAlignKernel, AverageAlignedAndNot) {
  NDArray rois = tensor({1, 5}, {0, 0, 0, 2, 2});
  Attrs attrs{{"pooled_size", Ints{1}}, {"sample_ratio", int64_t{2}}};
  // Samples at 0.5 and 1.5 on both axes: mean (1, 1) -> 5.
  expect_close(run_op("vision.roi_align", {ramp(), rois}, attrs)[0], {5});
  attrs.set("aligned", true);  // shifted by -0.5: samples at 0 and 1 -> (0.5, 0.5)
  expect_close(run_op("vision.roi_align", {ramp(), rois}, attrs)[0], {2.5});
  // 2 x 2 bins of 1 x 1, bin centres at 0.5 and 1.5.
  Attrs bins{{"pooled_size", Ints{2}}, {"sample_ratio", int64_t{2}}};
  expect_close(run_op("vision.roi_align", {ramp(), rois}, bins)[0], {2.5, 3.5, 6.5, 7.5});
  // Half the scale halves the box: samples at 0.25 and 0.75.
  bins.set("spatial_scale", 0.5);
  bins.set("pooled_size", Ints{1});
  expect_close(run_op("vision.roi_align", {ramp(), rois}, bins)[0], {2.5});
}

TEST(VisionRoiAlignKernel, MaxTakesTheLargestWeightedCorner) {
  NDArray rois = tensor({1, 5}, {0, 0, 0, 2, 2});
  // The sample (1.5, 1.5) has corners 5, 6, 9, 10 with weight 0.25 each.
  expect_close(run_op("vision.roi_align", {ramp(), rois},
                      {{"pooled_size", Ints{1}}, {"sample_ratio", int64_t{2}}, {"mode", "max"}})[0],
               {2.5});
}

TEST(VisionRoiAlignKernel, BadBatchIndexIsAnError) {
  try {
    run_op("vision.roi_align", {ramp(), tensor({1, 5}, {1, 0, 0, 2, 2})}, {{"pooled_size", Ints{1}}});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("batch index of region 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::testing
