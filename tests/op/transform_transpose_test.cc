// transpose: type relation, errors, and the reference kernel against numpy for every dtype width.
#include <algorithm>

#include "op/transform_test_util.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

Attrs axes_attr(std::vector<int64_t> axes) { return {{"axes", axes}}; }

TEST(TransformTranspose, TypeRelation) {
  EXPECT_EQ(type_str(infer_op("transpose", {f32({2, 3, 4})})), "Tensor[(4, 3, 2), float32]");
  EXPECT_EQ(type_str(infer_op("transpose", {f32({2, 3, 4})}, axes_attr({0, 2, 1}))), "Tensor[(2, 4, 3), float32]");
  EXPECT_EQ(type_str(infer_op("transpose", {f32({2, 3, 4})}, axes_attr({-1, 0, 1}))), "Tensor[(4, 2, 3), float32]");
  EXPECT_EQ(type_str(infer_op("transpose", {f32({-1, 3})})), "Tensor[(3, ?), float32]");
  EXPECT_EQ(type_str(infer_op("transpose", {f32({})})), "float32");
  EXPECT_EQ(type_str(infer_op("transpose", {tensor_type({2, 5}, DType::kInt64)})), "Tensor[(5, 2), int64]");
}

TEST(TransformTranspose, Errors) {
  std::string e = infer_op_error("transpose", {f32({2, 3, 4})}, axes_attr({0, 1}));
  expect_mentions(e, {"op 'transpose'", "argument 'data'", "(2, 3, 4)", "expected 3 axes", "[0, 1]"});
  e = infer_op_error("transpose", {f32({2, 3, 4})}, axes_attr({0, -3, 1}));
  expect_mentions(e, {"op 'transpose'", "not a permutation", "dim 0 appears twice", "(2, 3, 4)", "[0, -3, 1]"});
  e = infer_op_error("transpose", {f32({2, 3, 4})}, axes_attr({0, 1, 3}));
  expect_mentions(e, {"op 'transpose'", "axis out of range", "found 3"});
  e = infer_op_error("transpose", {f32({2, 3})}, {{"axes", "NCHW"}});
  expect_mentions(e, {"op 'transpose'", "'axes'", "list of ints"});
}

TEST(TransformTranspose, KernelHandWorked) {
  auto out = run_op("transpose", {tensor({2, 3}, {0, 1, 2, 3, 4, 5})});
  EXPECT_EQ(out[0].shape(), (Shape{3, 2}));
  expect_close(out[0], {0, 3, 1, 4, 2, 5});
}

TEST(TransformTranspose, KernelEveryPermutationOfRank3) {
  // numpy lists the permutations in the same (lexicographic) order as std::next_permutation.
  auto expected = numpy_eval("import itertools\nx = " + numpy_iota({2, 3, 4}) +
                             "\nr = [np.transpose(x, p) for p in itertools.permutations(range(3))]");
  ASSERT_EQ(expected.size(), 6u);
  std::vector<int64_t> perm = {0, 1, 2};
  size_t i = 0;
  do {
    auto out = run_op("transpose", {iota({2, 3, 4})}, axes_attr(perm));
    expect_same(out[0], expected[i++]);
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST(TransformTranspose, KernelEveryDTypeWidth) {
  auto expected = numpy_eval("r = [np.transpose(" + numpy_iota({2, 3, 4, 5}, 120) + ", (3, 1, 0, 2)), np.transpose(" +
                             numpy_iota({2, 3, 4, 5}, 2) + ", (3, 1, 0, 2))]");
  // 1, 2, 4 and 8 byte elements, and a bool.
  for (DType dtype : {DType::kInt8, DType::kFloat16, DType::kBFloat16, DType::kInt32, DType::kFloat64, DType::kUInt64,
                      DType::kBool}) {
    bool is_bool = dtype == DType::kBool;
    auto out = run_op("transpose", {iota({2, 3, 4, 5}, dtype, is_bool ? 2 : 120)}, axes_attr({3, 1, 0, 2}));
    EXPECT_EQ(out[0].dtype(), dtype);
    expect_same(out[0], expected[is_bool ? 1 : 0]);
  }
}

TEST(TransformTranspose, KernelEdgeShapes) {
  auto reversed = run_op("transpose", {iota({3, 1, 2, 2})});
  EXPECT_EQ(reversed[0].shape(), (Shape{2, 2, 1, 3}));
  // x[a, 0, c, d] = 4a + 2c + d lands at out[d, c, 0, a] = 6d + 3c + a.
  expect_close(reversed[0], {0, 4, 8, 2, 6, 10, 1, 5, 9, 3, 7, 11});
  auto empty = run_op("transpose", {iota({2, 0, 3})}, axes_attr({2, 1, 0}));
  EXPECT_EQ(empty[0].shape(), (Shape{3, 0, 2}));
  auto scalar = run_op("transpose", {tensor({}, {7})});
  expect_close(scalar[0], {7});
  auto vector = run_op("transpose", {iota({5})}, axes_attr({0}));
  expect_close(vector[0], {0, 1, 2, 3, 4});
}

TEST(TransformTranspose, FusionPatternIsInjective) {
  EXPECT_EQ(OpRegistry::global().get("transpose").pattern, OpPattern::kInjective);
}

}  // namespace
}  // namespace kiln::testing
