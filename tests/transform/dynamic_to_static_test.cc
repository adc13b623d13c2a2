// DynamicToStatic: before/after IR as text, and the property that a module of dyn calls with
// operands known now gives bit-identical results through the interpreter before and after,
// with no dyn call left where the static op can express the call.
#include <gtest/gtest.h>

#include <random>

#include "kiln/attrs/dyn.h"
#include "kiln/attrs/unary.h"
#include "kiln/interp/interpreter.h"
#include "transform/pass_test_util.h"

namespace kiln::testing {
namespace {

// Constants of the tests below, int64: [4, -1], [1, 1], [1, 2], [0, 2].
const char* kMetadata = R"(
#[metadata]
{"relay.Constant": [{"dtype":"int64","shape":[2],"data":"BAAAAAAAAAD//////////w=="},
 {"dtype":"int64","shape":[2],"data":"AQAAAAAAAAABAAAAAAAAAA=="},
 {"dtype":"int64","shape":[2],"data":"AQAAAAAAAAACAAAAAAAAAA=="},
 {"dtype":"int64","shape":[2],"data":"AAAAAAAAAAACAAAAAAAAAA=="}]}
)";

TEST(DynamicToStatic, ConstantShapeBecomesStaticReshape) {
  expect_pass_result(
      "DynamicToStatic",
      std::string("def @main(%x: Tensor[(2, 3, 4), float32]) { dyn.reshape(%x, meta[relay.Constant][0]) }") + kMetadata,
      R"(def @main(%x: Tensor[(2, 3, 4), float32]) -> Tensor[(4, 6), float32] {
  reshape(%x, newshape=[4, -1], allowzero=0)
})");
}

// Shape arithmetic on constants is evaluated: [1, 1] + [1, 2] is the shape [2, 3].
TEST(DynamicToStatic, OperandsComputedFromConstantsAreEvaluated) {
  expect_pass_result(
      "DynamicToStatic",
      std::string("def @main() { dyn.full(1f, add(meta[relay.Constant][1], meta[relay.Constant][2])) }") + kMetadata,
      R"(def @main() -> Tensor[(2, 3), float32] { full(1f, shape=[2, 3], dtype="") })");
}

TEST(DynamicToStatic, ScalarOperandsAndArange) {
  expect_pass_result("DynamicToStatic", R"(def @main(%x: Tensor[(3, 5), float32]) {
  %0 = dyn.topk(%x, 2i64, axis=1, is_ascend=True);
  %1 = dyn.arange(0i64, 5i64, 2i64);
  (%0, %1)
})",
                     R"(def @main(%x: Tensor[(3, 5), float32]) {
  %0 = topk(%x, k=2, axis=1, ret_type="both", is_ascend=True, dtype="int64");
  (%0, meta[relay.Constant][0])
}
#[metadata]
{"relay.Constant": [{"dtype":"int64","shape":[3],"data":"AAAAAAAAAAACAAAAAAAAAAQAAAAAAAAA"}]}
)");
}

TEST(DynamicToStatic, UnsqueezeAxesBecomeExpandDimsInOrder) {
  expect_pass_result(
      "DynamicToStatic",
      std::string("def @main(%x: Tensor[(3), float32]) { dyn.expand_dims(%x, meta[relay.Constant][3]) }") + kMetadata,
      R"(def @main(%x: Tensor[(3), float32]) -> Tensor[(1, 3, 1), float32] {
  %0 = expand_dims(%x, axis=0, num_newaxis=1);
  expand_dims(%0, axis=2, num_newaxis=1)
})");
}

// Run-time operands stay, and so do known ones the kernel would refuse (a repeated axis).
TEST(DynamicToStatic, UnknownOrInvalidOperandsStay) {
  std::string before = std::string(R"(def @main(%x: Tensor[(2, 3), float32], %s: Tensor[(2), int64]) {
  %0 = dyn.reshape(%x, %s);
  %1 = dyn.expand_dims(%x, meta[relay.Constant][1]);
  (%0, %1)
})") + kMetadata;
  IRModule got = run_pass("DynamicToStatic", before);
  std::string text = print_module(got);
  EXPECT_NE(text.find("dyn.reshape(%x, %s)"), std::string::npos) << text;
  EXPECT_NE(text.find("dyn.expand_dims(%x, meta"), std::string::npos) << text;
}

// Split sizes, a one-hot depth and resize scales known now give the static ops; a split
// along an axis of unknown extent stays (the sizes' sum cannot be checked).
TEST(DynamicToStatic, SplitOneHotAndResizeOperands) {
  expect_pass_result("DynamicToStatic", R"(def @main(%x: Tensor[(5, 2), float32], %i: Tensor[(3), int64]) {
  %0 = dyn.split(%x, meta[relay.Constant][0], axis=0);
  %1 = dyn.one_hot(%i, 1f, 0f, 4i64, axis=-1, dtype="float32");
  (%0, %1)
}
#[metadata]
{"relay.Constant": [{"dtype":"int64","shape":[2],"data":"AgAAAAAAAAADAAAAAAAAAA=="}]}
)",
                     R"(def @main(%x: Tensor[(5, 2), float32], %i: Tensor[(3), int64]) {
  %0 = split(%x, indices_or_sections=[2], axis=0);
  %1 = one_hot(%i, 1f, 0f, depth=4, axis=-1, dtype="float32");
  (%0, %1)
})");
  IRModule got = run_pass("DynamicToStatic", R"(def @main(%x: Tensor[(?, 2), float32]) {
  dyn.split(%x, meta[relay.Constant][0], axis=0)
}
#[metadata]
{"relay.Constant": [{"dtype":"int64","shape":[2],"data":"AgAAAAAAAAADAAAAAAAAAA=="}]}
)");
  EXPECT_NE(print_module(got).find("dyn.split"), std::string::npos) << print_module(got);
}

TEST(DynamicToStatic, ResizeScalesBecomeSizeAndScales) {
  IRModule got = run_pass("DynamicToStatic", R"(def @main(%x: Tensor[(1, 1, 2, 4), float32]) {
  dyn.resize2d(%x, meta[relay.Constant][0], meta[relay.Constant][1], meta[relay.Constant][2], method="nearest_neighbor")
}
#[metadata]
{"relay.Constant": [{"dtype":"float32","shape":[0],"data":""},
 {"dtype":"float32","shape":[4],"data":"AACAPwAAgD8AAABAAAAAPw=="},
 {"dtype":"int64","shape":[0],"data":""}]}
)");
  std::string text = print_module(got);
  EXPECT_NE(text.find("-> Tensor[(1, 1, 4, 2), float32]"), std::string::npos) << text;
  EXPECT_NE(text.find("image.resize2d(%x, size=[4, 2]"), std::string::npos) << text;
  EXPECT_NE(text.find("scales=[2f, 0.5f]"), std::string::npos) << text;
}

NDArray ints(const std::vector<int64_t>& v) {
  return NDArray::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

// One dyn call with valid operands drawn from `gen`, on data of shape (2, 3, 4).
Expr random_dyn_call(const Var& x, std::mt19937& gen) {
  auto pick = [&](int64_t n) { return static_cast<int64_t>(gen() % static_cast<unsigned>(n)); };
  switch (pick(14)) {
    case 0: return call_op("dyn.reshape", {x, make_constant(ints({pick(2) ? 0 : 2, -1, 2}))}, DynReshapeAttrs{});
    case 1:
      return call_op("dyn.strided_slice", {x, make_constant(ints({pick(3) - 1})), make_constant(ints({4 - pick(6)})),
                                           make_constant(ints({pick(3)})), make_constant(ints({pick(2) ? 1 : -1}))});
    case 2: return call_op("dyn.broadcast_to", {x, make_constant(ints({pick(2) + 1, 1, 3, 1}))});
    case 3: return call_op("dyn.tile", {x, make_constant(ints({pick(2) + 1, 1, pick(3) + 1}))});
    case 4: {
      DynPadAttrs attrs;
      attrs.pad_mode = pick(2) ? "edge" : "constant";
      return call_op(
          "dyn.pad",
          {x, make_constant(ints({pick(2), 0, 1, 0, pick(3), 0})), make_constant(NDArray::scalar(DType::kFloat32, 5))},
          attrs);
    }
    case 5: {
      DynTopKAttrs attrs;
      attrs.axis = pick(3);
      attrs.is_ascend = pick(2) == 1;
      return make_tuple_get_item(call_op("dyn.topk", {x, make_constant(ints({1 + pick(2)}))}, attrs),
                                 static_cast<int>(pick(2)));
    }
    case 6: return call_op("dyn.expand_dims", {x, make_constant(ints({pick(4), -1}))});
    case 7:
      return call_op("dyn.squeeze", {call_op("expand_dims", {x}, ExpandDimsAttrs{.axis = 1, .num_newaxis = 1}),
                                     make_constant(ints({1}))});
    case 8: {
      DynCumsumAttrs attrs;
      attrs.exclusive = pick(2) == 1;
      return call_op("dyn.cumsum", {x, make_constant(ints({pick(6) - 3}))}, attrs);
    }
    case 9: {
      DynTriluAttrs attrs;
      attrs.upper = pick(2) == 1;
      return call_op("dyn.trilu", {x, make_constant(NDArray::from_vector<int64_t>({}, {pick(7) - 3}))}, attrs);
    }
    case 11: {
      const int64_t first = pick(5);
      return make_tuple_get_item(
          call_op("dyn.split", {x, make_constant(ints({first, 4 - first}))}, DynSplitAttrs{.axis = -1}),
          static_cast<int>(pick(2)));
    }
    case 12: {
      OneHotAxisAttrs attrs;
      attrs.axis = pick(4) - 1;
      Expr indices = call_op("cast", {x}, CastAttrs{.dtype = "int64"});
      return call_op("dyn.one_hot",
                     {indices, make_constant(NDArray::scalar(DType::kFloat32, 1)),
                      make_constant(NDArray::scalar(DType::kFloat32, -1)), make_constant(ints({2 + pick(3)}))},
                     attrs);
    }
    case 13: {
      ResizeMethodAttrs method;
      method.method = pick(2) ? "linear" : "nearest_neighbor";
      ReshapeAttrs image;
      image.newshape = {1, 2, 3, 4};
      Expr data = call_op("reshape", {x}, image);
      NDArray none_f = NDArray::empty({0}, DType::kFloat32), none_i = NDArray::empty({0}, DType::kInt64);
      NDArray scales = NDArray::from_vector<float>({4}, {1, 1, 2, 0.5f});
      bool by_sizes = pick(2) == 1;
      return call_op("dyn.resize2d",
                     {data, make_constant(none_f), make_constant(by_sizes ? none_f : scales),
                      make_constant(by_sizes ? ints({1, 2, 5, 3}) : none_i)},
                     method);
    }
    default: {
      DynReduceAttrs attrs;
      attrs.reducer = pick(2) ? "sum" : "max";
      attrs.keepdims = pick(2) == 1;
      return call_op("dyn.reduce", {x, make_constant(ints({pick(3) - 3}))}, attrs);
    }
  }
}

TEST(DynamicToStaticProperty, KnownOperandsGiveIdenticalResultsAndNoDynCalls) {
  for (unsigned seed = 0; seed < 80; ++seed) {
    std::mt19937 gen(seed);
    Var x = make_var("x", tensor_type({2, 3, 4}, DType::kFloat32));
    IRModule mod;
    mod.add("main", make_function({x}, random_dyn_call(x, gen)));
    NDArray data = NDArray::empty({2, 3, 4}, DType::kFloat32);
    std::uniform_real_distribution<double> value(-3, 3);
    for (int64_t i = 0; i < data.numel(); ++i) data.set(i, value(gen));
    std::string what = "seed " + std::to_string(seed) + ": " + print_module(mod);
    std::vector<NDArray> want = interpret(mod, "main", {Value(data)}).flatten();
    IRModule out = run_passes(mod, {"DynamicToStatic"});
    std::vector<NDArray> got = interpret(out, "main", {Value(data)}).flatten();
    ASSERT_EQ(want.size(), got.size()) << what;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(want[i].same_as(got[i])) << what;
    EXPECT_EQ(print_module(out).find("dyn."), std::string::npos) << what << "\nafter:\n" << print_module(out);
  }
}

}  // namespace
}  // namespace kiln::testing
