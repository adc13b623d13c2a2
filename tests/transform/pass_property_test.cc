// Every registered pass keeps a module's results: random graphs (elementwise ops, conv2d and
// dense on constant weights, per-channel scales, parallel branches on one input, lets, ifs,
// tuples) run through the interpreter before and after each pass, and after the whole -O 3
// pipeline, agree within a float-reassociation tolerance. A new pass is covered by being
// registered.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kiln/backend/build.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/printer.h"
#include "kiln/transform/pass.h"
#include "transform/random_graph.h"

namespace kiln {
namespace {

constexpr unsigned kGraphs = 40;

void expect_close(const std::vector<NDArray>& want, const std::vector<NDArray>& got, const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(want[i].shape(), got[i].shape()) << what << ", output " << i;
    for (int64_t k = 0; k < want[i].numel(); ++k) {
      double a = want[i].at(k), b = got[i].at(k);
      ASSERT_LE(std::abs(a - b), 1e-4 + 1e-4 * std::abs(a)) << what << ", output " << i << " element " << k;
    }
  }
}

struct RandomCase {
  IRModule mod;
  std::vector<Value> args;
  std::string what;
};

RandomCase random_case(unsigned seed) {
  RandomCase c;
  testing::GraphGenerator g(seed, /*channel_ops=*/true);
  c.mod = g.make(seed % 2 == 0, &c.args);
  c.what = "seed " + std::to_string(seed) + ":\n" + print_module(c.mod);
  return c;
}

// Two parallel branches are enough for the CombineParallel passes, so the graphs exercise them.
PassContext property_context() {
  PassContext ctx;
  for (const char* pass : {"CombineParallelConv2D", "CombineParallelDense", "CombineParallelBatchMatmul"})
    ctx.options[pass] = Attrs{{"min_num_branches", AttrValue(int64_t{2})}};
  return ctx;
}

TEST(PassProperty, EveryRegisteredPassKeepsResults) {
  register_builtin_passes();
  std::vector<std::string> passes = PassRegistry::global().names();
  ASSERT_GE(passes.size(), 11u);
  for (unsigned seed = 0; seed < kGraphs; ++seed) {
    RandomCase c = random_case(seed);
    std::vector<NDArray> want = interpret(c.mod, "main", c.args).flatten();
    for (const std::string& pass : passes) {
      SCOPED_TRACE(pass);
      IRModule out = run_passes(c.mod, {"InferType", pass}, property_context());
      expect_close(want, interpret(out, "main", c.args).flatten(), c.what + "\nafter " + pass);
    }
  }
}

TEST(PassProperty, TheBuildPipelineKeepsResultsAtEveryLevel) {
  for (unsigned seed = 0; seed < kGraphs; ++seed) {
    RandomCase c = random_case(seed);
    std::vector<NDArray> want = interpret(c.mod, "main", c.args).flatten();
    for (int level = 0; level <= 3; ++level) {
      PassContext ctx;
      ctx.opt_level = level;
      expect_close(want, interpret(optimize(c.mod, ctx), "main", c.args).flatten(),
                   c.what + "\nat -O " + std::to_string(level));
    }
  }
}

TEST(PassProperty, TheGraphsGiveThePassesWork) {
  // Otherwise the tests above would prove little: count the graphs each pass changes.
  std::map<std::string, int> changed;
  for (unsigned seed = 0; seed < kGraphs; ++seed) {
    RandomCase c = random_case(seed);
    std::string before = print_module(run_passes(c.mod, {"InferType"}));
    for (const char* pass : {"FoldScaleAxis", "SimplifyExpr", "FuseOps", "EliminateCommonSubexpr",
                             "CombineParallelConv2D", "CombineParallelDense"})
      changed[pass] += print_module(run_passes(c.mod, {"InferType", pass}, property_context())) != before;
  }
  for (const auto& [pass, count] : changed) EXPECT_GE(count, 3) << pass;
}

}  // namespace
}  // namespace kiln
