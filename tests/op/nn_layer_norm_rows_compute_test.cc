// nn.layer_norm along the last axis of float32 rows runs the row kernels of
// kiln/runtime/microkernels.h (the row's sum and sum of squares in double, then its outputs):
// row lengths below, at and above the vector width, data far from zero (where a float sum of
// squares would cancel), without gamma or beta; other axes and dtypes on the default schedule.
#include <gtest/gtest.h>

#include "op/compute_test_util.h"

namespace kiln::testing {
namespace {

std::string layer_norm_fn(const std::string& shape, int64_t n, const std::string& attrs = "") {
  const std::string param = "Tensor[(" + std::to_string(n) + "), float32]";
  return "fn (%x: Tensor[(" + shape + "), float32], %g: " + param + ", %b: " + param +
         ", Primitive=1) { nn.layer_norm(%x, %g, %b" + (attrs.empty() ? "" : ", " + attrs) + ") }";
}

TEST(LayerNormRowsCompute, RowLengthsAroundTheVectorWidth) {
  const std::pair<const char*, int64_t> cases[] = {{"6, 1", 1}, {"4, 3, 8", 8}, {"5, 17", 17}, {"2, 197, 77", 77}};
  for (const auto& [shape, n] : cases) {
    SCOPED_TRACE(shape);
    std::string source = expect_compiled_matches_interpreter(layer_norm_fn(shape, n, "epsilon=1e-06f"));
    EXPECT_NE(source.find("kiln_row_sum_squares_f64_f32("), std::string::npos) << source;
    EXPECT_NE(source.find("kiln_layer_norm_row_f32("), std::string::npos) << source;
  }
}

TEST(LayerNormRowsCompute, DataFarFromZeroKeepsItsVariance) {
  // x of mean 11 and variance 1/3: a float sum of squares would be off by ~5e-3 here; the
  // reference's own float mean by ~1e-4.
  CompareOptions o;
  o.ranges = {{10, 12}};
  o.rtol = 1e-4;
  o.atol = 3e-4;
  std::string source = expect_compiled_matches_interpreter(layer_norm_fn("7, 768", 768, "epsilon=1e-12f"), o);
  EXPECT_NE(source.find("kiln_row_sum_squares_f64_f32("), std::string::npos) << source;
}

// FuseLayerNorm gives scale=False when the exported gamma was all ones.
TEST(LayerNormRowsCompute, WithoutGammaOrBeta) {
  const std::pair<const char*, const char*> cases[] = {{"scale=False", "kiln_layer_norm_row_shift_f32("},
                                                       {"center=False", "kiln_layer_norm_row_scale_f32("},
                                                       {"scale=False, center=False", "kiln_layer_norm_row_plain_f32("}};
  for (const auto& [attrs, kernel] : cases) {
    SCOPED_TRACE(attrs);
    std::string source = expect_compiled_matches_interpreter(layer_norm_fn("3, 20", 20, attrs));
    EXPECT_NE(source.find(kernel), std::string::npos) << source;
  }
}

TEST(LayerNormRowsCompute, OtherAxesAndDtypesTakeTheDefaultSchedule) {
  std::string source = expect_compiled_matches_interpreter(layer_norm_fn("3, 9, 5", 9, "axis=1"));
  EXPECT_EQ(source.find("kiln_layer_norm_row_f32("), std::string::npos);
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(2, 3, 6), float64], %g: Tensor[(6), float64], %b: Tensor[(6), float64], Primitive=1) "
      "{ nn.layer_norm(%x, %g, %b) }");
}

}  // namespace
}  // namespace kiln::testing
