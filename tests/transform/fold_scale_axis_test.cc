// FoldScaleAxis: the seed notes' example step by step, the patterns it folds and those it
// must leave alone, and agreement of the interpreter before and after.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "ir/seed_texts.h"
#include "kiln/attrs/nn.h"
#include "kiln/attrs/reduce.h"
#include "kiln/attrs/transform.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "transform/pass_test_util.h"

namespace kiln::testing {
namespace {

// The seed's example (tests/ir/seed_texts.h); the folded weight is the weight times the scale
// per output channel, checked value by value below.
const std::string kScaledWeight =
    R"({"dtype":"float32","shape":[2,1,3,3],"data":"AACAvwAAYL8AAEC/AAAgvwAAAL8AAMC+AACAvgAAAL4AAAAAAADAvgAAQL8AAJC/AADAvwAA8L8AABDAAAAowAAAQMAAAFjA"})";
const std::string kBefore = seed_texts::fold_scale_axis_before();
const std::string kBackward = seed_texts::fold_scale_axis_backward();
const std::string kFolded = seed_texts::fold_scale_axis_folded(kScaledWeight);

void expect_same(const IRModule& got, const IRModule& want) {
  EXPECT_TRUE(structural_equal(got, want)) << "got:\n" << print_module(got) << "\nwant:\n" << print_module(want);
}

TEST(FoldScaleAxis, SeedExampleStepByStep) {
  IRModule before = parse_module(kBefore);
  IRModule backward = backward_fold_scale_axis_pass(before);
  expect_same(backward, parse_module(kBackward));
  expect_same(fold_constant_pass(backward), parse_module(kFolded));
  // The registered pass is the three steps in one.
  expect_same(run_pass("FoldScaleAxis", kBefore), parse_module(kFolded));

  IRModule folded = parse_module(kFolded);
  const auto* conv = as<CallNode>(folded.lookup("main")->body);
  const NDArray& w = as<ConstantNode>(conv->args[1])->data;
  for (int64_t i = 0; i < 18; ++i) EXPECT_EQ(w.at(i), (static_cast<double>(i) * 0.25 - 2) * (i < 9 ? 0.5 : -1.5));
}

// Deterministic values in [-1, 1) (or (0, 1] when positive).
NDArray values(Shape shape, unsigned seed, bool positive = false) {
  std::vector<float> v(static_cast<size_t>(num_elements(shape)));
  uint32_t state = seed * 2654435761u + 1;
  for (float& f : v) {
    state = state * 1664525u + 1013904223u;
    float u = static_cast<float>(state >> 8) / static_cast<float>(1u << 24);
    f = positive ? 1.0f - u : 2.0f * u - 1.0f;
  }
  return NDArray::from_vector(std::move(shape), v);
}

Expr constant(Shape shape, unsigned seed, bool positive = false) {
  return make_constant(values(std::move(shape), seed, positive));
}

Var input(Shape shape) { return make_var("x", tensor_type(std::move(shape), DType::kFloat32)); }

Expr conv(const Expr& data, const Expr& weight, int64_t groups = 1) {
  Conv2DAttrs attrs;
  attrs.padding = {1, 1};
  attrs.groups = groups;
  return call_op("nn.conv2d", {data, weight}, attrs);
}

Expr mul(const Expr& a, const Expr& b) { return call_op("multiply", {a, b}); }

Expr vector_of(const Expr& scale, std::vector<int64_t> squeeze) {
  return call_op("squeeze", {scale}, SqueezeAttrs{.axis = std::move(squeeze)});
}

Expr expand(const Expr& vector, int64_t trailing) {
  return call_op("expand_dims", {vector}, ExpandDimsAttrs{.axis = 1, .num_newaxis = trailing});
}

IRModule module_of(const Var& x, const Expr& body) { return IRModule::from_function(make_function({x}, body)); }

void expect_same_results(const IRModule& mod, const IRModule& folded, const Shape& input_shape);

IRModule both_directions(const IRModule& mod) {
  return forward_fold_scale_axis_pass(backward_fold_scale_axis_pass(mod));
}

TEST(FoldScaleAxis, BackwardThroughBiasAddAndRelu) {
  Var x = input({1, 2, 5, 5});
  Expr w = constant({3, 2, 3, 3}, 1), b = constant({3}, 2), s = constant({3, 1, 1}, 3, true);
  Expr before = mul(call_op("nn.relu", {call_op("nn.bias_add", {conv(x, w), b})}), s);
  Expr v = vector_of(s, {1, 2});
  Expr after = call_op("nn.relu", {call_op("nn.bias_add", {conv(x, mul(w, expand(v, 3))), mul(b, v)})});
  expect_same(both_directions(module_of(x, before)), infer_types(module_of(x, after)));
}

TEST(FoldScaleAxis, BackwardThroughAddOfPerChannelConstant) {
  Var x = input({1, 2, 5, 5});
  Expr w = constant({3, 2, 3, 3}, 1), b = constant({1, 3, 1, 1}, 2), s = constant({1, 3, 1, 1}, 3);
  Expr before = mul(s, call_op("add", {conv(x, w), b}));
  Expr after = call_op("add", {conv(x, mul(w, expand(vector_of(s, {0, 2, 3}), 3))), mul(b, s)});
  expect_same(both_directions(module_of(x, before)), infer_types(module_of(x, after)));
}

TEST(FoldScaleAxis, BackwardIntoDense) {
  Var x = input({2, 4});
  Expr w = constant({3, 4}, 1), s = constant({3}, 2);
  Expr before = mul(call_op("nn.dense", {x, w}), s);
  Expr after = call_op("nn.dense", {x, mul(w, expand(s, 1))});
  expect_same(both_directions(module_of(x, before)), infer_types(module_of(x, after)));
}

TEST(FoldScaleAxis, ForwardIntoEveryConvolutionOfTheMultiply) {
  Var x = input({1, 2, 5, 5});
  Expr w1 = constant({3, 2, 3, 3}, 1), w2 = constant({4, 2, 3, 3}, 2), s = constant({2, 1, 1}, 3);
  Expr scaled = mul(x, s);
  Expr before = make_tuple({conv(scaled, w1), conv(scaled, w2)});
  Expr ws = expand(vector_of(s, {1, 2}), 2);
  Expr after = make_tuple({conv(x, mul(w1, ws)), conv(x, mul(w2, ws))});
  expect_same(both_directions(module_of(x, before)), infer_types(module_of(x, after)));
}

// A scale computed at run time (squeeze-excite) scales the weights when they are at most half
// the activation's size: 2 x 4 x 8 x 3 x 3 = 576 values against 8 x 16 x 16 = 2048.
TEST(FoldScaleAxis, ForwardRunTimeScaleIntoSmallerWeights) {
  Var x = input({1, 8, 16, 16});
  Expr w1 = constant({4, 8, 3, 3}, 1), w2 = constant({4, 8, 3, 3}, 2);
  Expr s =
      call_op("sigmoid", {call_op("mean", {x}, ReduceAttrs{.axis = std::vector<int64_t>{2, 3}, .keepdims = true})});
  Expr scaled = mul(x, s);
  Expr before = make_tuple({conv(scaled, w1), conv(scaled, w2)});
  Expr ws = expand(vector_of(s, {0, 2, 3}), 2);
  Expr after = make_tuple({conv(x, mul(w1, ws)), conv(x, mul(w2, ws))});
  IRModule mod = module_of(x, before);
  expect_same(both_directions(mod), infer_types(module_of(x, after)));
  expect_same_results(mod, fold_scale_axis_pass(mod), {1, 8, 16, 16});
}

// Two scales in a row fold one after the other.
TEST(FoldScaleAxis, FoldsRepeatedScales) {
  Var x = input({1, 2, 5, 5});
  Expr w = constant({3, 2, 3, 3}, 1), s1 = constant({3, 1, 1}, 2), s2 = constant({3, 1, 1}, 3);
  Expr before = mul(mul(conv(x, w), s1), s2);
  IRModule got = fold_scale_axis_pass(module_of(x, before));
  const auto* call = as<CallNode>(got.lookup("main")->body);
  ASSERT_TRUE(call && call->op()->name == "nn.conv2d") << print_module(got);
  EXPECT_TRUE(as<ConstantNode>(call->args[1]));
}

struct Unchanged {
  std::string name;
  std::function<IRModule()> make;
};

class FoldScaleAxisKeeps : public ::testing::TestWithParam<Unchanged> {};

TEST_P(FoldScaleAxisKeeps, TheModule) {
  IRModule mod = infer_types(GetParam().make());
  expect_same(both_directions(mod), mod);
}

std::vector<Unchanged> unchanged() {
  return {
      {"ScaleAlongWidth",
       [] {
         Var x = input({1, 2, 5, 5});
         return module_of(x, mul(conv(x, constant({5, 2, 3, 3}, 1)), constant({5}, 2)));
       }},
      {"ScaleOfEveryElement",
       [] {
         Var x = input({1, 2, 5, 5});
         return module_of(x, mul(conv(x, constant({3, 2, 3, 3}, 1)), constant({3, 5, 5}, 2)));
       }},
      {"ScalarScale",
       [] {
         Var x = input({1, 2, 5, 5});
         return module_of(x,
                          mul(conv(x, constant({3, 2, 3, 3}, 1)), make_constant(NDArray::scalar(DType::kFloat32, 2))));
       }},
      {"ScaleNotConstant",
       [] {
         Var x = input({1, 2, 5, 5});
         Var s = make_var("s", tensor_type({3, 1, 1}, DType::kFloat32));
         return IRModule::from_function(make_function({x, s}, mul(conv(x, constant({3, 2, 3, 3}, 1)), s)));
       }},
      {"WeightNotConstant",
       [] {
         Var x = input({1, 2, 5, 5});
         Var w = make_var("w", tensor_type({3, 2, 3, 3}, DType::kFloat32));
         return IRModule::from_function(make_function({x, w}, mul(conv(x, w), constant({3, 1, 1}, 2))));
       }},
      {"NegativeScaleThroughRelu",
       [] {
         Var x = input({1, 2, 5, 5});
         NDArray s = NDArray::from_vector<float>({3, 1, 1}, {0.5f, -2.0f, 1.0f});
         return module_of(x, mul(call_op("nn.relu", {conv(x, constant({3, 2, 3, 3}, 1))}), make_constant(s)));
       }},
      {"ConvolutionUsedTwice",
       [] {
         Var x = input({1, 2, 5, 5});
         Expr y = conv(x, constant({3, 2, 3, 3}, 1));
         return module_of(x, make_tuple({y, mul(y, constant({3, 1, 1}, 2))}));
       }},
      {"GroupedConvolutionForward",
       [] {
         Var x = input({1, 4, 5, 5});
         return module_of(x, conv(mul(x, constant({4, 1, 1}, 2)), constant({4, 2, 3, 3}, 1), 2));
       }},
      {"ForwardScaleAlsoUsedElsewhere",
       [] {
         Var x = input({1, 2, 5, 5});
         Expr scaled = mul(x, constant({2, 1, 1}, 2));
         return module_of(x, make_tuple({conv(scaled, constant({3, 2, 3, 3}, 1)), call_op("nn.relu", {scaled})}));
       }},
      {"ForwardRunTimeScaleOfLargerWeights",
       [] {
         // 3 x 2 x 3 x 3 = 54 weights against 2 x 5 x 5 = 50 activations: the multiply stays.
         Var x = input({1, 2, 5, 5});
         Var s = make_var("s", tensor_type({2, 1, 1}, DType::kFloat32));
         return IRModule::from_function(make_function({x, s}, conv(mul(x, s), constant({3, 2, 3, 3}, 1))));
       }},
      {"ForwardScaleIntoWeight",
       [] {
         Var x = input({1, 3, 5, 5});
         Var w = make_var("w", tensor_type({3, 3, 3, 3}, DType::kFloat32));
         return IRModule::from_function(make_function({x, w}, conv(x, mul(w, constant({3, 1, 1}, 2)))));
       }},
  };
}

INSTANTIATE_TEST_SUITE_P(FoldScaleAxis, FoldScaleAxisKeeps, ::testing::ValuesIn(unchanged()),
                         [](const ::testing::TestParamInfo<Unchanged>& info) { return info.param.name; });

// The folded module computes what the original did, up to float reassociation.
void expect_same_results(const IRModule& mod, const IRModule& folded, const Shape& input_shape) {
  NDArray in = values(input_shape, 99);
  std::vector<NDArray> want = interpret(mod, "main", {Value(in)}).flatten();
  std::vector<NDArray> got = interpret(folded, "main", {Value(in)}).flatten();
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].shape(), want[k].shape());
    for (int64_t i = 0; i < got[k].numel(); ++i)
      ASSERT_NEAR(got[k].at(i), want[k].at(i), 1e-5 * std::abs(want[k].at(i)) + 1e-6) << "output " << k << " at " << i;
  }
}

int count_calls(const IRModule& mod, const std::string& op) {
  int n = 0;
  post_order_visit(mod.lookup("main"), [&](const Expr& e) {
    const auto* call = as<CallNode>(e);
    n += call && call->op() && call->op()->name == op;
  });
  return n;
}

TEST(FoldScaleAxis, InterpreterAgreesOnFoldedModules) {
  {
    Var x = input({2, 3, 6, 6});
    Expr s = constant({4, 1, 1}, 3, true);
    Expr y =
        call_op("nn.bias_add", {conv(mul(x, constant({3, 1, 1}, 4)), constant({4, 3, 3, 3}, 1)), constant({4}, 2)});
    IRModule mod = module_of(x, mul(call_op("nn.relu", {y}), s));
    IRModule folded = fold_scale_axis_pass(mod);
    EXPECT_EQ(count_calls(folded, "multiply"), 0) << print_module(folded);
    expect_same_results(mod, folded, {2, 3, 6, 6});
  }
  {
    Var x = input({3, 5});
    Expr y = call_op("nn.bias_add", {call_op("nn.dense", {x, constant({4, 5}, 1)}), constant({4}, 2)},
                     BiasAddAttrs{.axis = -1});
    IRModule mod = module_of(x, mul(y, constant({1, 4}, 3)));
    IRModule folded = fold_scale_axis_pass(mod);
    EXPECT_EQ(count_calls(folded, "multiply"), 0) << print_module(folded);
    expect_same_results(mod, folded, {3, 5});
  }
}

// torchvision's conv -> batch norm -> relu, twice: after SimplifyInference and FoldConstant
// each batch norm is a multiply and an add by per-channel constants, which fold into the
// convolution before them.
TEST(FoldScaleAxis, ConvBatchNormReluBlocks) {
  Var x = input({1, 3, 8, 8});
  auto block = [](const Expr& data, int64_t in, int64_t out, unsigned seed) {
    Expr y = conv(data, constant({out, in, 3, 3}, seed));
    Expr bn = call_op("nn.batch_norm", {y, constant({out}, seed + 1), constant({out}, seed + 2),
                                        constant({out}, seed + 3), constant({out}, seed + 4, true)});
    return call_op("nn.relu", {make_tuple_get_item(bn, 0)});
  };
  IRModule mod = module_of(x, block(block(x, 3, 4, 10), 4, 5, 20));
  IRModule prepared = run_passes(mod, {"SimplifyInference", "FoldConstant"});
  ASSERT_EQ(count_calls(prepared, "multiply"), 2) << print_module(prepared);
  IRModule folded = run_passes(prepared, {"FoldScaleAxis"});
  EXPECT_EQ(count_calls(folded, "multiply"), 0) << print_module(folded);
  EXPECT_EQ(count_calls(folded, "nn.conv2d"), 2);
  expect_same_results(mod, folded, {1, 3, 8, 8});
}

}  // namespace
}  // namespace kiln::testing
