// SimplifyExpr: before/after IR text for each rewrite and for what must stay, and the
// interpreter's results before and after the pass, bit for bit, on small modules and ONNX
// models.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "frontend/onnx_test_util.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/structural.h"
#include "kiln/transform/pass.h"
#include "op/numpy_ref.h"
#include "transform/pass_test_util.h"

namespace kiln {
namespace {

using testing::expect_pass_result;

void expect_unchanged(const std::string& text) { expect_pass_result("SimplifyExpr", text, text); }

TEST(SimplifyExpr, MergesReshapeChainsIntoOneReshape) {
  expect_pass_result("SimplifyExpr", R"(
def @main(%x: Tensor[(2, 3, 4), float32]) { %0 = reshape(%x, newshape=[6, -1]); reshape(%0, newshape=[0, 2, 2]) }
)",
                     R"(
def @main(%x: Tensor[(2, 3, 4), float32]) { reshape(%x, newshape=[6, 2, 2], allowzero=0) }
)");
}

TEST(SimplifyExpr, MergesSqueezeAndExpandDimsIntoOneReshape) {
  expect_pass_result("SimplifyExpr", R"(
def @main(%x: Tensor[(1, 3, 4), float32]) { %0 = squeeze(%x, axis=[0]); %1 = expand_dims(%0, axis=2); reshape(%1, newshape=[3, 2, 2]) }
)",
                     R"(
def @main(%x: Tensor[(1, 3, 4), float32]) { reshape(%x, newshape=[3, 2, 2], allowzero=0) }
)");
}

TEST(SimplifyExpr, KeepsZeroExtentsOfAMergedReshape) {
  expect_pass_result("SimplifyExpr", R"(
def @main(%x: Tensor[(0, 4), float32]) { %0 = reshape(%x, newshape=[2, 0, 2], allowzero=1); reshape(%0, newshape=[4, 0], allowzero=1) }
)",
                     R"(
def @main(%x: Tensor[(0, 4), float32]) { reshape(%x, newshape=[4, 0], allowzero=1) }
)");
}

TEST(SimplifyExpr, RemovesReshapesBackToTheInputShape) {
  expect_pass_result("SimplifyExpr", R"(
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = reshape(%x, newshape=[6]); %1 = reshape(%0, newshape=[2, 3]);
  %2 = reshape(%1, newshape=[2, -1]); %3 = expand_dims(%2, axis=0, num_newaxis=0);
  %4 = squeeze(%3, axis=[]); %5 = expand_dims(%4, axis=1); squeeze(%5, axis=[1])
}
)",
                     R"(
def @main(%x: Tensor[(2, 3), float32]) { %x }
)");
}

TEST(SimplifyExpr, RemovesNoOpSqueezeAndExpandDimsOfUnknownDims) {
  expect_pass_result("SimplifyExpr", R"(
def @main(%x: Tensor[(?, 3), float32]) { %0 = squeeze(%x, axis=[]); expand_dims(%0, axis=1, num_newaxis=0) }
)",
                     R"(
def @main(%x: Tensor[(?, 3), float32]) { %x }
)");
}

TEST(SimplifyExpr, KeepsReshapesThatChangeTheShapeOrAreNotKnownToBeNoOps) {
  expect_unchanged(R"(
def @main(%x: Tensor[(2, 3), float32]) { reshape(%x, newshape=[3, 2]) }
)");
  // A '?' dim that is 1 at run time is removed, though the type keeps the rank.
  expect_unchanged(R"(
def @main(%x: Tensor[(?, 3), float32]) { squeeze(%x) }
)");
  // The merged reshape would need the static shape of the source.
  expect_unchanged(R"(
def @main(%x: Tensor[(?, 4), float32]) { %0 = reshape(%x, newshape=[-1]); reshape(%0, newshape=[-1, 2]) }
)");
}

TEST(SimplifyExpr, ComposesTransposes) {
  expect_pass_result("SimplifyExpr", R"(
def @main(%x: Tensor[(2, 3, 4), float32]) { %0 = transpose(%x, axes=[1, 2, 0]); transpose(%0, axes=[0, 2, 1]) }
)",
                     R"(
def @main(%x: Tensor[(2, 3, 4), float32]) { transpose(%x, axes=[1, 0, 2]) }
)");
}

TEST(SimplifyExpr, RemovesTransposesThatCancelOrKeepTheOrder) {
  expect_pass_result("SimplifyExpr", R"(
def @main(%x: Tensor[(2, 3, 4), float32]) {
  %0 = transpose(%x, axes=[1, 2, 0]); %1 = transpose(%0, axes=[2, 0, 1]);
  %2 = transpose(%1, axes=[0, -2, -1]); %3 = transpose(%2); transpose(%3)
}
)",
                     R"(
def @main(%x: Tensor[(2, 3, 4), float32]) { %x }
)");
}

TEST(SimplifyExpr, KeepsNonIdentityTransposes) {
  expect_unchanged(R"(
def @main(%x: Tensor[(2, 3, 4), float32]) { %0 = transpose(%x, axes=[1, 0, 2]); exp(%0) }
)");
  expect_unchanged(R"(
def @main(%x: Tensor[(2, 3), float32]) { transpose(%x) }
)");
}

TEST(SimplifyExpr, RemovesMultiplicationAndDivisionByOne) {
  expect_pass_result("SimplifyExpr", R"(
def @main(%x: Tensor[(2, 3), float32], %i: Tensor[(3), int32]) {
  %0 = multiply(%x, 1f); %1 = multiply(1f, %0); %2 = divide(%1, 1f);
  %3 = multiply(%2, ones(shape=[1, 3], dtype="float32"));
  %4 = multiply(%i, 1); %5 = divide(%4, 1);
  (%3, %5)
}
)",
                     R"(
def @main(%x: Tensor[(2, 3), float32], %i: Tensor[(3), int32]) { (%x, %i) }
)");
}

TEST(SimplifyExpr, KeepsBroadcastsByOneThatChangeTheShapeAndOtherFactors) {
  expect_unchanged(R"(
def @main(%x: Tensor[(3), float32]) { multiply(%x, ones(shape=[2, 3], dtype="float32")) }
)");
  expect_unchanged(R"(
def @main(%x: Tensor[(3), float32]) { %0 = multiply(%x, 2f); divide(1f, %0) }
)");
}

TEST(SimplifyExpr, RemovesAdditionOfZeroOnlyWhereExact) {
  // x - +0.0 and x + -0.0 are x for every float x; integers have one zero.
  expect_pass_result("SimplifyExpr", R"(
def @main(%x: Tensor[(3), float32], %i: Tensor[(3), int64]) {
  %0 = subtract(%x, 0f); %1 = add(%0, -0f); %2 = add(-0f, %1);
  %3 = subtract(%2, zeros(shape=[3], dtype="float32"));
  %4 = add(%i, 0i64); %5 = add(0i64, %4); %6 = subtract(%5, zeros(shape=[3], dtype="int64"));
  (%3, %6)
}
)",
                     R"(
def @main(%x: Tensor[(3), float32], %i: Tensor[(3), int64]) { (%x, %i) }
)");
}

TEST(SimplifyExpr, KeepsFloatAdditionOfPositiveZeroAndSubtractionOfNegativeZero) {
  // -0.0 + +0.0 is +0.0 and -0.0 - -0.0 is +0.0.
  expect_unchanged(R"(
def @main(%x: Tensor[(3), float32]) { %0 = add(%x, 0f); %1 = add(0f, %0); %2 = subtract(%1, -0f); %3 = add(%2, zeros(shape=[3], dtype="float32")); subtract(0f, %3) }
)");
  expect_unchanged(R"(
def @main(%x: Tensor[(3), int32]) { add(%x, zeros(shape=[2, 3], dtype="int32")) }
)");
}

TEST(SimplifyExpr, RemovesCastsToTheSameDtype) {
  expect_pass_result("SimplifyExpr", R"(
def @main(%x: Tensor[(3), int8]) { %0 = cast(%x, dtype="int8"); exp(cast(%0, dtype="float32")) }
)",
                     R"(
def @main(%x: Tensor[(3), int8]) { exp(cast(%x, dtype="float32")) }
)");
}

TEST(SimplifyExpr, MergesCastsThroughADtypeThatHoldsEveryValue) {
  expect_pass_result("SimplifyExpr", R"(
def @main(%a: Tensor[(3), int8], %b: Tensor[(3), float16], %c: Tensor[(3), uint16], %d: Tensor[(3), int16]) {
  %0 = cast(%a, dtype="int32"); %1 = cast(%0, dtype="int64");
  %2 = cast(%b, dtype="float32"); %3 = cast(%2, dtype="float64"); %4 = cast(%3, dtype="int8");
  %5 = cast(%c, dtype="int32"); %6 = cast(%5, dtype="uint16");
  %7 = cast(%d, dtype="float32"); %8 = cast(%7, dtype="int64");
  %9 = cast(%a, dtype="float16"); %10 = cast(%9, dtype="bool");
  (%1, %4, %6, %8, %10)
}
)",
                     R"(
def @main(%a: Tensor[(3), int8], %b: Tensor[(3), float16], %c: Tensor[(3), uint16], %d: Tensor[(3), int16]) {
  (cast(%a, dtype="int64"), cast(%b, dtype="int8"), %c, cast(%d, dtype="int64"), cast(%a, dtype="bool"))
}
)");
}

TEST(SimplifyExpr, KeepsLossyCastChains) {
  // float32 -> int32 truncates; int32 -> float32 rounds above 2^24; int16 -> float32 ->
  // int8 saturates where int16 -> int8 wraps; int8 -> uint8 -> int32 wraps negatives.
  expect_unchanged(R"(
def @main(%x: Tensor[(3), float32], %i: Tensor[(3), int32], %s: Tensor[(3), int16], %b: Tensor[(3), int8]) {
  %0 = cast(%x, dtype="int32"); %1 = cast(%0, dtype="float32");
  %2 = cast(%i, dtype="float32"); %3 = cast(%2, dtype="int32");
  %4 = cast(%s, dtype="float32"); %5 = cast(%4, dtype="int8");
  %6 = cast(%b, dtype="uint8"); %7 = cast(%6, dtype="int32");
  %8 = cast(%x, dtype="float16"); %9 = cast(%8, dtype="float32");
  (%1, %3, %5, %7, %9)
}
)");
}

TEST(SimplifyExpr, KeepsSharedNodesSharedAndSourcesKept) {
  IRModule m = testing::run_pass("SimplifyExpr", R"(
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = transpose(%x); %1 = transpose(%0); %2 = multiply(%1, 1f);
  %3 = reshape(%2, newshape=[3, 2]); %4 = reshape(%3, newshape=[6]);
  add(%4, %4)
}
)");
  const auto* add = as<CallNode>(m.find("main") ? (*m.find("main"))->body : nullptr);
  ASSERT_TRUE(add);
  EXPECT_EQ(add->args[0], add->args[1]);
  EXPECT_EQ(add->args[0]->source, "line 4:43");
}

// ---- The interpreter gives the same bits before and after the pass ----

bool same_bits(const Value& a, const Value& b) {
  std::vector<NDArray> x = a.flatten(), y = b.flatten();
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].dtype() != y[i].dtype() || x[i].shape() != y[i].shape()) return false;
    if (x[i].nbytes() && std::memcmp(x[i].raw(), y[i].raw(), x[i].nbytes()) != 0) return false;
  }
  return true;
}

// Inputs with negative zeros, values beyond the small integer ranges and fractions.
std::vector<Value> inputs_for(const Function& fn, uint32_t seed) {
  std::vector<Value> args;
  for (const Var& p : fn->params) {
    const TensorTypeNode& t = expect_tensor(p->type_annotation, p->name);
    NDArray a = testing::sample_tensor(t.shape, seed++, -400.0, 400.0, t.dtype);
    if (is_float(t.dtype) && a.numel() > 0) {
      NDArray b = NDArray::from_doubles(t.shape, t.dtype, std::vector<double>(static_cast<size_t>(a.numel()), -0.0));
      for (int64_t i = 1; i < a.numel(); ++i) store_from_double(b.raw(), t.dtype, static_cast<size_t>(i), a.at(i));
      a = b;
    }
    args.emplace_back(a);
  }
  return args;
}

void expect_same_results(const IRModule& before, int seeds = 3) {
  IRModule after = run_passes(before, {"SimplifyExpr"});
  const Function& fn = *before.find("main");
  for (int s = 0; s < seeds; ++s) {
    std::vector<Value> args = inputs_for(fn, static_cast<uint32_t>(17 * s + 1));
    EXPECT_TRUE(same_bits(interpret(before, "main", args), interpret(after, "main", args)))
        << "seed " << s << " after:\n"
        << print_module(after);
  }
}

TEST(SimplifyExpr, SmallModulesGiveTheSameResults) {
  const char* modules[] = {
      R"(def @main(%x: Tensor[(2, 3, 4), float32]) {
        %0 = transpose(%x, axes=[1, 2, 0]); %1 = transpose(%0, axes=[0, 2, 1]); %2 = reshape(%1, newshape=[-1]);
        %3 = reshape(%2, newshape=[4, 6]); %4 = multiply(%3, 1f); %5 = subtract(%4, 0f); %6 = add(%5, -0f);
        %7 = add(%6, 0f); %8 = expand_dims(%7, axis=0); %9 = squeeze(%8, axis=[0]); (%9, %7, %5) })",
      R"(def @main(%x: Tensor[(4), float32], %i: Tensor[(4), int16], %b: Tensor[(4), int8]) {
        %0 = cast(%x, dtype="float64"); %1 = cast(%0, dtype="int8"); %2 = cast(%i, dtype="int64");
        %3 = cast(%2, dtype="uint8"); %4 = cast(%i, dtype="float32"); %5 = cast(%4, dtype="int8");
        %6 = cast(%b, dtype="bfloat16"); %7 = cast(%6, dtype="int32"); %8 = cast(%b, dtype="int8");
        %9 = cast(%x, dtype="float16"); %10 = cast(%9, dtype="float32"); %11 = cast(%10, dtype="float64");
        %12 = cast(%11, dtype="bool"); %13 = cast(%i, dtype="uint32"); %14 = cast(%13, dtype="int64");
        (%1, %3, %5, %7, %8, %12, %14, %11) })",
      R"(def @main(%x: Tensor[(3, 1, 2), float16], %i: Tensor[(3, 2), int32]) {
        %0 = squeeze(%x); %1 = multiply(%0, ones(shape=[2], dtype="float16")); %2 = add(%1, zeros(shape=[3, 2], dtype="float16"));
        %3 = add(%i, 0); %4 = divide(%3, 1); %5 = transpose(%4); %6 = transpose(%5, axes=[1, 0]); (%2, %6, %1) })",
  };
  for (const char* text : modules) expect_same_results(parse_module(text));
}

TEST(SimplifyExpr, OnnxModelsGiveTheSameResults) {
  using testing::OnnxModelBuilder;
  {
    OnnxModelBuilder b;
    b.input("x", {2, 3, 4});
    b.initializer("perm_shape", testing::ints({4, 6}));
    b.initializer("one", NDArray::from_doubles({1}, DType::kFloat32, std::vector<double>{1.0}));
    b.initializer("zero", NDArray::from_doubles({4, 6}, DType::kFloat32, std::vector<double>(24, 0.0)));
    testing::set_attr(b.node("Transpose", {"x"}, {"t0"}), "perm", std::vector<int64_t>{2, 0, 1});
    testing::set_attr(b.node("Transpose", {"t0"}, {"t1"}), "perm", std::vector<int64_t>{1, 2, 0});
    b.node("Reshape", {"t1", "perm_shape"}, {"r0"});
    b.node("Mul", {"r0", "one"}, {"m0"});
    b.node("Sub", {"m0", "zero"}, {"s0"});
    b.node("Add", {"s0", "zero"}, {"a0"});
    testing::set_attr(b.node("Cast", {"a0"}, {"c0"}), "to", int64_t{onnx::TensorProto::DOUBLE});
    testing::set_attr(b.node("Cast", {"c0"}, {"c1"}), "to", int64_t{onnx::TensorProto::INT8});
    b.output("a0", {4, 6});
    b.output("c1", {4, 6}, onnx::TensorProto::INT8);
    OnnxImportOptions options;
    options.freeze_params = true;
    IRModule m = from_onnx_bytes(b.bytes(), options).module;
    expect_same_results(m);
    std::string after = print_module(run_passes(m, {"SimplifyExpr"}));
    EXPECT_EQ(after.find("transpose"), std::string::npos) << after;
    EXPECT_EQ(after.find("multiply"), std::string::npos) << after;
  }
  {
    OnnxModelBuilder b(13);
    b.input("x", {1, 3, 1, 4});
    b.initializer("axes0", testing::ints({0, 2}));
    b.initializer("axes1", testing::ints({0}));
    b.node("Squeeze", {"x", "axes0"}, {"q0"});
    b.node("Unsqueeze", {"q0", "axes1"}, {"u0"});
    testing::set_attr(b.node("Transpose", {"u0"}, {"t0"}), "perm", std::vector<int64_t>{0, 2, 1});
    b.node("Relu", {"t0"}, {"y"});
    b.output("y", {1, 4, 3});
    OnnxImportOptions options;
    options.freeze_params = true;
    expect_same_results(from_onnx_bytes(b.bytes(), options).module);
  }
}

}  // namespace
}  // namespace kiln
