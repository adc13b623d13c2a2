// specialize_inputs and the shape ops it relies on: a model imported with '?' dimensions,
// given static input shapes, becomes static in one DynamicToStatic run (dyn.shape_of and
// dyn.size fold to constants, and the dyn ops computed from them follow).
#include "kiln/transform/specialize_inputs.h"

#include <gtest/gtest.h>

#include <cstring>

#include "kiln/interp/interpreter.h"
#include "kiln/support/strings.h"
#include "transform/pass_test_util.h"

namespace kiln::testing {
namespace {

// Flatten as exporters write it: reshape to (Shape(x)[0], -1). The constant is [-1].
const char* kFlatten = R"(def @main(%x: Tensor[(?, 3, 4), float32]) {
  %0 = dyn.shape_of(%x);
  %1 = strided_slice(%0, begin=[0], end=[1], axes=[0]);
  %2 = concatenate((%1, meta[relay.Constant][0]), axis=0);
  dyn.reshape(%x, %2)
}
#[metadata]
{"relay.Constant": [{"dtype":"int64","shape":[1],"data":"//////////8="}]}
)";

TEST(ShapeOf, StaticDataFoldsToConstants) {
  expect_pass_result("DynamicToStatic", R"(def @main(%x: Tensor[(2, 5), float32]) {
  (dyn.shape_of(%x), dyn.size(%x))
})",
                     R"(def @main(%x: Tensor[(2, 5), float32]) {
  (meta[relay.Constant][0], 10i64)
}
#[metadata]
{"relay.Constant": [{"dtype":"int64","shape":[2],"data":"AgAAAAAAAAAFAAAAAAAAAA=="}]}
)");
}

TEST(ShapeOf, RunTimeDataStaysAndRunsInTheInterpreter) {
  IRModule mod = run_pass("DynamicToStatic", R"(def @main(%x: Tensor[(?, 5), float32]) {
  (dyn.shape_of(%x), dyn.size(%x))
})");
  EXPECT_NE(print_module(mod).find("dyn.shape_of(%x)"), std::string::npos);
  Value out = interpret(mod, "main", {Value(NDArray::empty({3, 5}, DType::kFloat32))});
  EXPECT_EQ(out.tuple()[0].tensor().to_ints(), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(out.tuple()[1].tensor().to_ints(), (std::vector<int64_t>{15}));
}

TEST(SpecializeInputs, ShapeArithmeticBecomesStaticInOneRun) {
  IRModule specialized = specialize_inputs(parse_module(kFlatten), {{"x", {4, 3, 4}}});
  IRModule got = run_passes(specialized, {"DynamicToStatic"});
  IRModule want = parse_module(R"(def @main(%x: Tensor[(4, 3, 4), float32]) -> Tensor[(4, 12), float32] {
  reshape(%x, newshape=[4, -1], allowzero=0)
})");
  EXPECT_TRUE(structural_equal(got, want)) << print_module(got);
}

TEST(SpecializeInputs, GivesTheSameValuesAsTheGenericModel) {
  IRModule generic = parse_module(kFlatten);
  IRModule fixed = run_passes(specialize_inputs(generic, {{"x", {2, 3, 4}}}), {"DynamicToStatic"});
  NDArray x = NDArray::empty({2, 3, 4}, DType::kFloat32);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i) * 0.5f;
  NDArray want = interpret(generic, "main", {Value(x)}).tensor();
  NDArray got = interpret(fixed, "main", {Value(x)}).tensor();
  ASSERT_EQ(got.shape(), (Shape{2, 12}));
  EXPECT_EQ(0, std::memcmp(got.raw(), want.raw(), want.nbytes()));
}

TEST(SpecializeInputs, ShapesThatDoNotFitAreErrorsNamingTheInput) {
  IRModule generic = parse_module(kFlatten);
  for (const Shape& bad : {Shape{4, 3}, Shape{4, 2, 4}, Shape{-2, 3, 4}}) {
    try {
      specialize_inputs(generic, {{"x", bad}});
      ADD_FAILURE() << "accepted " << shape_str(bad);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("input 'x' cannot take this shape"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(specialize_inputs(generic, {{"y", {1, 3, 4}}}), Error);
}

}  // namespace
}  // namespace kiln::testing
