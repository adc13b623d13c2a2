// image.grid_sample: type relation and reference kernel against hand-computed samples of
// the 2 x 3 image [[1, 2, 3], [4, 5, 6]].
#include "op_test_util.h"

namespace kiln::testing {
namespace {

NDArray image() { return tensor({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}); }

// Relay's grid layout (N, 2, 1, points): the x row, then the y row.
NDArray grid(const std::vector<double>& xs, const std::vector<double>& ys) {
  std::vector<double> v = xs;
  v.insert(v.end(), ys.begin(), ys.end());
  return tensor({1, 2, 1, static_cast<int64_t>(xs.size())}, v);
}

NDArray sample(const NDArray& g, const Attrs& attrs) { return run_op("image.grid_sample", {image(), g}, attrs)[0]; }

TEST(ImageGridSampleType, ShapeAndErrors) {
  EXPECT_EQ(type_str(infer_op("image.grid_sample", {f32({2, 3, 8, 9}), f32({2, 2, 4, 5})})),
            "Tensor[(2, 3, 4, 5), float32]");
  std::string e = infer_op_error("image.grid_sample", {f32({2, 3, 8, 9}), f32({2, 4, 5, 2})});
  EXPECT_NE(e.find("'grid' (2, 4, 5, 2)"), std::string::npos) << e;
  e = infer_op_error("image.grid_sample", {f32({2, 3, 8, 9}), f32({1, 2, 4, 5})});
  EXPECT_NE(e.find("batch sizes"), std::string::npos) << e;
  e = infer_op_error("image.grid_sample", {f32({2, 3, 8, 9}), f32({2, 2, 4, 5})}, {{"method", "area"}});
  EXPECT_NE(e.find("'method'"), std::string::npos) << e;
  e = infer_op_error("image.grid_sample", {tensor_type({2, 3, 8, 9}, DType::kInt32), f32({2, 2, 4, 5})});
  EXPECT_NE(e.find("'data' must be floating point"), std::string::npos) << e;
}

TEST(ImageGridSampleKernel, BilinearAlignCorners) {
  // Corners are pixel centres: x = 0 is column 1, y = 0 is between the rows.
  NDArray y = sample(grid({-1, 1, 0, 0.5}, {-1, 1, 0, -1}), {{"align_corners", true}});
  expect_close(y, {1, 6, 3.5, 2.5});
}

TEST(ImageGridSampleKernel, PaddingModesAtTheCorner) {
  // Without align_corners, (-1, -1) is the outer corner (-0.5, -0.5) of pixel (0, 0).
  NDArray g = grid({-1, 1.5}, {-1, 0});
  expect_close(sample(g, {{"padding_mode", "zeros"}}), {0.25, 0});
  // border: the point moves onto the centre of the nearest pixel; x = 1.5 is column 3.25 -> 2.
  expect_close(sample(g, {{"padding_mode", "border"}}), {1, 4.5});
  // reflection: (-0.5, -0.5) lies on the reflected border, all four taps read pixel (0, 0);
  // x = 3.25 reflects at 2.5 to 1.75: 0.25 * col 1 + 0.75 * col 2 on the mean of the rows.
  expect_close(sample(g, {{"padding_mode", "reflection"}}), {1, 3.5 * 0.25 + 4.5 * 0.75});
}

TEST(ImageGridSampleKernel, NearestAndBicubic) {
  // x = 0.1 -> column 1.15 -> 1; y = 0.2 -> row 0.7 -> 1. Ties round to even: column 0.5 -> 0.
  expect_close(sample(grid({0.1, -2.0 / 3}, {0.2, -0.5}), {{"method", "nearest"}}), {5, 1});
  // Bicubic at a pixel centre reproduces the pixel. Halfway down column 2 the taps are rows
  // -1, 0, 1, 2 with weights (-3/32, 19/32, 19/32, -3/32): zeros padding reads 0 outside,
  // border padding repeats the rows and the result is the linear 4.5.
  NDArray g = grid({0, 1}, {-1, 0});
  expect_close(sample(g, {{"method", "bicubic"}, {"align_corners", true}}), {2, 19.0 / 32 * 9}, 1e-9);
  expect_close(sample(g, {{"method", "bicubic"}, {"align_corners", true}, {"padding_mode", "border"}}), {2, 4.5}, 1e-9);
}

}  // namespace
}  // namespace kiln::testing
