// reshape, squeeze, expand_dims: type relations (with unknown dims), their error messages,
// and the reference kernels against numpy.
#include "op/transform_test_util.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

Type reshape_type(Shape in, std::vector<int64_t> newshape, int64_t allowzero = 0) {
  return infer_op("reshape", {f32(std::move(in))}, {{"newshape", newshape}, {"allowzero", allowzero}});
}

std::string reshape_error(Shape in, std::vector<int64_t> newshape, int64_t allowzero = 0) {
  return infer_op_error("reshape", {f32(std::move(in))}, {{"newshape", newshape}, {"allowzero", allowzero}});
}

TEST(TransformReshape, PositiveExtentsAndMinusOne) {
  EXPECT_EQ(type_str(reshape_type({2, 3, 4}, {6, 4})), "Tensor[(6, 4), float32]");
  EXPECT_EQ(type_str(reshape_type({2, 3, 4}, {-1, 4})), "Tensor[(6, 4), float32]");
  EXPECT_EQ(type_str(reshape_type({2, 3, 4}, {-1})), "Tensor[(24), float32]");
  EXPECT_EQ(type_str(reshape_type({2, 3, 4}, {2, -1, 3})), "Tensor[(2, 4, 3), float32]");
  EXPECT_EQ(type_str(reshape_type({24}, {1, 2, 1, -1})), "Tensor[(1, 2, 1, 12), float32]");
}

TEST(TransformReshape, ZeroCopiesInputDim) {
  EXPECT_EQ(type_str(reshape_type({2, 3, 4}, {0, -1})), "Tensor[(2, 12), float32]");
  // The 0 at index 1 copies input dim 1 (3); the -1 takes what is left: 2*4 / 4.
  EXPECT_EQ(type_str(reshape_type({2, 3, 4}, {4, 0, -1})), "Tensor[(4, 3, 2), float32]");
  EXPECT_EQ(type_str(reshape_type({2, 3, 4}, {0, 0, 0})), "Tensor[(2, 3, 4), float32]");
}

TEST(TransformReshape, UnknownBatchWithZeroAndMinusOne) {
  EXPECT_EQ(type_str(reshape_type({-1, 3, 4}, {0, -1})), "Tensor[(?, 12), float32]");
  EXPECT_EQ(type_str(reshape_type({-1, 3, 4}, {0, -1, 2})), "Tensor[(?, 6, 2), float32]");
  EXPECT_EQ(type_str(reshape_type({-1, 3, 4}, {0, 12})), "Tensor[(?, 12), float32]");
  // The unknown dim is not taken over, so the -1 cannot be known.
  EXPECT_EQ(type_str(reshape_type({-1, 3, 4}, {-1, 4})), "Tensor[(?, 4), float32]");
  EXPECT_EQ(type_str(reshape_type({2, -1}, {0, 0, 1})), "Tensor[(2, ?, 1), float32]");
}

TEST(TransformReshape, RelaySpecialValues) {
  EXPECT_EQ(type_str(reshape_type({2, 3, 4}, {-2})), "Tensor[(2, 3, 4), float32]");
  EXPECT_EQ(type_str(reshape_type({2, 3, 4}, {-3, 4})), "Tensor[(6, 4), float32]");
  EXPECT_EQ(type_str(reshape_type({2, 3, 4}, {0, -3})), "Tensor[(2, 12), float32]");
  EXPECT_EQ(type_str(reshape_type({2, 3, 4}, {-4, 1, 2, -2})), "Tensor[(1, 2, 3, 4), float32]");
  EXPECT_EQ(type_str(reshape_type({6, 4}, {-4, -1, 2, -2})), "Tensor[(3, 2, 4), float32]");
  EXPECT_EQ(type_str(reshape_type({6, 4}, {-4, 3, -1, 0})), "Tensor[(3, 2, 4), float32]");
  EXPECT_EQ(type_str(reshape_type({-1, 4}, {-4, -1, 2, -2})), "Tensor[(?, 2, 4), float32]");
  EXPECT_EQ(type_str(reshape_type({-1, 4}, {-3})), "Tensor[(?), float32]");
  EXPECT_EQ(type_str(reshape_type({2, 3, 4}, {-4, 2, 1, -1})), "Tensor[(2, 1, 12), float32]");
}

TEST(TransformReshape, AllowZeroMakesZeroARealExtent) {
  EXPECT_EQ(type_str(reshape_type({0, 3}, {3, 0}, 1)), "Tensor[(3, 0), float32]");
  // Without allowzero the 0 copies input dim 1 (3): 9 elements from 0.
  expect_mentions(reshape_error({0, 3}, {3, 0}, 0), {"op 'reshape'", "(0, 3)", "(3, 3)"});
  expect_mentions(reshape_error({2, 3}, {0, -1}, 1), {"op 'reshape'", "cannot infer the -1"});
  expect_mentions(reshape_error({2, 3}, {6}, 2), {"'allowzero'", "found 2"});
}

TEST(TransformReshape, ErrorsNameShapesAndNewshape) {
  std::string e = reshape_error({2, 3, 4}, {5, 5});
  expect_mentions(e, {"op 'reshape'", "[5, 5]", "(2, 3, 4) with 24 elements", "(5, 5) with 25 elements"});
  e = reshape_error({2, 3, 4}, {5, -1});
  expect_mentions(e, {"op 'reshape'", "cannot infer the -1", "(2, 3, 4)", "[5, -1]"});
  expect_mentions(reshape_error({2, 3, 4}, {-1, -1}), {"at most one -1"});
  expect_mentions(reshape_error({2, 3}, {0, 0, 0}), {"input dim 2", "(2, 3)"});
  expect_mentions(reshape_error({2, 3}, {-5, 6}), {"invalid value -5"});
  expect_mentions(reshape_error({6, 4}, {-4, 4, -1, 0}), {"cannot split input dim 0", "(6, 4)"});
  expect_mentions(reshape_error({6, 4}, {-4, -1, -1, 0}), {"invalid split after -4"});
  expect_mentions(reshape_error({6, 4}, {-4, 2}), {"must be followed by two extents"});
  expect_mentions(reshape_error({6}, {-3}), {"beyond the input of rank 1"});
  expect_mentions(infer_op_error("reshape", {f32({2})}), {"missing required attribute 'newshape'"});
  expect_mentions(infer_op_error("reshape", {tuple_type({f32({2})})}, {{"newshape", std::vector<int64_t>{2}}}),
                  {"op 'reshape'", "argument 'data' must be a tensor"});
}

TEST(TransformReshape, KeepsDType) {
  Type t = infer_op("reshape", {tensor_type({2, 3}, DType::kInt8)}, {{"newshape", std::vector<int64_t>{3, 2}}});
  EXPECT_EQ(type_str(t), "Tensor[(3, 2), int8]");
}

TEST(TransformReshape, KernelKeepsRowMajorOrder) {
  NumpyArray expected = numpy_eval("r = " + numpy_iota({2, 3, 4}, 100) + ".reshape(4, 3, 2)")[0];
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kInt64, DType::kInt8}) {
    auto out = run_op("reshape", {iota({2, 3, 4}, dtype, 100)}, {{"newshape", std::vector<int64_t>{4, 0, -1}}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dtype(), dtype);
    expect_same(out[0], expected);
  }
  auto out = run_op("reshape", {iota({0, 3})}, {{"newshape", std::vector<int64_t>{3, 0}}, {"allowzero", 1}});
  EXPECT_EQ(out[0].shape(), (Shape{3, 0}));
}

TEST(TransformSqueeze, TypeRelation) {
  EXPECT_EQ(type_str(infer_op("squeeze", {f32({1, 3, 1, 2})})), "Tensor[(3, 2), float32]");
  EXPECT_EQ(type_str(infer_op("squeeze", {f32({1, 3, 1, 2})}, {{"axis", std::vector<int64_t>{0}}})),
            "Tensor[(3, 1, 2), float32]");
  EXPECT_EQ(type_str(infer_op("squeeze", {f32({1, 3, 1, 2})}, {{"axis", std::vector<int64_t>{-2, 0}}})),
            "Tensor[(3, 2), float32]");
  EXPECT_EQ(type_str(infer_op("squeeze", {f32({1, 1})})), "float32");
  EXPECT_EQ(type_str(infer_op("squeeze", {f32({2, 3})}, {{"axis", std::vector<int64_t>{}}})),
            "Tensor[(2, 3), float32]");
}

TEST(TransformSqueeze, UnknownDims) {
  // axis=None keeps unknown dims (they may not be 1); a named unknown dim is taken to be 1.
  EXPECT_EQ(type_str(infer_op("squeeze", {f32({-1, 1, 3})})), "Tensor[(?, 3), float32]");
  EXPECT_EQ(type_str(infer_op("squeeze", {f32({-1, 3})}, {{"axis", std::vector<int64_t>{0}}})), "Tensor[(3), float32]");
}

TEST(TransformSqueeze, Errors) {
  std::string e = infer_op_error("squeeze", {f32({1, 3, 1, 2})}, {{"axis", std::vector<int64_t>{1}}});
  expect_mentions(
      e, {"op 'squeeze'", "cannot squeeze axis 1", "argument 'data'", "(1, 3, 1, 2)", "expected extent 1, found 3"});
  e = infer_op_error("squeeze", {f32({1, 3})}, {{"axis", std::vector<int64_t>{2}}});
  expect_mentions(e, {"op 'squeeze'", "out of range", "found 2"});
  e = infer_op_error("squeeze", {f32({1, 3})}, {{"axis", std::vector<int64_t>{0, -2}}});
  expect_mentions(e, {"op 'squeeze'", "appears twice"});
}

TEST(TransformSqueeze, Kernel) {
  auto out = run_op("squeeze", {iota({1, 3, 1, 2}, DType::kFloat64)}, {{"axis", std::vector<int64_t>{0, 2}}});
  EXPECT_EQ(out[0].shape(), (Shape{3, 2}));
  expect_close(out[0], {0, 1, 2, 3, 4, 5});
}

TEST(TransformExpandDims, TypeRelation) {
  auto expand = [](Shape in, int64_t axis, int64_t count = 1) {
    return type_str(infer_op("expand_dims", {f32(std::move(in))}, {{"axis", axis}, {"num_newaxis", count}}));
  };
  EXPECT_EQ(expand({2, 3}, 0), "Tensor[(1, 2, 3), float32]");
  EXPECT_EQ(expand({2, 3}, 2), "Tensor[(2, 3, 1), float32]");
  EXPECT_EQ(expand({2, 3}, -1), "Tensor[(2, 3, 1), float32]");
  EXPECT_EQ(expand({2, 3}, -3), "Tensor[(1, 2, 3), float32]");
  EXPECT_EQ(expand({2, 3}, 1, 2), "Tensor[(2, 1, 1, 3), float32]");
  EXPECT_EQ(expand({2, 3}, 1, 0), "Tensor[(2, 3), float32]");
  EXPECT_EQ(expand({}, 0), "Tensor[(1), float32]");
  EXPECT_EQ(expand({-1, 3}, 1), "Tensor[(?, 1, 3), float32]");
}

TEST(TransformExpandDims, Errors) {
  std::string e = infer_op_error("expand_dims", {f32({2, 3})}, {{"axis", 3}});
  expect_mentions(e, {"op 'expand_dims'", "axis out of range", "[-3, 3)", "found 3"});
  expect_mentions(infer_op_error("expand_dims", {f32({2, 3})}, {{"axis", -4}}), {"found -4"});
  expect_mentions(infer_op_error("expand_dims", {f32({2, 3})}, {{"axis", 0}, {"num_newaxis", -1}}),
                  {"op 'expand_dims'", "'num_newaxis'"});
  expect_mentions(infer_op_error("expand_dims", {f32({2, 3})}), {"missing required attribute 'axis'"});
}

TEST(TransformExpandDims, Kernel) {
  auto out = run_op("expand_dims", {iota({2, 3}, DType::kInt32)}, {{"axis", 1}, {"num_newaxis", 2}});
  EXPECT_EQ(out[0].shape(), (Shape{2, 1, 1, 3}));
  EXPECT_EQ(out[0].dtype(), DType::kInt32);
  expect_same(out[0], numpy_eval("r = np.expand_dims(" + numpy_iota({2, 3}) + ", (1, 2))")[0]);
}

TEST(TransformReshape, FusionPatternIsInjective) {
  for (const char* op : {"reshape", "squeeze", "expand_dims"})
    EXPECT_EQ(OpRegistry::global().get(op).pattern, OpPattern::kInjective) << op;
}

}  // namespace
}  // namespace kiln::testing
