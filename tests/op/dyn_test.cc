// The dyn.* ops: relations give '?' where the run-time operand decides an extent, and the
// reference kernels, run by the interpreter with those operands as function arguments, size
// their results from the values (checked against hand-worked results and the static ops).
#include "kiln/attrs/dyn.h"

#include <gtest/gtest.h>

#include "kiln/attrs/image.h"
#include "kiln/attrs/indexing.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/runtime/kernel_registry.h"
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

TEST(DynOps, SplitOneHotAndResizeRelations) {
  EXPECT_EQ(type_str(infer_op("dyn.split", {f32({5, 2}), i64s(2)}, {{"axis", int64_t{0}}})),
            "(Tensor[(?, 2), float32], Tensor[(?, 2), float32])");
  EXPECT_EQ(type_str(infer_op("dyn.one_hot", {i64s(3), f32({}), f32({}), tensor_type({}, DType::kInt32)},
                              {{"axis", int64_t{0}}, {"dtype", std::string("float32")}})),
            "Tensor[(?, 3), float32]");
  EXPECT_EQ(type_str(infer_op("dyn.resize2d", {f32({1, 3, 4, 4}), f32({0}), f32({4}), i64s(0)})),
            "Tensor[(1, 3, ?, ?), float32]");
  EXPECT_NE(infer_op_error("dyn.resize2d", {f32({3, 4, 4}), f32({0}), f32({4}), i64s(0)}).find("4-D"),
            std::string::npos);
  EXPECT_NE(infer_op_error("dyn.resize2d", {f32({1, 3, 4, 4}), f32({0}), i64s(4), i64s(0)}).find("floating-point"),
            std::string::npos);
  EXPECT_NE(infer_op_error("dyn.split", {f32({5}), i64s(0)}).find("must not be empty"), std::string::npos);
}

TEST(DynOps, SplitSizesAndOneHotDepthAtRunTime) {
  const char* split = "def @main(%x: Tensor[(5, 2), float32], %s: Tensor[(2), int64]) { dyn.split(%x, %s, axis=0) }";
  std::vector<NDArray> parts = run_main(split, {iota({5, 2}), ints({2, 3})});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].shape(), (Shape{2, 2}));
  expect_close(parts[1], {4, 5, 6, 7, 8, 9});
  EXPECT_EQ(run_main(split, {iota({5, 2}), ints({0, 5})})[0].shape(), (Shape{0, 2}));
  try {
    run_main(split, {iota({5, 2}), ints({2, 2})});
    ADD_FAILURE() << "sizes not adding up to the axis ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("do not add up"), std::string::npos) << e.what();
  }
  const char* one_hot =
      "def @main(%i: Tensor[(3), int64], %d: Tensor[(), int64]) { dyn.one_hot(%i, 5f, -1f, %d, axis=0, "
      "dtype=\"float32\") }";
  NDArray hot = run_main(one_hot, {ints({0, 2, 7}), i64(3)})[0];
  EXPECT_EQ(hot.shape(), (Shape{3, 3}));
  expect_close(hot, {5, -1, -1, -1, -1, -1, -1, 5, -1});
}

// Scales and sizes at run time give what image.resize2d gives with them as attributes.
TEST(DynOps, ResizeMatchesTheStaticOp) {
  // Absent operands are empty tensors; the lengths are part of the function's type.
  auto text = [](int64_t scales, int64_t sizes) {
    return cat("def @main(%x: Tensor[(1, 1, 2, 3), float32], %r: Tensor[(0), float32], %s: Tensor[(", scales,
               "), float32], %z: Tensor[(", sizes,
               "), int64]) { dyn.resize2d(%x, %r, %s, %z, method=\"linear\", "
               "coordinate_transformation_mode=\"asymmetric\") }");
  };
  NDArray none_f = NDArray::empty({0}, DType::kFloat32), none_i = NDArray::empty({0}, DType::kInt64);
  Resize2DAttrs fixed;
  fixed.method = "linear";
  fixed.coordinate_transformation_mode = "asymmetric";
  fixed.size = {4, 3};
  fixed.scales = std::vector<double>{2, 1};
  NDArray want = run_op("image.resize2d", {iota({1, 1, 2, 3})}, attrs_to(fixed))[0];
  NDArray by_scales =
      run_main(text(4, 0), {iota({1, 1, 2, 3}), none_f, NDArray::from_vector<float>({4}, {1, 1, 2, 1}), none_i})[0];
  EXPECT_EQ(by_scales.shape(), (Shape{1, 1, 4, 3}));
  expect_close(by_scales, values_of(want));
  fixed.scales.reset();
  fixed.size = {3, 5};
  want = run_op("image.resize2d", {iota({1, 1, 2, 3})}, attrs_to(fixed))[0];
  NDArray by_sizes = run_main(text(0, 4), {iota({1, 1, 2, 3}), none_f, none_f, ints({1, 1, 3, 5})})[0];
  EXPECT_EQ(by_sizes.shape(), (Shape{1, 1, 3, 5}));
  expect_close(by_sizes, values_of(want));
  try {
    run_main(text(0, 4), {iota({1, 1, 2, 3}), none_f, none_f, ints({1, 2, 3, 5})});
    ADD_FAILURE() << "resizing the channel axis ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("batch or channel"), std::string::npos) << e.what();
  }
}

// Kernels with an output function allocate the outputs they are given undefined (what the
// graph executor does for tensors of run-time shape), from their inputs' shapes.
TEST(KernelOutputFunctions, SizeUndefinedOutputsFromTheInputs) {
  const KernelRegistry& registry = KernelRegistry::global();
  auto run = [&](const std::string& op, std::vector<NDArray> in, const Attrs& attrs = {}) {
    std::vector<NDArray> out(1);
    registry.get(op)(attrs, in, out);
    return out[0];
  };
  NDArray product = run("multiply", {iota({2, 1}), iota({3})});
  EXPECT_EQ(product.shape(), (Shape{2, 3}));
  expect_close(product, {0, 0, 0, 0, 1, 2});
  EXPECT_EQ(run("less", {iota({2, 1}), iota({3})}).dtype(), DType::kBool);
  EXPECT_EQ(run("cos", {iota({4})}).shape(), (Shape{4}));
  EXPECT_EQ(run("cast", {iota({4})}, {{"dtype", std::string("int32")}}).dtype(), DType::kInt32);
  EXPECT_EQ(run("squeeze", {iota({1, 3, 1})}, {{"axis", std::vector<int64_t>{0}}}).shape(), (Shape{3, 1}));
  NDArray t = run("transpose", {iota({2, 3})}, {{"axes", std::vector<int64_t>{1, 0}}});
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  expect_close(t, {0, 3, 1, 4, 2, 5});
  EXPECT_EQ(run("where", {NDArray::from_vector<bool>({2, 1}, {true, false}), iota({3}), iota({1})}).shape(),
            (Shape{2, 3}));
  EXPECT_TRUE(registry.sizes_outputs("multiply"));
  EXPECT_TRUE(registry.sizes_outputs("dyn.reshape"));
  EXPECT_FALSE(registry.sizes_outputs("nn.softmax"));
}

// The output functions the graph executor sizes blocks by give the shapes the kernels
// themselves allocate, and a kernel handed outputs so sized writes into them.
TEST(DynOps, OutputFunctionsGiveTheShapesTheKernelsAllocate) {
  struct Case {
    std::string op;
    Attrs attrs;
    std::vector<NDArray> inputs;
  };
  const std::vector<Case> cases = {
      {"dyn.reshape", attrs_to(DynReshapeAttrs{}), {iota({2, 6}), ints({3, -1})}},
      {"dyn.full", attrs_to(DynFullAttrs{}), {NDArray::scalar(DType::kFloat32, 4), ints({2, 5})}},
      {"dyn.tile", {}, {iota({2, 3}), ints({2, 1})}},
      {"dyn.broadcast_to", {}, {iota({1, 3}), ints({4, 3})}},
      {"dyn.expand_dims", {}, {iota({2, 3}), i64(1)}},
      {"dyn.squeeze", {}, {iota({2, 1, 3}), ints({1})}},
  };
  const KernelRegistry& registry = KernelRegistry::global();
  for (const Case& c : cases) {
    const OutputFn* output_fn = registry.output_fn(c.op);
    ASSERT_NE(output_fn, nullptr) << c.op;
    std::vector<NDArray> allocated(1);
    registry.get(c.op)(c.attrs, c.inputs, allocated);
    const std::vector<OutputSpec> specs = (*output_fn)(c.attrs, c.inputs);
    ASSERT_EQ(specs.size(), 1u) << c.op;
    EXPECT_EQ(specs[0].shape, allocated[0].shape()) << c.op;
    EXPECT_EQ(specs[0].dtype, allocated[0].dtype()) << c.op;
    std::vector<NDArray> given{NDArray::empty(specs[0].shape, specs[0].dtype)};
    registry.get(c.op)(c.attrs, c.inputs, given);
    EXPECT_EQ(values_of(given[0]), values_of(allocated[0])) << c.op;
  }
}

}  // namespace
}  // namespace kiln::testing
