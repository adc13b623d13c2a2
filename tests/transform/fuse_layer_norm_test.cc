// FuseLayerNorm: golden before/after IR (the opset-14 export of torch's nn.LayerNorm, the same
// without the multiply by gamma, chains it must leave alone) and a property test: the
// interpreter's results before and after agree within rounding on random data and shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kiln/interp/interpreter.h"
#include "op/numpy_ref.h"
#include "transform/pass_test_util.h"

namespace kiln::testing {
namespace {

// torch.nn.LayerNorm's export below opset 17, after SimplifyExpr, with `tail` after the divide.
// (epsilon is the float32 constant's value: 1e-05f is 9.999999747378752e-06.)
std::string decomposed(const std::string& shape, int64_t axis, const std::string& tail) {
  const std::string a = "axis=[" + std::to_string(axis) + "], keepdims=True";
  return "def @main(%x: Tensor[(" + shape + "), float32], %g: Tensor[(8), float32], %b: Tensor[(8), float32]) {\n" +
         "  %0 = mean(%x, " + a + "); %1 = subtract(%x, %0); %2 = power(%1, 2f); %3 = mean(%2, " + a +
         ");\n  %4 = add(%3, 1e-05f); %5 = sqrt(%4); %6 = divide(%1, %5); " + tail + "\n}";
}

const char* const kParams = "%x: Tensor[(2, 3, 8), float32], %g: Tensor[(8), float32], %b: Tensor[(8), float32]";

TEST(FuseLayerNorm, TorchLayerNormBecomesOneOp) {
  expect_pass_result(
      "FuseLayerNorm", decomposed("2, 3, 8", -1, "%7 = multiply(%6, %g); add(%7, %b)"),
      std::string("def @main(") + kParams +
          ") { nn.layer_norm(%x, %g, %b, axis=-1, epsilon=9.999999747378752e-06f, center=True, scale=True) }");
  // The axis written as the last one's index.
  expect_pass_result(
      "FuseLayerNorm", decomposed("2, 3, 8", 2, "%7 = multiply(%6, %g); add(%7, %b)"),
      std::string("def @main(") + kParams +
          ") { nn.layer_norm(%x, %g, %b, axis=-1, epsilon=9.999999747378752e-06f, center=True, scale=True) }");
}

TEST(FuseLayerNorm, WithoutGammaScaleIsOff) {
  IRModule got = run_pass("FuseLayerNorm", decomposed("2, 3, 8", -1, "add(%6, %b)"));
  const std::string printed = print_module(got);
  EXPECT_NE(printed.find("nn.layer_norm(%x, meta[relay.Constant][0]"), std::string::npos) << printed;
  EXPECT_NE(printed.find("scale=False"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("divide"), std::string::npos) << printed;
}

TEST(FuseLayerNorm, LeavesOtherChainsAlone) {
  for (const std::string& text : {
           decomposed("2, 8, 8", 1, "%7 = multiply(%6, %g); add(%7, %b)"),        // not the last axis
           decomposed("2, 3, 8", -1, "%7 = multiply(%6, %g); add(%7, %6)"),       // beta is not a vector
           decomposed("2, 3, 8", -1, "%7 = multiply(%6, %g); subtract(%7, %b)"),  // not an add
       }) {
    const std::string printed = print_module(run_pass("FuseLayerNorm", text));
    EXPECT_EQ(printed.find("nn.layer_norm"), std::string::npos) << printed;
  }
  // The mean is of another tensor than the one the deviation subtracts it from.
  const std::string other =
      "def @main(%x: Tensor[(2, 8), float32], %y: Tensor[(2, 8), float32], %b: Tensor[(8), float32]) {\n"
      "  %0 = mean(%y, axis=[-1], keepdims=True); %1 = subtract(%x, %0); %2 = power(%1, 2f);\n"
      "  %3 = mean(%2, axis=[-1], keepdims=True); %4 = add(%3, 1e-05f); %5 = sqrt(%4); %6 = divide(%1, %5);\n"
      "  add(%6, %b)\n}";
  EXPECT_EQ(print_module(run_pass("FuseLayerNorm", other)).find("nn.layer_norm"), std::string::npos);
}

TEST(FuseLayerNormProperty, InterpreterGivesTheSameResultsWithinRounding) {
  uint32_t seed = 5;
  for (const char* shape : {"2, 3, 8", "1, 8", "4, 1, 2, 8"}) {
    for (const char* tail : {"%7 = multiply(%6, %g); add(%7, %b)", "add(%6, %b)"}) {
      const std::string text = decomposed(shape, -1, tail);
      SCOPED_TRACE(text);
      IRModule mod = parse_module(text);
      IRModule fused = run_pass("FuseLayerNorm", text);
      ASSERT_NE(print_module(fused).find("nn.layer_norm"), std::string::npos);
      const TensorTypeNode* xt = as_tensor(mod.lookup("main")->params[0]->type_annotation);
      const std::vector<Value> args = {Value(sample_tensor(xt->shape, seed++, -4, 4)),
                                       Value(sample_tensor({8}, seed++)), Value(sample_tensor({8}, seed++))};
      NDArray want = interpret(mod, "main", args).tensor(), got = interpret(fused, "main", args).tensor();
      ASSERT_EQ(want.shape(), got.shape());
      for (int64_t i = 0; i < want.numel(); ++i) EXPECT_NEAR(got.at(i), want.at(i), 1e-5 * (1 + std::fabs(want.at(i))));
    }
  }
}

}  // namespace
}  // namespace kiln::testing
