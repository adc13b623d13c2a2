// concatenate and split: type relations (with unknown dims), errors naming fields and
// shapes, and the reference kernels against numpy.
#include "op/transform_test_util.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

Type concat_type(std::vector<Type> fields, int64_t axis) {
  return infer_op("concatenate", {tuple_type(std::move(fields))}, {{"axis", axis}});
}

std::string concat_error(std::vector<Type> fields, int64_t axis) {
  return infer_op_error("concatenate", {tuple_type(std::move(fields))}, {{"axis", axis}});
}

TEST(TransformConcatenate, TypeRelation) {
  EXPECT_EQ(type_str(concat_type({f32({2, 3}), f32({4, 3})}, 0)), "Tensor[(6, 3), float32]");
  EXPECT_EQ(type_str(concat_type({f32({2, 3}), f32({2, 5}), f32({2, 1})}, -1)), "Tensor[(2, 9), float32]");
  EXPECT_EQ(type_str(concat_type({f32({2, 3})}, 1)), "Tensor[(2, 3), float32]");
  EXPECT_EQ(type_str(concat_type({f32({2, 0}), f32({2, 3})}, 1)), "Tensor[(2, 3), float32]");
  EXPECT_EQ(type_str(infer_op("concatenate", {tuple_type({f32({2, 3}), f32({4, 3})})})), "Tensor[(6, 3), float32]");
}

TEST(TransformConcatenate, UnknownDims) {
  EXPECT_EQ(type_str(concat_type({f32({-1, 3}), f32({2, 3})}, 0)), "Tensor[(?, 3), float32]");
  // Off the axis an unknown dim takes the extent of the other fields.
  EXPECT_EQ(type_str(concat_type({f32({-1, 3}), f32({2, 4})}, 1)), "Tensor[(2, 7), float32]");
  EXPECT_EQ(type_str(concat_type({f32({-1, 3}), f32({-1, 4})}, 1)), "Tensor[(?, 7), float32]");
}

TEST(TransformConcatenate, MismatchNamesFieldAndBothShapes) {
  std::string e = concat_error({f32({2, 3}), f32({5, 3}), f32({3, 4})}, 0);
  expect_mentions(e, {"op 'concatenate'", "field 2 of argument 'data'", "field 0", "dim 1", "along axis 0",
                      "expected (2, 3), found (3, 4)"});
  // Field 0 left dim 0 unknown, field 1 fixed it: the message compares with field 1.
  e = concat_error({f32({-1, 3}), f32({2, 3}), f32({4, 3})}, 1);
  expect_mentions(e, {"op 'concatenate'", "field 2 of argument 'data' does not match field 1 at dim 0",
                      "expected (2, 3), found (4, 3)"});
  e = concat_error({f32({2, 3}), f32({2, 3, 1})}, 0);
  expect_mentions(e, {"op 'concatenate'", "field 1", "another rank", "(2, 3)", "(2, 3, 1)"});
  e = concat_error({f32({2, 3}), tensor_type({2, 3}, DType::kInt32)}, 0);
  expect_mentions(e, {"op 'concatenate'", "field 1", "another dtype", "expected float32, found int32"});
  e = concat_error({f32({2, 3}), f32({2, 3})}, 2);
  expect_mentions(e, {"op 'concatenate'", "axis out of range", "found 2"});
  e = concat_error({f32({2}), tuple_type({f32({2})})}, 0);
  expect_mentions(e, {"op 'concatenate'", "field 1 of argument 'data' must be a tensor"});
}

TEST(TransformConcatenate, ArgumentMustBeATuple) {
  std::string e = infer_op_error("concatenate", {f32({2, 3})});
  expect_mentions(e, {"op 'concatenate'", "argument 'data' must be a tuple", "Tensor[(2, 3), float32]"});
  e = infer_op_error("concatenate", {tuple_type({})});
  expect_mentions(e, {"op 'concatenate'", "empty tuple"});
  e = infer_op_error("concatenate", {f32({2}), f32({2})});
  expect_mentions(e, {"op 'concatenate'", "wrong number of arguments"});
}

TEST(TransformConcatenate, KernelAgainstNumpy) {
  const std::vector<int64_t> axes = {0, 1, 2, -1};
  auto pieces = [](int64_t axis) {
    Shape a = {2, 3, 4}, b = {2, 3, 4}, c = {2, 3, 4};
    size_t ax = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    b[ax] = 1;
    c[ax] = 0;  // an empty field contributes nothing
    return std::vector<Shape>{a, b, c};
  };
  std::string code = "r = []\n";
  for (int64_t axis : axes) {
    auto s = pieces(axis);
    code += "r.append(np.concatenate([" + numpy_iota(s[0]) + ", " + numpy_iota(s[1], 7) + ", " + numpy_iota(s[2]) +
            "], axis=" + std::to_string(axis) + "))\n";
  }
  auto expected = numpy_eval(code);
  ASSERT_EQ(expected.size(), axes.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    auto s = pieces(axes[i]);
    std::vector<NDArray> fields = {iota(s[0], DType::kInt64), iota(s[1], DType::kInt64, 7), iota(s[2], DType::kInt64)};
    auto out = run_op("concatenate", {fields}, {{"axis", axes[i]}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dtype(), DType::kInt64);
    expect_same(out[0], expected[i]);
  }
}

TEST(TransformConcatenate, KernelHandWorked) {
  auto out = run_op("concatenate", {std::vector<NDArray>{tensor({2, 1}, {1, 2}), tensor({2, 2}, {3, 4, 5, 6})}},
                    {{"axis", 1}});
  EXPECT_EQ(out[0].shape(), (Shape{2, 3}));
  expect_close(out[0], {1, 3, 4, 2, 5, 6});
  auto half =
      run_op("concatenate",
             {std::vector<NDArray>{tensor({2}, {1.5, 2}, DType::kFloat16), tensor({1}, {-3}, DType::kFloat16)}});
  expect_close(half[0], {1.5, 2, -3});
}

Type split_type(Shape in, AttrValue indices_or_sections, int64_t axis = 0) {
  return infer_op("split", {f32(std::move(in))}, {{"indices_or_sections", indices_or_sections}, {"axis", axis}});
}

std::string split_error(Shape in, AttrValue indices_or_sections, int64_t axis = 0) {
  return infer_op_error("split", {f32(std::move(in))}, {{"indices_or_sections", indices_or_sections}, {"axis", axis}});
}

TEST(TransformSplit, TypeRelation) {
  EXPECT_EQ(type_str(split_type({6, 4}, 3)),
            "(Tensor[(2, 4), float32], Tensor[(2, 4), float32], Tensor[(2, 4), float32])");
  EXPECT_EQ(type_str(split_type({6, 4}, std::vector<int64_t>{1, 4})),
            "(Tensor[(1, 4), float32], Tensor[(3, 4), float32], Tensor[(2, 4), float32])");
  EXPECT_EQ(type_str(split_type({6, 4}, std::vector<int64_t>{2}, -1)),
            "(Tensor[(6, 2), float32], Tensor[(6, 2), float32])");
  EXPECT_EQ(type_str(split_type({6, 4}, std::vector<int64_t>{0, 6})),
            "(Tensor[(0, 4), float32], Tensor[(6, 4), float32], Tensor[(0, 4), float32])");
  EXPECT_EQ(type_str(split_type({6, 4}, 1)), "(Tensor[(6, 4), float32],)");
}

TEST(TransformSplit, UnknownDims) {
  EXPECT_EQ(type_str(split_type({-1, 4}, 2)), "(Tensor[(?, 4), float32], Tensor[(?, 4), float32])");
  EXPECT_EQ(type_str(split_type({-1, 4}, std::vector<int64_t>{2})),
            "(Tensor[(2, 4), float32], Tensor[(?, 4), float32])");
  EXPECT_EQ(type_str(split_type({-1, 4}, 2, 1)), "(Tensor[(?, 2), float32], Tensor[(?, 2), float32])");
}

TEST(TransformSplit, Errors) {
  expect_mentions(split_error({6, 4}, 4), {"op 'split'", "dim 0 of argument 'data' with shape (6, 4)",
                                           "4 equal sections", "divisible by 4, found 6"});
  expect_mentions(split_error({6, 4}, std::vector<int64_t>{3, 1}),
                  {"op 'split'", "ascend", "(6, 4)", "[3, 1]", "[0, 6]"});
  expect_mentions(split_error({6, 4}, std::vector<int64_t>{7}), {"op 'split'", "ascend", "[7]"});
  expect_mentions(split_error({6, 4}, std::vector<int64_t>{-1}), {"op 'split'", "[-1]"});
  expect_mentions(split_error({6, 4}, 0), {"op 'split'", "positive number of sections", "found 0"});
  expect_mentions(split_error({6, 4}, 1.5), {"op 'split'", "'indices_or_sections'", "1.5"});
  expect_mentions(split_error({6, 4}, 2, 2), {"op 'split'", "axis out of range", "found 2"});
  expect_mentions(infer_op_error("split", {f32({6})}), {"op 'split'", "missing required attribute"});
}

TEST(TransformSplit, KernelAgainstNumpy) {
  struct Case {
    AttrValue indices_or_sections;
    int64_t axis;
    std::string numpy_arg;
  };
  std::vector<Case> cases = {
      {3, 1, "3, axis=1"},
      {std::vector<int64_t>{1, 3}, 2, "[1, 3], axis=2"},
      {std::vector<int64_t>{2, 2}, -1, "[2, 2], axis=-1"},
      {2, 0, "2, axis=0"},
  };
  // One numpy run: the pieces of every case, one after another.
  std::string code = "x = " + numpy_iota({2, 6, 4}) + "\nr = []\n";
  for (const Case& c : cases) code += "r += np.split(x, " + c.numpy_arg + ")\n";
  auto expected = numpy_eval(code);
  size_t next = 0;
  for (const Case& c : cases) {
    auto outs = run_op("split", {iota({2, 6, 4}, DType::kFloat16)},
                       {{"indices_or_sections", c.indices_or_sections}, {"axis", c.axis}});
    SCOPED_TRACE(c.numpy_arg);
    for (const NDArray& out : outs) {
      ASSERT_LT(next, expected.size());
      EXPECT_EQ(out.dtype(), DType::kFloat16);
      expect_same(out, expected[next++]);
    }
  }
  EXPECT_EQ(next, expected.size());
}

TEST(TransformSplit, KernelHandWorked) {
  auto outs = run_op("split", {tensor({2, 3}, {1, 2, 3, 4, 5, 6})},
                     {{"indices_or_sections", std::vector<int64_t>{1}}, {"axis", 1}});
  ASSERT_EQ(outs.size(), 2u);
  expect_close(outs[0], {1, 4});
  expect_close(outs[1], {2, 3, 5, 6});
}

TEST(TransformConcatenate, FusionPatternIsInjective) {
  EXPECT_EQ(OpRegistry::global().get("concatenate").pattern, OpPattern::kInjective);
  EXPECT_EQ(OpRegistry::global().get("split").pattern, OpPattern::kInjective);
}

}  // namespace
}  // namespace kiln::testing
