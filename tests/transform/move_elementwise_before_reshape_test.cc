// MoveElementwiseBeforeReshape: golden before/after IR (torch's MultiheadAttention QKV bias after the
// reshape, the bias on either side, a ConvNeXt MLP's GELU between the reshapes around two
// products, reshapes and ops it must leave alone) and property tests: the interpreter's results
// before and after are equal on random data.
#include <gtest/gtest.h>

#include <string>

#include "kiln/interp/interpreter.h"
#include "op/numpy_ref.h"
#include "transform/pass_test_util.h"

namespace kiln::testing {
namespace {

// x (5, 6) times w (12, 6)^T reshaped to `shape`, then add(`lhs`, `rhs`) with %1 the reshape.
std::string projection(const std::string& shape, const std::string& bias, const std::string& lhs,
                       const std::string& rhs) {
  return "def @main(%x: Tensor[(5, 6), float32], %w: Tensor[(12, 6), float32], %b: Tensor[(" + bias +
         "), float32]) {\n  %0 = nn.dense(%x, %w); %1 = reshape(%0, newshape=[" + shape + "]); add(" + lhs + ", " +
         rhs + ")\n}";
}

const char* const kParams = "%x: Tensor[(5, 6), float32], %w: Tensor[(12, 6), float32], %b: Tensor[(12), float32]";

TEST(MoveElementwiseBeforeReshape, QkvBiasMovesBeforeTheReshape) {
  expect_pass_result("MoveElementwiseBeforeReshape", projection("5, 1, 12", "12", "%b", "%1"),
                     std::string("def @main(") + kParams +
                         ") { %0 = nn.dense(%x, %w); %1 = add(%b, %0); reshape(%1, newshape=[5, 1, 12]) }");
  expect_pass_result("MoveElementwiseBeforeReshape", projection("1, 5, 12", "12", "%1", "%b"),
                     std::string("def @main(") + kParams +
                         ") { %0 = nn.dense(%x, %w); %1 = add(%0, %b); reshape(%1, newshape=[1, 5, 12]) }");
}

TEST(MoveElementwiseBeforeReshape, BiasMovesWithARunTimeAxis) {
  // An encoder exported with a dynamic sequence axis: only the last axis need be static.
  expect_pass_result(
      "MoveElementwiseBeforeReshape",
      "def @main(%x: Tensor[(?, 6), float32], %w: Tensor[(12, 6), float32], %b: Tensor[(12), float32]) {\n"
      "  %0 = nn.dense(%x, %w); %1 = reshape(%0, newshape=[-1, 1, 12]); add(%b, %1)\n}",
      "def @main(%x: Tensor[(?, 6), float32], %w: Tensor[(12, 6), float32], %b: Tensor[(12), float32]) {\n"
      "  %0 = nn.dense(%x, %w); %1 = add(%b, %0); reshape(%1, newshape=[-1, 1, 12])\n}");
}

TEST(MoveElementwiseBeforeReshape, LeavesOtherAddsAlone) {
  for (const std::string& text : {
           projection("5, 2, 6", "6", "%b", "%1"),             // the reshape splits the last axis
           projection("5, 1, 12", "5, 1, 12", "%b", "%1"),     // the bias varies along other axes
           projection("5, 1, 12", "1, 1, 1, 12", "%b", "%1"),  // the bias widens the sum
       }) {
    SCOPED_TRACE(text);
    const std::string printed = print_module(run_pass("MoveElementwiseBeforeReshape", text));
    EXPECT_EQ(printed.find("add(%b, %0)"), std::string::npos) << printed;
  }
  // Not a product under the reshape.
  const std::string relu =
      "def @main(%x: Tensor[(5, 12), float32], %b: Tensor[(12), float32]) {\n"
      "  %0 = nn.relu(%x); %1 = reshape(%0, newshape=[5, 1, 12]); add(%b, %1)\n}";
  EXPECT_EQ(print_module(run_pass("MoveElementwiseBeforeReshape", relu)).find("add(%b, %0)"), std::string::npos);
}

// ConvNeXt's MLP as PackDenseWeights leaves rows of fewer than 32: product, reshape to the image,
// bias and erf-GELU, reshape back to rows for the second product.
const char* const kGeluBetweenProducts =
    "def @main(%x: Tensor[(4, 6), float32], %w: Tensor[(12, 6), float32], %b: Tensor[(12), float32], "
    "%w2: Tensor[(5, 12), float32]) {\n"
    "  %0 = nn.dense(%x, %w); %1 = reshape(%0, newshape=[1, 2, 2, 12]); %2 = add(%b, %1);\n"
    "  %3 = divide(%2, 1.4142135f); %4 = erf(%3); %5 = add(%4, 1f); %6 = multiply(%2, %5);\n"
    "  %7 = multiply(%6, 0.5f); %8 = reshape(%7, newshape=[-1, 12]); nn.dense(%8, %w2)\n}";

TEST(MoveElementwiseBeforeReshape, GeluJoinsTheProductAndTheReshapesCancel) {
  // Compared as text (with the types InferType gives the expected module): %1 stays shared.
  const std::string after =
      "def @main(%x: Tensor[(4, 6), float32], %w: Tensor[(12, 6), float32], %b: Tensor[(12), float32], "
      "%w2: Tensor[(5, 12), float32]) {\n"
      "  %0 = nn.dense(%x, %w); %1 = add(%b, %0); %2 = divide(%1, 1.4142135f); %3 = erf(%2);\n"
      "  %4 = add(%3, 1f); %5 = multiply(%1, %4); %6 = multiply(%5, 0.5f); nn.dense(%6, %w2)\n}";
  EXPECT_EQ(squash(print_module(run_pass("MoveElementwiseBeforeReshape", kGeluBetweenProducts))),
            squash(print_module(run_pass("InferType", after))));
}

TEST(MoveElementwiseBeforeReshape, LeavesOtherElementwiseOpsAlone) {
  const std::string head =
      "def @main(%x: Tensor[(4, 6), float32], %w: Tensor[(12, 6), float32], %y: Tensor[(1, 2, 2, 12), float32], "
      "%v: Tensor[(2, 24), float32]) {\n  %0 = nn.dense(%x, %w); %1 = reshape(%0, newshape=[1, 2, 2, 12]);\n  ";
  for (const std::string& body : {
           std::string("multiply(%1, %y)"),                                            // a tensor that is no reshape
           std::string("%2 = reshape(%v, newshape=[1, 2, 2, 12]); multiply(%1, %2)"),  // reshapes of two shapes
           std::string("%2 = nn.relu(%y); %3 = reshape(%2, newshape=[4, 12]); sigmoid(%3)"),  // no product under it
       }) {
    SCOPED_TRACE(body);
    const std::string text = head + body + "\n}";
    EXPECT_EQ(squash(print_module(run_pass("MoveElementwiseBeforeReshape", text))),
              squash(print_module(run_pass("InferType", text))));
  }
}

TEST(MoveElementwiseBeforeReshapeProperty, GeluGivesTheSameResults) {
  IRModule mod = parse_module(kGeluBetweenProducts);
  IRModule moved = run_pass("MoveElementwiseBeforeReshape", kGeluBetweenProducts);
  ASSERT_EQ(print_module(moved).find("reshape"), std::string::npos) << print_module(moved);
  const std::vector<Value> args = {Value(sample_tensor({4, 6}, 1)), Value(sample_tensor({12, 6}, 2)),
                                   Value(sample_tensor({12}, 3)), Value(sample_tensor({5, 12}, 4))};
  NDArray want = interpret(mod, "main", args).tensor(), got = interpret(moved, "main", args).tensor();
  ASSERT_EQ(want.shape(), got.shape());
  for (int64_t i = 0; i < want.numel(); ++i) EXPECT_EQ(got.at(i), want.at(i));
}

TEST(MoveElementwiseBeforeReshapeProperty, InterpreterGivesTheSameResults) {
  uint32_t seed = 9;
  const std::pair<const char*, const char*> cases[] = {
      {"5, 1, 12", "12"}, {"1, 5, 12", "1, 12"}, {"5, 12", "1, 12"}, {"5, 1, 1, 12", "1, 12"}};
  for (const auto& [shape, bias] : cases) {
    for (bool bias_first : {true, false}) {
      const std::string text = projection(shape, bias, bias_first ? "%b" : "%1", bias_first ? "%1" : "%b");
      SCOPED_TRACE(text);
      IRModule mod = parse_module(text);
      IRModule moved = run_pass("MoveElementwiseBeforeReshape", text);
      const std::string printed = print_module(moved);
      ASSERT_NE(printed.find(bias_first ? "add(%b, %0)" : "add(%0, %b)"), std::string::npos) << printed;
      const TensorTypeNode* bt = as_tensor(mod.lookup("main")->params[2]->type_annotation);
      const std::vector<Value> args = {Value(sample_tensor({5, 6}, seed++)), Value(sample_tensor({12, 6}, seed++)),
                                       Value(sample_tensor(bt->shape, seed++))};
      NDArray want = interpret(mod, "main", args).tensor(), got = interpret(moved, "main", args).tensor();
      ASSERT_EQ(want.shape(), got.shape());
      for (int64_t i = 0; i < want.numel(); ++i) EXPECT_EQ(got.at(i), want.at(i));
    }
  }
}

}  // namespace
}  // namespace kiln::testing
