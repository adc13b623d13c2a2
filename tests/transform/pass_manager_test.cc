// The pass manager: opt levels, required and disabled passes, requirements run first, type
// inference only when a pass leaves types stale, instruments, errors naming pass and function.
#include <gtest/gtest.h>

#include <sstream>

#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/support/error.h"
#include "kiln/transform/pass.h"

namespace kiln::testing {
namespace {

// A weight stored as float16 and cast: FoldConstant turns the cast into a float32 constant.
const char* kCastOfConstant = R"(
def @main(%x: Tensor[(2), float32]) { %0 = cast(meta[relay.Constant][0], dtype="float32"); multiply(%x, %0) }
#[metadata]
{"relay.Constant": [{"dtype":"float16","shape":[2],"data":"AD4AwA=="}]}
)";

const char* kInlinable = R"(
def @double(%y: Tensor[(2), float32], Inline=1) { add(%y, %y) }
def @main(%x: Tensor[(2), float32]) { @double(%x) }
)";

std::vector<std::string> passes_run(const std::vector<std::string>& pipeline, PassContext ctx, const char* text) {
  auto timings = std::make_shared<PassTimings>();
  ctx.instruments.push_back(timings);
  Sequential run(pipeline);
  run(parse_module(text), ctx);
  std::vector<std::string> names;
  for (const auto& [name, seconds] : timings->timings()) names.push_back(name);
  return names;
}

bool keeps_cast(const IRModule& m) { return print_module(m).find("cast(") != std::string::npos; }

TEST(PassManager, RunsPassesFromTheirOptLevel) {
  PassContext o0;
  o0.opt_level = 0;
  PassContext o1;
  o1.opt_level = 1;
  EXPECT_TRUE(keeps_cast(Sequential({"FoldConstant"})(parse_module(kCastOfConstant), o0)));
  EXPECT_FALSE(keeps_cast(Sequential({"FoldConstant"})(parse_module(kCastOfConstant), o1)));
  EXPECT_EQ(passes_run({"Inline"}, o0, kInlinable), (std::vector<std::string>{"InferType"}));
}

TEST(PassManager, RequiredAndDisabledPassesOverrideTheLevel) {
  PassContext required;
  required.opt_level = 0;
  required.required_passes = {"FoldConstant"};
  EXPECT_FALSE(keeps_cast(Sequential({"FoldConstant"})(parse_module(kCastOfConstant), required)));
  PassContext disabled;
  disabled.opt_level = 3;
  disabled.disabled_passes = {"FoldConstant"};
  EXPECT_TRUE(keeps_cast(Sequential({"FoldConstant"})(parse_module(kCastOfConstant), disabled)));
}

// Inline leaves types stale, so InferType runs again before the next pass, and only there.
TEST(PassManager, InfersTypesOnlyWhereAPassLeavesThemStale) {
  PassContext ctx;
  EXPECT_EQ(
      passes_run({"Inline", "RemoveUnusedFunctions", "SimplifyInference"}, ctx, kInlinable),
      (std::vector<std::string>{"InferType", "Inline", "InferType", "RemoveUnusedFunctions", "SimplifyInference"}));
}

TEST(PassManager, FuseOpsFollowsTheLevelUnlessItsOptionSays) {
  const char* text = "def @main(%x: Tensor[(2), float32]) { %0 = exp(%x); negative(%0) }";
  auto primitives = [&](const PassContext& ctx) {
    std::string printed = print_module(Sequential({"FuseOps"})(parse_module(text), ctx));
    size_t n = 0;
    for (size_t at = printed.find("Primitive=1"); at != std::string::npos; at = printed.find("Primitive=1", at + 1))
      ++n;
    return n;
  };
  PassContext o0;
  o0.opt_level = 0;
  PassContext o2;
  EXPECT_EQ(primitives(o0), 2u);
  EXPECT_EQ(primitives(o2), 1u);
  o2.options["FuseOps"] = {{"fuse", false}};
  EXPECT_EQ(primitives(o2), 2u);
}

TEST(PassManager, PrintsEachPassWithItsTimeAndTheModuleAfterIt) {
  std::ostringstream out;
  PassContext ctx;
  ctx.instruments.push_back(print_after_each_pass(out));
  Sequential({"FoldConstant"})(parse_module(kCastOfConstant), ctx);
  std::string text = out.str();
  EXPECT_NE(text.find("// after InferType ("), std::string::npos) << text;
  size_t fold = text.find("// after FoldConstant (");
  ASSERT_NE(fold, std::string::npos) << text;
  EXPECT_NE(text.find(" ms)\n", fold), std::string::npos) << text;
  EXPECT_NE(text.find("multiply(%x, meta[relay.Constant][0]", fold), std::string::npos) << text;
}

TEST(PassManager, ErrorsNameThePassAndTheFunction) {
  PassRegistry::global().add({{"FailsOnMain", 0, {}, true}, [](const IRModule& m, const PassContext&) {
                                return map_functions(m, [](const Function& fn) -> Function {
                                  if (fn->params.size() == 1) throw Error("cannot rewrite this");
                                  return fn;
                                });
                              }});
  try {
    Sequential({"FailsOnMain"})(parse_module("def @main(%x: Tensor[(2), float32]) { exp(%x) }"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "pass FailsOnMain: @main: cannot rewrite this");
  }
}

TEST(PassManager, UnknownPassListsTheKnownOnes) {
  try {
    Sequential({"Frobnicate"})(parse_module("def @main(%x: Tensor[(2), float32]) { exp(%x) }"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown pass (expected one of"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("FoldConstant"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::testing
