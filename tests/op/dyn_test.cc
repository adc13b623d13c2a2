// The dyn.* ops: relations give '?' where the run-time operand decides an extent, and the
// reference kernels, run by the interpreter with those operands as function arguments, size
// their results from the values (checked against hand-worked results and the static ops).
#include <gtest/gtest.h>

#include "kiln/attrs/indexing.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

NDArray ints(const std::vector<int64_t>& v) {
  return NDArray::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
}
NDArray i64(int64_t v) { return NDArray::from_vector<int64_t>({}, {v}); }
Type i64s(int64_t n) { return tensor_type({n}, DType::kInt64); }

NDArray iota(Shape shape) {
  NDArray t = NDArray::empty(shape, DType::kFloat32);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, static_cast<double>(i));
  return t;
}

// Runs `@main` of the IR text on `args`; the first result tensor.
std::vector<NDArray> run_main(const std::string& text, const std::vector<NDArray>& args) {
  std::vector<Value> values(args.begin(), args.end());
  return interpret(parse_module(text), "main", values).flatten();
}

std::vector<double> values_of(const NDArray& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.at(i));
  return out;
}

TEST(DynOps, RelationsGiveUnknownExtentsWithKnownRank) {
  EXPECT_EQ(type_str(infer_op("dyn.reshape", {f32({2, 3}), i64s(3)})), "Tensor[(?, ?, ?), float32]");
  EXPECT_EQ(type_str(infer_op("dyn.strided_slice", {f32({4, 5}), i64s(1), i64s(1), i64s(1), i64s(1)})),
            "Tensor[(?, ?), float32]");
  EXPECT_EQ(type_str(infer_op("dyn.broadcast_to", {f32({3, 1}), i64s(3)})), "Tensor[(?, 3, ?), float32]");
  EXPECT_EQ(type_str(infer_op("dyn.tile", {f32({0, 2}), i64s(2)})), "Tensor[(0, ?), float32]");
  EXPECT_EQ(type_str(infer_op("dyn.full", {tensor_type({}, DType::kInt32), i64s(2)})), "Tensor[(?, ?), int32]");
  EXPECT_EQ(type_str(infer_op("dyn.arange", {tensor_type({}, DType::kInt64), tensor_type({}, DType::kInt64),
                                             tensor_type({}, DType::kInt64)})),
            "Tensor[(?), int64]");
  EXPECT_EQ(type_str(infer_op("dyn.pad", {f32({2, 3}), i64s(2), f32({})}, {{"axes", std::vector<int64_t>{1}}})),
            "Tensor[(2, ?), float32]");
  EXPECT_EQ(type_str(infer_op("dyn.topk", {f32({2, 5}), i64s(1)})), "(Tensor[(2, ?), float32], Tensor[(2, ?), int64])");
  EXPECT_EQ(type_str(infer_op("dyn.expand_dims", {f32({2, 3}), i64s(2)})), "Tensor[(?, ?, ?, ?), float32]");
  EXPECT_EQ(type_str(infer_op("dyn.squeeze", {f32({1, 3, 1}), i64s(2)})), "Tensor[(?), float32]");
  EXPECT_EQ(type_str(infer_op("dyn.reduce", {f32({2, 3}), i64s(1)}, {{"reducer", std::string("sum")}})),
            "Tensor[(?), float32]");
  EXPECT_EQ(type_str(infer_op("dyn.reduce", {f32({2, 3}), i64s(0)},
                              {{"reducer", std::string("sum")}, {"noop_with_empty_axes", true}})),
            "Tensor[(2, 3), float32]");
}

TEST(DynOps, RelationErrorsNameTheOperand) {
  EXPECT_NE(infer_op_error("dyn.reshape", {f32({2, 3}), f32({2})}).find("must hold integers"), std::string::npos);
  EXPECT_NE(infer_op_error("dyn.reshape", {f32({2, 3}), tensor_type({kAnyDim}, DType::kInt64)}).find("static length"),
            std::string::npos);
  EXPECT_NE(infer_op_error("dyn.tile", {f32({2, 3}), i64s(3)}).find("one value per data axis"), std::string::npos);
  EXPECT_NE(infer_op_error("dyn.reduce", {f32({2}), i64s(1)}, {{"reducer", std::string("median")}}).find("reducer"),
            std::string::npos);
}

TEST(DynOps, ReshapeCopiesZerosAndInfersMinusOne) {
  const char* text = "def @main(%x: Tensor[(2, 3, 4), float32], %s: Tensor[(2), int64]) { dyn.reshape(%x, %s) }";
  NDArray out = run_main(text, {iota({2, 3, 4}), ints({0, -1})})[0];
  EXPECT_EQ(out.shape(), (Shape{2, 12}));
  expect_close(out, values_of(iota({2, 12})));
  EXPECT_EQ(run_main(text, {iota({2, 3, 4}), ints({-1, 8})})[0].shape(), (Shape{3, 8}));
  try {
    run_main(text, {iota({2, 3, 4}), ints({5, -1})});
    ADD_FAILURE() << "an indivisible shape ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot infer the -1"), std::string::npos) << e.what();
  }
}

TEST(DynOps, StridedSliceMatchesTheStaticOp) {
  const char* text =
      "def @main(%x: Tensor[(4, 5), float32], %b: Tensor[(2), int64], %e: Tensor[(2), int64], %a: Tensor[(2), int64], "
      "%s: Tensor[(2), int64]) { dyn.strided_slice(%x, %b, %e, %a, %s) }";
  NDArray out = run_main(text, {iota({4, 5}), ints({1, -1}), ints({3, -6}), ints({0, 1}), ints({1, -2})})[0];
  StridedSliceAttrs fixed;
  fixed.begin = {1, -1};
  fixed.end = {3, -6};
  fixed.axes = std::vector<int64_t>{0, 1};
  fixed.strides = std::vector<int64_t>{1, -2};
  NDArray want = run_op("strided_slice", {iota({4, 5})}, attrs_to(fixed))[0];
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  expect_close(out, values_of(want));
}

TEST(DynOps, BroadcastToTileFullArange) {
  NDArray b = run_main("def @main(%x: Tensor[(3, 1), float32], %s: Tensor[(3), int64]) { dyn.broadcast_to(%x, %s) }",
                       {iota({3, 1}), ints({2, 1, 2})})[0];
  EXPECT_EQ(b.shape(), (Shape{2, 3, 2}));
  expect_close(b, {0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2});
  NDArray t = run_main("def @main(%x: Tensor[(2, 2), float32], %r: Tensor[(2), int64]) { dyn.tile(%x, %r) }",
                       {iota({2, 2}), ints({1, 2})})[0];
  EXPECT_EQ(t.shape(), (Shape{2, 4}));
  expect_close(t, {0, 1, 0, 1, 2, 3, 2, 3});
  NDArray f = run_main("def @main(%s: Tensor[(2), int64]) { dyn.full(7i32, %s) }", {ints({2, 1})})[0];
  EXPECT_EQ(f.shape(), (Shape{2, 1}));
  EXPECT_EQ(f.dtype(), DType::kInt32);
  expect_close(f, {7, 7});
  const char* range =
      "def @main(%a: Tensor[(), int64], %b: Tensor[(), int64], %c: Tensor[(), int64]) { dyn.arange(%a, %b, %c) }";
  expect_close(run_main(range, {i64(10), i64(3), i64(-3)})[0], {10, 7, 4});
  EXPECT_EQ(run_main(range, {i64(1), i64(1), i64(1)})[0].shape(), (Shape{0}));
}

TEST(DynOps, PadTopkAxesAndReduce) {
  NDArray p = run_main(
      "def @main(%x: Tensor[(2, 2), float32], %p: Tensor[(4), int64]) { dyn.pad(%x, %p, 9f, pad_mode=\"constant\") }",
      {iota({2, 2}), ints({0, 1, 1, 0})})[0];
  EXPECT_EQ(p.shape(), (Shape{3, 3}));
  expect_close(p, {9, 0, 1, 9, 2, 3, 9, 9, 9});
  std::vector<NDArray> k = run_main(
      "def @main(%x: Tensor[(2, 4), float32], %k: Tensor[(1), int64]) { dyn.topk(%x, %k) }", {iota({2, 4}), ints({2})});
  EXPECT_EQ(k[0].shape(), (Shape{2, 2}));
  expect_close(k[0], {3, 2, 7, 6});
  expect_close(k[1], {3, 2, 3, 2});
  EXPECT_EQ(run_main("def @main(%x: Tensor[(2, 3), float32], %a: Tensor[(2), int64]) { dyn.expand_dims(%x, %a) }",
                     {iota({2, 3}), ints({-1, 0})})[0]
                .shape(),
            (Shape{1, 2, 3, 1}));
  EXPECT_EQ(run_main("def @main(%x: Tensor[(1, 3, 1), float32], %a: Tensor[(1), int64]) { dyn.squeeze(%x, %a) }",
                     {iota({1, 3, 1}), ints({-1})})[0]
                .shape(),
            (Shape{1, 3}));
  const char* reduce =
      "def @main(%x: Tensor[(2, 3), float32], %a: Tensor[(1), int64]) { dyn.reduce(%x, %a, reducer=\"sum\", "
      "keepdims=True) }";
  NDArray r = run_main(reduce, {iota({2, 3}), ints({1})})[0];
  EXPECT_EQ(r.shape(), (Shape{2, 1}));
  expect_close(r, {3, 12});
}

TEST(DynOps, CumsumAlongARunTimeAxisAndTriluFromARunTimeDiagonal) {
  EXPECT_EQ(type_str(infer_op("dyn.cumsum", {f32({2, 3}), tensor_type({}, DType::kInt32)})), "Tensor[(2, 3), float32]");
  EXPECT_NE(infer_op_error("dyn.trilu", {f32({3}), i64s(1)}).find("must hold matrices"), std::string::npos);
  const char* cumsum =
      "def @main(%x: Tensor[(2, 3), float32], %a: Tensor[(), int32]) { dyn.cumsum(%x, %a, reverse=True) }";
  expect_close(run_main(cumsum, {iota({2, 3}), NDArray::from_vector<int32_t>({}, {-1})})[0], {3, 3, 2, 12, 9, 5});
  expect_close(run_main(cumsum, {iota({2, 3}), NDArray::from_vector<int32_t>({}, {0})})[0], {3, 5, 7, 3, 4, 5});
  const char* trilu =
      "def @main(%x: Tensor[(2, 3), float32], %k: Tensor[(), int64]) { dyn.trilu(%x, %k, upper=False) }";
  expect_close(run_main(trilu, {iota({2, 3}), i64(0)})[0], {0, 0, 0, 3, 4, 0});
  expect_close(run_main(trilu, {iota({2, 3}), i64(-1)})[0], {0, 0, 0, 3, 0, 0});
}

}  // namespace
}  // namespace kiln::testing
