// image.resize2d's compute against its reference kernel: nearest (every rounding) and linear,
// every coordinate transformation the compute covers, up and down by integer and fractional
// ratios, NCHW and NHWC, float32 and float64, explicit scales; the calls it does not cover run
// on the reference kernel.
#include <string>

#include "kiln/ir/parser.h"
#include "kiln/op/strategy.h"
#include "op/compute_test_util.h"

namespace kiln::testing {
namespace {

std::string resize_fn(const std::string& in_shape, const std::string& dtype, const std::string& attrs) {
  return "fn (%p0: Tensor[(" + in_shape + "), " + dtype + "], Primitive=1) { image.resize2d(%p0, " + attrs + ") }";
}

const char* const kModes[] = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                              "align_corners", "asymmetric",           "tf_half_pixel_for_nn"};

TEST(ImageResizeCompute, LinearMatchesReferenceForEveryCoordinateMode) {
  for (const char* mode : kModes)
    for (const char* size : {"[9, 14]", "[3, 2]", "[1, 1]", "[5, 7]"}) {
      SCOPED_TRACE(std::string(mode) + " " + size);
      expect_compiled_matches_interpreter(resize_fn(
          "2, 3, 5, 7", "float32",
          std::string("size=") + size + ", method=\"linear\", coordinate_transformation_mode=\"" + mode + "\""));
    }
}

// The per-axis index and weight tables are computed once per call, not inlined into every output
// element (where the U-Net's upsamplings ran 20x slower), also when an element-wise op follows.
TEST(ImageResizeCompute, LinearKeepsItsAxisTables) {
  const std::string source = expect_compiled_matches_interpreter(
      "fn (%p0: Tensor[(1, 2, 5, 7, 16), float32], Primitive=1) { %0 = image.resize2d(%p0, size=[10, 14], "
      "layout=\"NCHW16c\", method=\"linear\"); nn.relu(%0) }");
  EXPECT_NE(source.find("_w_weight0[14]"), std::string::npos) << source;
  EXPECT_NE(source.find("_h_index0[10]"), std::string::npos) << source;
}

TEST(ImageResizeCompute, NearestMatchesReferenceForEveryRounding) {
  for (const char* mode : kModes)
    for (const char* rounding : {"", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"}) {
      SCOPED_TRACE(std::string(mode) + " " + rounding);
      expect_compiled_matches_interpreter(
          resize_fn("1, 2, 4, 6", "float32",
                    std::string("size=[12, 3], method=\"nearest_neighbor\", coordinate_transformation_mode=\"") + mode +
                        "\", rounding_method=\"" + rounding + "\""));
    }
}

TEST(ImageResizeCompute, NhwcFloat64AndExplicitScales) {
  expect_compiled_matches_interpreter(
      resize_fn("1, 6, 5, 3", "float32", "size=[12, 10], layout=\"NHWC\", method=\"linear\""));
  expect_compiled_matches_interpreter(resize_fn("1, 2, 5, 5", "float64", "size=[8, 3], method=\"linear\""));
  // scales that are not size / input: the coordinate follows the scales (ONNX Resize).
  expect_compiled_matches_interpreter(
      resize_fn("1, 2, 4, 4", "float32", "size=[10, 10], method=\"linear\", scales=[2.6, 2.6]"));
  // Blocked channels (AlterOpLayout's NCHW{x}c), odd sizes, up and down.
  expect_compiled_matches_interpreter(
      resize_fn("1, 2, 5, 7, 16", "float32", "size=[10, 14], layout=\"NCHW16c\", method=\"linear\""));
  expect_compiled_matches_interpreter(resize_fn("2, 1, 9, 6, 8", "float32",
                                                "size=[4, 13], layout=\"NCHW8c\", method=\"nearest_neighbor\", "
                                                "coordinate_transformation_mode=\"asymmetric\""));
}

std::string limit_of(const std::string& fn_text) {
  Expr parsed = parse_expr(fn_text);
  infer_expr_type(parsed);
  const auto* call = as<CallNode>(as_function(parsed)->body);
  const OpStrategy* strategy = find_strategy(OpRegistry::global().get("image.resize2d"));
  std::vector<Type> arg_types;
  for (const Expr& arg : call->args) arg_types.push_back(arg->checked_type());
  return strategy->limit(arg_types, call->checked_type(), call->attrs);
}

TEST(ImageResizeCompute, UncoveredCallsRunOnTheReferenceKernel) {
  EXPECT_EQ(limit_of(resize_fn("1, 2, 4, 4", "float32", "size=[8, 8], method=\"linear\"")), "");
  EXPECT_NE(limit_of(resize_fn("1, 2, 4, 4", "float32", "size=[8, 8], method=\"cubic\"")), "");
  EXPECT_NE(limit_of(resize_fn("1, 2, 8, 8", "float32", "size=[4, 4], method=\"linear\", antialias=True")), "");
  EXPECT_NE(limit_of(resize_fn("1, 2, 4, 4", "uint8", "size=[8, 8], method=\"nearest_neighbor\"")), "");
  EXPECT_NE(limit_of(resize_fn("1, 2, 4, 4", "float32",
                               "size=[8, 8], coordinate_transformation_mode=\"tf_crop_and_resize\"")),
            "");
}

}  // namespace
}  // namespace kiln::testing
