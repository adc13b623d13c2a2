// MoveBiasBeforeReshape: golden before/after IR (torch's MultiheadAttention QKV bias after the
// reshape, the bias on either side, reshapes and biases it must leave alone) and a property test:
// the interpreter's results before and after are equal on random data.
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

TEST(MoveBiasBeforeReshape, QkvBiasMovesBeforeTheReshape) {
  expect_pass_result("MoveBiasBeforeReshape", projection("5, 1, 12", "12", "%b", "%1"),
                     std::string("def @main(") + kParams +
                         ") { %0 = nn.dense(%x, %w); %1 = add(%b, %0); reshape(%1, newshape=[5, 1, 12]) }");
  expect_pass_result("MoveBiasBeforeReshape", projection("1, 5, 12", "12", "%1", "%b"),
                     std::string("def @main(") + kParams +
                         ") { %0 = nn.dense(%x, %w); %1 = add(%0, %b); reshape(%1, newshape=[1, 5, 12]) }");
}

TEST(MoveBiasBeforeReshape, LeavesOtherAddsAlone) {
  for (const std::string& text : {
           projection("5, 2, 6", "6", "%b", "%1"),             // the reshape splits the last axis
           projection("5, 1, 12", "5, 1, 12", "%b", "%1"),     // the bias varies along other axes
           projection("5, 1, 12", "1, 1, 1, 12", "%b", "%1"),  // the bias widens the sum
       }) {
    SCOPED_TRACE(text);
    const std::string printed = print_module(run_pass("MoveBiasBeforeReshape", text));
    EXPECT_EQ(printed.find("add(%b, %0)"), std::string::npos) << printed;
  }
  // Not a product under the reshape.
  const std::string relu =
      "def @main(%x: Tensor[(5, 12), float32], %b: Tensor[(12), float32]) {\n"
      "  %0 = nn.relu(%x); %1 = reshape(%0, newshape=[5, 1, 12]); add(%b, %1)\n}";
  EXPECT_EQ(print_module(run_pass("MoveBiasBeforeReshape", relu)).find("add(%b, %0)"), std::string::npos);
}

TEST(MoveBiasBeforeReshapeProperty, InterpreterGivesTheSameResults) {
  uint32_t seed = 9;
  const std::pair<const char*, const char*> cases[] = {
      {"5, 1, 12", "12"}, {"1, 5, 12", "1, 12"}, {"5, 12", "1, 12"}, {"5, 1, 1, 12", "1, 12"}};
  for (const auto& [shape, bias] : cases) {
    for (bool bias_first : {true, false}) {
      const std::string text = projection(shape, bias, bias_first ? "%b" : "%1", bias_first ? "%1" : "%b");
      SCOPED_TRACE(text);
      IRModule mod = parse_module(text);
      IRModule moved = run_pass("MoveBiasBeforeReshape", text);
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
