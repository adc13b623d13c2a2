// stack: type relation (with unknown dims), errors naming fields and shapes, the reference
// kernel against numpy, the compute against the kernel, and IR text round trip.
#include "ir/text_test_util.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/structural.h"
#include "op/compute_test_util.h"
#include "op/transform_test_util.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

Type stack_type(std::vector<Type> fields, int64_t axis) {
  return infer_op("stack", {tuple_type(std::move(fields))}, {{"axis", axis}});
}

std::string stack_error(std::vector<Type> fields, int64_t axis) {
  return infer_op_error("stack", {tuple_type(std::move(fields))}, {{"axis", axis}});
}

TEST(TransformStack, TypeRelation) {
  EXPECT_EQ(type_str(stack_type({f32({2, 3}), f32({2, 3})}, 0)), "Tensor[(2, 2, 3), float32]");
  EXPECT_EQ(type_str(stack_type({f32({2, 3}), f32({2, 3}), f32({2, 3})}, 1)), "Tensor[(2, 3, 3), float32]");
  EXPECT_EQ(type_str(stack_type({f32({2, 3}), f32({2, 3})}, 2)), "Tensor[(2, 3, 2), float32]");
  EXPECT_EQ(type_str(stack_type({f32({2, 3}), f32({2, 3})}, -1)), "Tensor[(2, 3, 2), float32]");
  EXPECT_EQ(type_str(stack_type({f32({2, 3}), f32({2, 3})}, -3)), "Tensor[(2, 2, 3), float32]");
  EXPECT_EQ(type_str(stack_type({f32({})}, 0)), "Tensor[(1), float32]");
  EXPECT_EQ(type_str(infer_op("stack", {tuple_type({f32({4}), f32({4})})})), "Tensor[(2, 4), float32]");
}

TEST(TransformStack, UnknownDims) {
  EXPECT_EQ(type_str(stack_type({f32({-1, 3}), f32({2, 3})}, 0)), "Tensor[(2, 2, 3), float32]");
  EXPECT_EQ(type_str(stack_type({f32({-1, 3}), f32({-1, 3})}, 1)), "Tensor[(?, 2, 3), float32]");
}

TEST(TransformStack, Errors) {
  expect_mentions(stack_error({f32({2, 3}), f32({3, 2})}, 0),
                  {"op 'stack'", "field 1 of argument 'data'", "expected (2, 3), found (3, 2)"});
  expect_mentions(stack_error({f32({2, 3}), f32({2, 3, 1})}, 0), {"op 'stack'", "field 1", "(2, 3, 1)"});
  expect_mentions(stack_error({f32({2}), tensor_type({2}, DType::kInt32)}, 0),
                  {"op 'stack'", "field 1", "another dtype", "expected float32, found int32"});
  expect_mentions(stack_error({f32({2, 3}), f32({2, 3})}, 3), {"op 'stack'", "axis out of range", "found 3"});
  expect_mentions(stack_error({f32({2, 3})}, -4), {"op 'stack'", "axis out of range", "found -4"});
  expect_mentions(infer_op_error("stack", {f32({2, 3})}), {"op 'stack'", "argument 'data' must be a tuple"});
  expect_mentions(infer_op_error("stack", {tuple_type({})}), {"op 'stack'", "empty tuple"});
}

TEST(TransformStack, KernelAgainstNumpy) {
  const std::vector<int64_t> axes = {0, 1, 2, 3, -1};
  const Shape shape = {2, 3, 4};
  std::string code = "r = []\n";
  for (int64_t axis : axes)
    code += "r.append(np.stack([" + numpy_iota(shape) + ", " + numpy_iota(shape, 7) + ", " + numpy_iota(shape, 5) +
            "], axis=" + std::to_string(axis) + "))\n";
  auto expected = numpy_eval(code);
  ASSERT_EQ(expected.size(), axes.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    SCOPED_TRACE(axes[i]);
    std::vector<NDArray> fields = {iota(shape, DType::kInt64), iota(shape, DType::kInt64, 7),
                                   iota(shape, DType::kInt64, 5)};
    auto out = run_op("stack", {fields}, {{"axis", axes[i]}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dtype(), DType::kInt64);
    expect_same(out[0], expected[i]);
  }
}

TEST(TransformStack, KernelHandWorked) {
  auto out = run_op("stack", {std::vector<NDArray>{tensor({2}, {1, 2}), tensor({2}, {3, 4})}}, {{"axis", 1}});
  EXPECT_EQ(out[0].shape(), (Shape{2, 2}));
  expect_close(out[0], {1, 3, 2, 4});
  auto empty = run_op("stack", {std::vector<NDArray>{tensor({0}, {}), tensor({0}, {})}});
  EXPECT_EQ(empty[0].shape(), (Shape{2, 0}));
}

TEST(TransformStack, ComputeMatchesKernel) {
  expect_compiled_matches_interpreter(
      "fn (%a: Tensor[(2, 3), float32], %b: Tensor[(2, 3), float32], %c: Tensor[(2, 3), float32], Primitive=1) "
      "{ %0 = (%a, %b, %c); stack(%0) }");
  expect_compiled_matches_interpreter(
      "fn (%a: Tensor[(2, 3), int64], %b: Tensor[(2, 3), int64], Primitive=1) { %0 = (%a, %b, %a); stack(%0, "
      "axis=1) }",
      inputs_in(-1000, 1000));
  expect_compiled_matches_interpreter(
      "fn (%a: Tensor[(4, 5), float32], %b: Tensor[(4, 5), float32], Primitive=1) "
      "{ %0 = (%a, %b); %1 = stack(%0, axis=-1); add(%1, 1f) }");
}

TEST(TransformStack, PrintParseRoundTrip) {
  const std::string text =
      "fn (%a: Tensor[(2, 3), float32], %b: Tensor[(2, 3), float32]) { %0 = (%a, %b); stack(%0, axis=-1) }";
  Expr parsed = parse_expr(text);
  infer_expr_type(parsed);
  std::string printed = print_expr(parsed);
  EXPECT_NE(printed.find("stack(%0, axis=-1) /* ty=Tensor[(2, 3, 2), float32] */"), std::string::npos) << printed;
  Expr again = parse_expr(printed);
  EXPECT_TRUE(structural_equal(parsed, again)) << printed;
}

TEST(TransformStack, FusionPatternIsInjective) {
  EXPECT_EQ(OpRegistry::global().get("stack").pattern, OpPattern::kInjective);
}

}  // namespace
}  // namespace kiln::testing
