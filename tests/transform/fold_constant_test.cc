// FoldConstant: before/after IR as text.
#include <gtest/gtest.h>

#include "transform/pass_test_util.h"

namespace kiln::testing {
namespace {

// Weights stored in float16 and cast to float32 before use become float32 constants.
TEST(FoldConstant, CastOfFloat16WeightBecomesFloat32Constant) {
  expect_pass_result("FoldConstant", R"(
def @main(%x: Tensor[(2), float32]) { %0 = cast(meta[relay.Constant][0], dtype="float32"); multiply(%x, %0) }
#[metadata]
{"relay.Constant": [{"dtype":"float16","shape":[2],"data":"AD4AwA=="}]}
)",
                     R"(
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] { multiply(%x, meta[relay.Constant][0]) }
#[metadata]
{"relay.Constant": [{"dtype":"float32","shape":[2],"data":"AADAPwAAAMA="}]}
)");
}

// Chains fold whole; tuples of constants fold through concatenate, split and TupleGetItem.
TEST(FoldConstant, FoldsChainsAndTuples) {
  expect_pass_result("FoldConstant", R"(
def @main(%x: Tensor[(2), float32]) {
  %0 = (meta[relay.Constant][0], meta[relay.Constant][1]); %1 = concatenate(%0);
  %2 = split(%1, indices_or_sections=2); %3 = %2.1; %4 = multiply(%3, 2f); %5 = add(%4, 0.5f);
  add(%x, %5)
}
#[metadata]
{"relay.Constant": [{"dtype":"float32","shape":[2],"data":"AADAPwAAAMA="},
                    {"dtype":"float32","shape":[2],"data":"AABAQAAAgEA="}]}
)",
                     R"(
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] { add(%x, meta[relay.Constant][0]) }
#[metadata]
{"relay.Constant": [{"dtype":"float32","shape":[2],"data":"AADQQAAACEE="}]}
)");
}

// Random ops draw anew on every run, and a filled tensor far larger than its scalar would
// only cost memory: both stay calls. Calls reading a variable stay too.
TEST(FoldConstant, KeepsRandomOpsLargeFillsAndVariables) {
  const std::string text = R"(
def @main(%x: Tensor[(2), float32]) {
  %0 = random.bernoulli(meta[relay.Constant][0]); %1 = full(1f, shape=[512, 512]); %2 = sum(%1);
  %3 = add(%x, %0); %4 = add(%3, %2); exp(%4)
}
#[metadata]
{"relay.Constant": [{"dtype":"float32","shape":[2],"data":"AAAAPwAAAD8="}]}
)";
  expect_pass_result("FoldConstant", text, text);
}

}  // namespace
}  // namespace kiln::testing
