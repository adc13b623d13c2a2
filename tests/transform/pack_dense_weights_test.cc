// PackDenseWeights: golden before/after IR (nn.dense, nn.matmul with b stored (K, N) and
// transposed, units padded to the panel, a batch of few-row matrices flattened, calls it must
// leave alone), and a property test: products of random shapes give the interpreter's results
// before and after the pass (with the weights folded to packed constants).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "kiln/frontend/onnx.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/op.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/structural.h"
#include "kiln/ir/type_infer.h"
#include "op/numpy_ref.h"
#include "transform/pass_test_util.h"

namespace kiln::testing {
namespace {

// `text`'s @main with %w bound to `w` (a constant, as a model's weights are).
IRModule with_weight(const std::string& text, const NDArray& w) { return bind_params(parse_module(text), {{"w", w}}); }

// The pass without its FoldConstant, so the packing itself shows.
void expect_packed(const std::string& before, const std::string& after, const Shape& w_shape) {
  const NDArray w = sample_tensor(w_shape, 3);
  IRModule got = pack_dense_weights_pass(with_weight(before, w), /*fold=*/false);
  IRModule want = infer_types(with_weight(after, w));
  EXPECT_TRUE(structural_equal(got, want)) << "got:\n" << print_module(got) << "\nwant:\n" << print_module(want);
}

std::string pack(const std::string& w, const std::string& layout, const std::string& pad_width = "") {
  const std::string padded =
      pad_width.empty() ? w : "nn.pad(" + w + ", 0f, pad_width=" + pad_width + ", pad_mode=\"constant\")";
  return "layout_transform(" + padded + ", src_layout=\"" + layout + "\", dst_layout=\"NK32n\")";
}

TEST(PackDenseWeights, DenseWeightInPanels) {
  expect_packed(R"(def @main(%x: Tensor[(40, 16), float32], %w: Tensor[(64, 16), float32]) { nn.dense(%x, %w) })",
                R"(def @main(%x: Tensor[(40, 16), float32], %w: Tensor[(64, 16), float32]) {
                     nn.dense_packed(%x, )" +
                    pack("%w", "NK") + R"(, units=64) })",
                {64, 16});
}

TEST(PackDenseWeights, UnitsPaddedToThePanel) {
  expect_packed(R"(def @main(%x: Tensor[(40, 16), float32], %w: Tensor[(70, 16), float32]) { nn.dense(%x, %w) })",
                R"(def @main(%x: Tensor[(40, 16), float32], %w: Tensor[(70, 16), float32]) {
                     nn.dense_packed(%x, )" +
                    pack("%w", "NK", "[[0, 26], [0, 0]]") + R"(, units=70) })",
                {70, 16});
}

TEST(PackDenseWeights, MatmulWithConstantB) {
  expect_packed(R"(def @main(%x: Tensor[(1, 40, 16), float32], %w: Tensor[(16, 40), float32]) { nn.matmul(%x, %w) })",
                R"(def @main(%x: Tensor[(1, 40, 16), float32], %w: Tensor[(16, 40), float32]) {
           nn.dense_packed(%x, )" +
                    pack("%w", "KN", "[[0, 0], [0, 24]]") + R"(, units=40) })",
                {16, 40});
  expect_packed(
      R"(def @main(%x: Tensor[(40, 16), float32], %w: Tensor[(32, 16), float32]) { nn.matmul(%x, %w, transpose_b=True) })",
      R"(def @main(%x: Tensor[(40, 16), float32], %w: Tensor[(32, 16), float32]) {
           nn.dense_packed(%x, )" +
          pack("%w", "NK") + R"(, units=32) })",
      {32, 16});
}

TEST(PackDenseWeights, FewRowMatricesBecomeOneMatrix) {
  expect_packed(R"(def @main(%x: Tensor[(50, 1, 16), float32], %w: Tensor[(32, 16), float32]) { nn.dense(%x, %w) })",
                R"(def @main(%x: Tensor[(50, 1, 16), float32], %w: Tensor[(32, 16), float32]) {
                     %0 = reshape(%x, newshape=[-1, 16], allowzero=0);
                     %1 = nn.dense_packed(%0, )" +
                    pack("%w", "NK") + R"(, units=32);
                     reshape(%1, newshape=[50, 1, 32], allowzero=0) })",
                {32, 16});
}

// A weight used by several products (a recurrent layer's steps) is packed once: after folding,
// one packed constant serves every call instead of a copy per call.
TEST(PackDenseWeights, SharedWeightPackedOnce) {
  const NDArray w = sample_tensor({64, 16}, 3);
  IRModule got =
      pack_dense_weights_pass(with_weight(R"(def @main(%x: Tensor[(4, 16), float32], %w: Tensor[(64, 16), float32]) {
      %0 = nn.dense(%x, %w);
      %1 = nn.dense(%x, %w);
      %2 = nn.dense(%x, %w);
      (%0, %1, %2) })",
                                          w),
                              /*fold=*/true);
  std::set<const ExprNode*> packed;
  int products = 0;
  post_order_visit(got.lookup("main")->body, [&](const Expr& e) {
    const auto* call = as<CallNode>(e);
    if (!call || !call->op() || call->op()->name != "nn.dense_packed") return;
    ++products;
    ASSERT_TRUE(as<ConstantNode>(call->args[1])) << print_module(got);
    packed.insert(call->args[1].get());
  });
  EXPECT_EQ(products, 3);
  EXPECT_EQ(packed.size(), 1u) << print_module(got);
}

TEST(PackDenseWeights, LeavesOtherProductsAlone) {
  for (
      const std::string fn : {
          // a weight that is an input, not a constant
          R"(def @main(%x: Tensor[(4, 16), float32], %v: Tensor[(32, 16), float32], %w: Tensor[(2), float32]) {
                %0 = nn.dense(%x, %v); add(%0, 0f) })",
          // a transposed, float64 or vector a; a batched b
          R"(def @main(%x: Tensor[(16, 4), float32], %w: Tensor[(16, 32), float32]) { nn.matmul(%x, %w, transpose_a=True) })",
          R"(def @main(%x: Tensor[(4, 16), float64], %w: Tensor[(32, 16), float64]) { nn.dense(%x, %w) })",
          R"(def @main(%x: Tensor[(16), float32], %w: Tensor[(32, 16), float32]) { nn.dense(%x, %w) })",
          R"(def @main(%x: Tensor[(2, 4, 16), float32], %w: Tensor[(2, 16, 32), float32]) { nn.matmul(%x, %w) })",
      }) {
    IRModule mod = parse_module(fn);
    const TensorTypeNode* w = as_tensor(mod.lookup("main")->params.back()->type_annotation);
    mod = bind_params(mod, {{"w", sample_tensor(w->shape, 1, -1, 1, w->dtype)}});
    IRModule got = pack_dense_weights_pass(mod, false);
    EXPECT_EQ(print_module(got).find("dense_packed"), std::string::npos) << print_module(got);
  }
}

// Random products, the registered pass (weights folded to packed constants): equal results.
TEST(PackDenseWeightsProperty, InterpreterGivesTheSameResults) {
  struct Case {
    std::string op, x, w, attrs;
    Shape x_shape, w_shape;
  };
  const std::vector<Case> cases = {
      {"nn.dense", "(37, 20)", "(70, 20)", "", {37, 20}, {70, 20}},
      {"nn.dense", "(3, 1, 5)", "(32, 5)", "", {3, 1, 5}, {32, 5}},
      {"nn.dense", "(1, 1)", "(1, 1)", "", {1, 1}, {1, 1}},
      {"nn.matmul", "(2, 9, 12)", "(12, 33)", "", {2, 9, 12}, {12, 33}},
      {"nn.matmul", "(9, 12)", "(40, 12)", ", transpose_b=True", {9, 12}, {40, 12}},
  };
  uint32_t seed = 10;
  for (const Case& c : cases) {
    const std::string text = "def @main(%x: Tensor[" + c.x + ", float32], %w: Tensor[" + c.w +
                             ", float32]) { %0 = " + c.op + "(%x, %w" + c.attrs + "); nn.relu(%0) }";
    SCOPED_TRACE(text);
    IRModule mod = with_weight(text, sample_tensor(c.w_shape, seed++));
    IRModule packed = run_passes(mod, {"PackDenseWeights"});
    const std::string printed = print_module(packed);
    EXPECT_NE(printed.find("nn.dense_packed"), std::string::npos) << printed;
    EXPECT_EQ(printed.find("layout_transform"), std::string::npos) << "weights not folded:\n" << printed;
    const std::vector<Value> args = {Value(sample_tensor(c.x_shape, seed++))};
    NDArray want = interpret(mod, "main", args).flatten().at(0);
    NDArray got = interpret(packed, "main", args).flatten().at(0);
    EXPECT_TRUE(want.same_as(got)) << printed;
  }
}

}  // namespace
}  // namespace kiln::testing
