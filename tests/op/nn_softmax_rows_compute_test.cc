// softmax / log_softmax along the last axis of float32 rows run the row kernels of
// kiln/runtime/microkernels.h (vectorised max, sum of exp and outputs, a padded last vector):
// row lengths below, at and above the vector width; an inlined producer keeps the default
// schedule (rows of -inf and of NaN there).
#include <gtest/gtest.h>

#include "op/compute_test_util.h"

namespace kiln::testing {
namespace {

std::string softmax_fn(const std::string& op, const std::string& shape) {
  return "fn (%x: Tensor[(" + shape + "), float32], Primitive=1) { " + op + "(%x) }";
}

TEST(SoftmaxRowsCompute, RowLengthsAroundTheVectorWidth) {
  CompareOptions o;
  o.low = -30;
  o.high = 30;
  for (const char* shape : {"6, 1", "4, 3, 16", "5, 17", "2, 12, 197", "2, 64"}) {
    SCOPED_TRACE(shape);
    std::string source = expect_compiled_matches_interpreter(softmax_fn("nn.softmax", shape), o);
    EXPECT_NE(source.find("kiln_softmax_row_f32("), std::string::npos);
    EXPECT_NE(source.find("kiln_row_max_f32("), std::string::npos);
    source = expect_compiled_matches_interpreter(softmax_fn("nn.log_softmax", shape), o);
    EXPECT_NE(source.find("kiln_row_sum_exp_f32("), std::string::npos);
  }
}

TEST(SoftmaxRowsCompute, ProducerInlinedIntoTheRowsTakesTheDefaultSchedule) {
  // Rows of -inf give 0 / 0 = NaN per element as the reference does, rows of NaN stay NaN.
  for (const char* value : {"-inff", "nanf", "1f"}) {
    SCOPED_TRACE(value);
    std::string source = expect_compiled_matches_interpreter(
        "fn (%x: Tensor[(3, 20), float32], Primitive=1) { %0 = add(%x, " + std::string(value) + "); nn.softmax(%0) }");
    EXPECT_EQ(source.find("kiln_softmax_row_f32("), std::string::npos);
  }
}

}  // namespace
}  // namespace kiln::testing
