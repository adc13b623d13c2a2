// PrecomputePrune: parameters known at build time are bound, what depends on them alone is
// evaluated, and the interpreter's results stay the same; through build(), the artifact
// keeps the precomputed values as params and no node that computes them.
#include <gtest/gtest.h>

#include <random>

#include "kiln/attrs/transform.h"
#include "kiln/backend/build.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/structural.h"
#include "kiln/ir/type_infer.h"
#include "kiln/transform/pass.h"

namespace kiln {
namespace {

// A weight stored (I, O, kH, kW) and transposed at run time, a bias squared at run time.
const char* kTransposedWeight = R"(
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 3, 1, 1), float32], %b: Tensor[(3), float32]) {
  %0 = transpose(%w, axes=[1, 0, 2, 3]);
  %1 = nn.conv2d(%x, %0, padding=[0, 0, 0, 0]);
  %2 = multiply(%b, %b);
  nn.bias_add(%1, %2)
})";

NDArray random_array(const Shape& shape, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  NDArray a = NDArray::empty(shape, DType::kFloat32);
  for (int64_t i = 0; i < a.numel(); ++i) a.set(i, dist(gen));
  return a;
}

struct Fixture {
  IRModule mod = parse_module(kTransposedWeight);
  NDArray x = random_array({1, 2, 4, 4}, 1);
  NDArray w = random_array({2, 3, 1, 1}, 2);
  NDArray b = random_array({3}, 3);
  NamedArrays params{{"w", w}, {"b", b}};
};

TEST(PrecomputePrune, EvaluatesWhatDependsOnParametersAlone) {
  Fixture f;
  IRModule got = precompute_prune_pass(f.mod, f.params);
  Var x = make_var("x", tensor_type({1, 2, 4, 4}, DType::kFloat32));
  TransposeAttrs transpose;
  transpose.axes = std::vector<int64_t>{1, 0, 2, 3};
  NDArray w_t = interpret_expr(call_op("transpose", {make_constant(f.w)}, transpose)).tensor();
  NDArray b_sq = interpret_expr(call_op("multiply", {make_constant(f.b), make_constant(f.b)})).tensor();
  // The attributes as the parsed module spells them.
  Expr conv =
      call_op("nn.conv2d", {x, make_constant(w_t)}, Attrs{{"padding", AttrValue(std::vector<int64_t>{0, 0, 0, 0})}});
  Expr body = call_op("nn.bias_add", {conv, make_constant(b_sq)});
  IRModule want;
  want.add("main", make_function({x}, body, tensor_type({1, 3, 4, 4}, DType::kFloat32)));
  EXPECT_TRUE(structural_equal(got, want)) << "got:\n" << print_module(got) << "\nwant:\n" << print_module(want);
}

TEST(PrecomputePrune, KeepsResults) {
  Fixture f;
  IRModule got = precompute_prune_pass(f.mod, f.params);
  NDArray want = interpret(f.mod, "main", {f.x, f.w, f.b}).tensor();
  NDArray after = interpret(got, "main", {f.x}).tensor();
  ASSERT_EQ(after.shape(), want.shape());
  for (int64_t i = 0; i < want.numel(); ++i) EXPECT_NEAR(after.at(i), want.at(i), 1e-6) << i;
}

TEST(PrecomputePrune, LeavesUnknownParametersAndInputDependentCallsAlone) {
  Fixture f;
  IRModule got = precompute_prune_pass(f.mod, {{"b", f.b}});  // w stays a run-time parameter
  const Function& main = got.lookup("main");
  ASSERT_EQ(main->params.size(), 2u);
  EXPECT_EQ(main->params[1]->name, "w");
  std::string text = print_module(got);
  EXPECT_NE(text.find("transpose(%w"), std::string::npos) << text;
  EXPECT_EQ(text.find("multiply("), std::string::npos) << text;
  IRModule none = precompute_prune_pass(f.mod, {});
  EXPECT_TRUE(structural_equal(none, infer_types(f.mod))) << print_module(none);
}

TEST(PrecomputePrune, BuildStoresPrecomputedParamsInsteadOfTheirNodes) {
  Fixture f;
  for (int level : {0, 3}) {
    BuildOptions options;
    options.passes.opt_level = level;
    BuiltModel built = build(f.mod, f.params, {"x"}, {"y"}, options);
    bool transposes = built.graph_json.find("transpose") != std::string::npos;
    std::vector<std::string> names;
    for (const auto& [name, value] : built.params) names.push_back(name);
    if (level == 0) {  // PrecomputePrune runs from -O 1: the params keep their names
      EXPECT_TRUE(transposes) << built.graph_json;
      EXPECT_EQ(names, (std::vector<std::string>{"w", "b"}));
    } else {
      EXPECT_FALSE(transposes) << built.graph_json;
      ASSERT_EQ(built.params.size(), 2u);
      EXPECT_EQ(built.params[0].second.shape(), (Shape{3, 2, 1, 1}));
    }
  }
}

}  // namespace
}  // namespace kiln
