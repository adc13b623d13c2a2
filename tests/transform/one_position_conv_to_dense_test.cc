// OnePositionConvToDense: golden before/after IR (a squeeze-excite convolution with a constant
// weight, batch 2; convolutions it must leave alone: a weight that is a parameter, two
// positions, groups, padding, a blocked layout) and a property test: the interpreter's results
// before and after are equal on random data.
#include <gtest/gtest.h>

#include <string>

#include "kiln/interp/interpreter.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/structural.h"
#include "kiln/ir/type_infer.h"
#include "kiln/transform/pass.h"
#include "op/numpy_ref.h"
#include "transform/pass_test_util.h"

namespace kiln::testing {
namespace {

std::string se_conv(const std::string& x, const std::string& w, const std::string& attrs = "") {
  return "def @main(%x: Tensor[(" + x + "), float32], %w: Tensor[(" + w + "), float32]) { nn.conv2d(%x, %w" +
         (attrs.empty() ? "" : ", " + attrs) + ") }";
}

TEST(OnePositionConvToDense, SqueezeExciteConvolutionBecomesADense) {
  const NDArray w = sample_tensor({4, 8, 1, 1}, 3);
  IRModule got = infer_types(one_position_conv_to_dense_pass(with_weight(se_conv("2, 8, 1, 1", "4, 8, 1, 1"), w)));
  IRModule want =
      infer_types(with_weight("def @main(%x: Tensor[(2, 8, 1, 1), float32], %w: Tensor[(4, 8, 1, 1), float32]) {\n"
                              "  %0 = reshape(%x, newshape=[2, 8], allowzero=0); %1 = reshape(%w, newshape=[4, 8], "
                              "allowzero=0); %2 = nn.dense(%0, %1);\n"
                              "  reshape(%2, newshape=[2, 4, 1, 1], allowzero=0)\n}",
                              w));
  EXPECT_TRUE(structural_equal(got, want)) << "got:\n" << print_module(got) << "\nwant:\n" << print_module(want);
}

TEST(OnePositionConvToDense, LeavesOtherConvolutionsAlone) {
  // The weight a parameter: nothing to pack at build time.
  EXPECT_EQ(print_module(run_pass("OnePositionConvToDense", se_conv("1, 8, 1, 1", "4, 8, 1, 1"))).find("nn.dense"),
            std::string::npos);
  const std::pair<std::string, std::pair<std::string, std::string>> cases[] = {
      {"1, 8, 2, 1", {"4, 8, 1, 1", ""}},                      // two positions
      {"1, 8, 1, 1", {"4, 4, 1, 1", "groups=2"}},              // groups
      {"1, 8, 1, 1", {"4, 8, 3, 3", "padding=[1, 1, 1, 1]"}},  // a padded 3x3 window
      {"1, 1, 1, 1, 16", {"1, 1, 1, 1, 16, 16", "data_layout=\"NCHW16c\", kernel_layout=\"OIHW16i16o\""}},
  };
  for (const auto& [x, wa] : cases) {
    const std::string text = se_conv(x, wa.first, wa.second);
    SCOPED_TRACE(text);
    IRModule mod = parse_module(text);
    const TensorTypeNode* wt = as_tensor(mod.lookup("main")->params[1]->type_annotation);
    const std::string printed =
        print_module(one_position_conv_to_dense_pass(with_weight(text, sample_tensor(wt->shape, 5))));
    EXPECT_EQ(printed.find("nn.dense"), std::string::npos) << printed;
  }
}

TEST(OnePositionConvToDenseProperty, InterpreterGivesTheSameResults) {
  uint32_t seed = 11;
  const std::pair<Shape, Shape> cases[] = {
      {{1, 440, 1, 1}, {110, 440, 1, 1}}, {{2, 6, 1, 1}, {144, 6, 1, 1}}, {{3, 17, 1, 1}, {5, 17, 1, 1}}};
  for (const auto& [xs, ws] : cases) {
    auto dims = [](const Shape& s) {
      std::string out;
      for (int64_t d : s) out += (out.empty() ? "" : ", ") + std::to_string(d);
      return out;
    };
    const std::string text = se_conv(dims(xs), dims(ws));
    SCOPED_TRACE(text);
    IRModule mod = with_weight(text, sample_tensor(ws, seed++));
    IRModule dense = one_position_conv_to_dense_pass(mod);
    ASSERT_NE(print_module(dense).find("nn.dense"), std::string::npos);
    const std::vector<Value> args = {Value(sample_tensor(xs, seed++))};
    NDArray want = interpret(mod, "main", args).tensor(), got = interpret(dense, "main", args).tensor();
    ASSERT_EQ(want.shape(), got.shape());
    for (int64_t i = 0; i < want.numel(); ++i) EXPECT_NEAR(got.at(i), want.at(i), 1e-5 * (1 + std::abs(want.at(i))));
  }
}

}  // namespace
}  // namespace kiln::testing
