// Op: image.grid_sample (Relay's name and argument order): samples NCHW data at the points
// of a grid of normalised (x, y) coordinates in [-1, 1], laid out (N, 2, H_out, W_out) as in
// Relay (ONNX's (N, H_out, W_out, 2) grid is transposed by the converter). Semantics follow
// ONNX GridSample (opset 16) and PyTorch: bilinear, nearest (ties to even) or bicubic
// (A = -0.75) sampling; zeros, border or reflection padding; align_corners.
#include "kiln/attrs/image.h"
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

// The attributes are checked by GridSampleAttrs::validate.
Type grid_sample_relation(const std::vector<Type>& args, const GridSampleAttrs&) {
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", 4, "NCHW");
  const TensorTypeNode& grid = arg_tensor_of_rank(args, 1, "grid", 4, "N, 2, H_out, W_out");
  check_float_arg(data, "data");
  check_float_arg(grid, "grid");
  check_same_extent(data.shape[0], grid.shape[0], "batch sizes (axis 0)", "data", data.shape, "grid", grid.shape);
  check_same_extent(grid.shape[1], 2, "coordinate count (axis 1, x then y)", "grid", grid.shape, "grid", {2});
  return tensor_type({data.shape[0], data.shape[1], grid.shape[2], grid.shape[3]}, data.dtype);
}

}  // namespace

void register_image_grid_sample_ops(OpRegistry& registry) {
  registry.add("image.grid_sample")
      .describe(
          "Samples NCHW data at normalised grid points (N, 2, H_out, W_out); x = -1 and 1 are the left "
          "and right edges (pixel centres with align_corners).")
      .arg("data")
      .arg("grid")
      .attrs<GridSampleAttrs>()
      .set_relation<GridSampleAttrs>(grid_sample_relation)
      .set_pattern(OpPattern::kInjective);
}

}  // namespace kiln
