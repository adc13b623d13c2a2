// RewriteAnnotatedOps before/after (the first is the seed notes' example, with
// RewriteAnnotatedOps(1): fallback on the CPU), and PlanDevices on what it leaves.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "transform/pass_test_util.h"

namespace kiln {
namespace {

using testing::squash;

PassContext with_fallback(AttrValue fallback) {
  PassContext ctx;
  ctx.options["RewriteAnnotatedOps"] = {{"fallback_device", std::move(fallback)}};
  return ctx;
}

IRModule rewrite(const std::string& before, AttrValue fallback = int64_t{1}) {
  register_builtin_passes();
  return run_passes(parse_module(before), {"RewriteAnnotatedOps"}, with_fallback(std::move(fallback)));
}

void expect_rewrite(const std::string& before, const std::string& after, AttrValue fallback = int64_t{1}) {
  IRModule got = rewrite(before, std::move(fallback));
  IRModule want = parse_module(after);
  EXPECT_TRUE(structural_equal(got, want)) << "got:\n" << print_module(got) << "\nwant:\n" << print_module(want);
  // Printed alike too, which shows that a copy read twice is one node.
  EXPECT_EQ(squash(print_module(got)), squash(print_module(infer_types(want))));
}

int count_calls(const IRModule& m, const std::string& op) {
  int n = 0;
  post_order_visit(m.lookup("main")->body, [&](const Expr& e) {
    const auto* call = as<CallNode>(e);
    if (call && call->op() && call->op()->name == op) ++n;
  });
  return n;
}

const char* kSeedBefore = R"(
def @main(%x: Tensor[(1, 10), float32], %y: Tensor[(1, 10), float32]) {
  %0 = add(%x, %y); %1 = sqrt(%0); %2 = on_device(%1, virtual_device="cuda"); %3 = log(%0);
  %4 = subtract(%2, %3); %5 = exp(%4); on_device(%5, virtual_device="cuda")
})";

// The seed's printed result, with DeviceCopyAttrs inline instead of as meta[...] references.
const char* kSeedAfter = R"(
fn (%x: Tensor[(1, 10), float32], %y: Tensor[(1, 10), float32]) -> Tensor[(1, 10), float32] {
  %0 = add(%x, %y) /* ty=Tensor[(1, 10), float32] */;
  %1 = device_copy(%0, src_device="cpu", dst_device="cuda") /* ty=Tensor[(1, 10), float32] */;
  %2 = sqrt(%1) /* ty=Tensor[(1, 10), float32] */;
  %3 = device_copy(%2, src_device="cuda", dst_device="cpu") /* ty=Tensor[(1, 10), float32] */;
  %4 = log(%0) /* ty=Tensor[(1, 10), float32] */;
  %5 = subtract(%3, %4) /* ty=Tensor[(1, 10), float32] */;
  %6 = device_copy(%5, src_device="cpu", dst_device="cuda") /* ty=Tensor[(1, 10), float32] */;
  exp(%6) /* ty=Tensor[(1, 10), float32] */
})";

TEST(RewriteAnnotatedOps, InsertsCopiesBetweenDevicesAsInSeed) { expect_rewrite(kSeedBefore, kSeedAfter); }

TEST(RewriteAnnotatedOps, FallbackDeviceByNameOrCodeAndCpuByDefault) {
  expect_rewrite(kSeedBefore, kSeedAfter, "cpu");
  IRModule by_default = testing::run_pass("RewriteAnnotatedOps", kSeedBefore);
  EXPECT_TRUE(structural_equal(by_default, parse_module(kSeedAfter)));
  // With the fallback on cuda (code 2), everything is on cuda and no copy is needed.
  IRModule on_cuda = rewrite(kSeedBefore, int64_t{2});
  EXPECT_EQ(count_calls(on_cuda, "device_copy"), 0);
  EXPECT_EQ(count_calls(on_cuda, "on_device"), 0);
}

TEST(RewriteAnnotatedOps, LeavesAModuleWithoutAnnotationsUnchanged) {
  const std::string text = R"(
def @main(%x: Tensor[(2, 3), float32]) { %0 = exp(%x); %1 = (%0, %x); %2 = %1.0; add(%2, %0) }
def @other(%y: Tensor[(2), float32]) { negative(%y) }
)";
  IRModule before = parse_module(text);
  IRModule after = run_passes(before, {"RewriteAnnotatedOps"}, with_fallback(int64_t{1}));
  EXPECT_TRUE(structural_equal(before, after));
  EXPECT_EQ(after.lookup("main"), before.lookup("main"));  // the same function object
}

TEST(RewriteAnnotatedOps, InputReadOnTwoDevicesIsCopiedOncePerDestination) {
  // %x is read three times on cuda and once on the cpu: one copy to cuda serves all three.
  expect_rewrite(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = exp(%x); %1 = on_device(%0, virtual_device="cuda");
  %2 = negative(%x); %3 = on_device(%2, virtual_device="cuda");
  %4 = add(%x, %1); %5 = on_device(%4, virtual_device="cuda");
  %6 = tanh(%x);
  (%3, %5, %6)
})",
                 R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = device_copy(%x, src_device="cpu", dst_device="cuda");
  %1 = exp(%0);
  %2 = negative(%0);
  %3 = device_copy(%2, src_device="cuda", dst_device="cpu");
  %4 = add(%0, %1);
  %5 = device_copy(%4, src_device="cuda", dst_device="cpu");
  %6 = tanh(%x);
  (%3, %5, %6)
})");
}

TEST(RewriteAnnotatedOps, TupleFieldsAreCopiedToTheTupleAndProjectionsStayWithTheirTuple) {
  // The tuple is on the fallback device: its cuda field is copied in. split runs on cuda, so
  // its projections are on cuda too, and the cpu reader copies just the field it reads.
  expect_rewrite(R"(
def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) {
  %0 = exp(%x); %1 = on_device(%0, virtual_device="cuda");
  %2 = split(%1, indices_or_sections=2); %3 = on_device(%2, virtual_device="cuda");
  %4 = %3.0; %5 = %3.1;
  %6 = add(%4, %5); %7 = on_device(%6, virtual_device="cuda");
  %8 = negative(%4);
  (%7, %8, %y)
})",
                 R"(
def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) {
  %0 = device_copy(%x, src_device="cpu", dst_device="cuda");
  %1 = exp(%0);
  %2 = split(%1, indices_or_sections=2);
  %3 = %2.0;
  %4 = %2.1;
  %5 = add(%3, %4);
  %6 = device_copy(%5, src_device="cuda", dst_device="cpu");
  %7 = device_copy(%3, src_device="cuda", dst_device="cpu");
  %8 = negative(%7);
  (%6, %8, %y)
})");
}

TEST(RewriteAnnotatedOps, AnnotatedTupleAndPinnedInput) {
  // An annotated tuple is built on its device; an annotated input lives there, and a reader
  // elsewhere copies it once.
  expect_rewrite(R"(
def @main(%x: Tensor[(3), float32], %y: Tensor[(3), float32]) {
  %0 = on_device(%x, virtual_device="cuda");
  %1 = exp(%y);
  %2 = (%0, %1); %3 = on_device(%2, virtual_device="cuda");
  %4 = concatenate(%3); %5 = on_device(%4, virtual_device="cuda");
  %6 = add(%x, %x);
  (%5, %6)
})",
                 R"(
def @main(%x: Tensor[(3), float32], %y: Tensor[(3), float32]) {
  %0 = exp(%y);
  %1 = device_copy(%0, src_device="cpu", dst_device="cuda");
  %2 = (%x, %1);
  %3 = concatenate(%2);
  %4 = device_copy(%3, src_device="cuda", dst_device="cpu");
  %5 = device_copy(%x, src_device="cuda", dst_device="cpu");
  %6 = add(%5, %5);
  (%4, %6)
})");
}

TEST(RewriteAnnotatedOps, ConstantsArePlacedWhereTheyAreReadNotCopied) {
  IRModule m = rewrite(R"(
def @main(%x: Tensor[(3), float32]) {
  %0 = add(%x, 2f); %1 = on_device(%0, virtual_device="cuda");
  %2 = multiply(%x, 2f);
  (%1, %2)
})");
  EXPECT_EQ(count_calls(m, "device_copy"), 2);  // %x to cuda, the sum back
  post_order_visit(m.lookup("main")->body, [](const Expr& e) {
    const auto* call = as<CallNode>(e);
    if (call && call->op() && call->op()->name == "device_copy") {
      EXPECT_EQ(as<ConstantNode>(call->args[0]), nullptr);
    }
  });
}

TEST(RewriteAnnotatedOps, CopiesAlreadyThereKeepTheirDevices) {
  // A device_copy written by hand is on its destination and reads on its source.
  expect_rewrite(R"(
def @main(%x: Tensor[(3), float32]) {
  %0 = device_copy(%x, src_device="cpu", dst_device="cuda"); %1 = exp(%0); %2 = on_device(%1, virtual_device="cuda");
  %3 = negative(%0); %4 = on_device(%3, virtual_device="cuda");
  add(%2, %4)
})",
                 R"(
def @main(%x: Tensor[(3), float32]) {
  %0 = device_copy(%x, src_device="cpu", dst_device="cuda");
  %1 = exp(%0);
  %2 = device_copy(%1, src_device="cuda", dst_device="cpu");
  %3 = negative(%0);
  %4 = device_copy(%3, src_device="cuda", dst_device="cpu");
  add(%2, %4)
})");
}

TEST(RewriteAnnotatedOps, ConflictingAnnotationsAreAnError) {
  register_builtin_passes();
  IRModule m = parse_module(R"(
def @main(%x: Tensor[(3), float32]) {
  %0 = exp(%x); %1 = on_device(%0, virtual_device="cuda"); %2 = on_device(%0, virtual_device="cpu"); add(%1, %2)
})");
  try {
    run_passes(m, {"RewriteAnnotatedOps"});
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("two devices"), std::string::npos) << msg;
    EXPECT_NE(msg.find("RewriteAnnotatedOps"), std::string::npos) << msg;
  }
}

TEST(PlanDevices, FollowsTheCopiesOfTheSeedAndTheFallbackElsewhere) {
  IRModule m = parse_module(kSeedAfter);
  infer_types(m);
  const Function& main = m.lookup("main");
  DeviceMap devices = plan_devices(*main, "cpu");
  std::map<std::string, std::vector<std::string>> by_op;
  post_order_visit(main->body, [&](const Expr& e) {
    const auto* call = as<CallNode>(e);
    if (call && call->op()) by_op[call->op()->name].push_back(devices.at(e.get()));
  });
  EXPECT_EQ(by_op["add"], std::vector<std::string>{"cpu"});
  EXPECT_EQ(by_op["sqrt"], std::vector<std::string>{"cuda"});
  EXPECT_EQ(by_op["log"], std::vector<std::string>{"cpu"});
  EXPECT_EQ(by_op["subtract"], std::vector<std::string>{"cpu"});
  EXPECT_EQ(by_op["exp"], std::vector<std::string>{"cuda"});
  EXPECT_EQ(by_op["device_copy"], (std::vector<std::string>{"cuda", "cpu", "cuda"}));
  for (const Var& p : main->params) EXPECT_EQ(devices.at(p.get()), "cpu");
  // After fusion a copy is a function of its own, and the devices are the same.
  IRModule fused = testing::run_pass("FuseOps", kSeedAfter);
  const Function& fused_main = fused.lookup("main");
  DeviceMap fused_devices = plan_devices(*fused_main, "cpu");
  EXPECT_EQ(fused_devices.at(fused_main->body.get()), "cuda");
  // Without any copy, everything is on the fallback device.
  IRModule plain = parse_module("def @main(%x: Tensor[(2), float32]) { exp(%x) }");
  EXPECT_EQ(plan_devices(*plain.lookup("main"), "cuda").at(plain.lookup("main")->body.get()), "cuda");
}

TEST(RewriteAnnotatedOps, FuseOpsNeverFusesAcrossACopy) {
  // device_copy is opaque: each is a fused function of its own, between the groups of each
  // device (log and subtract, both on the cpu, still fuse).
  IRModule fused = testing::run_pass("FuseOps", kSeedAfter);
  std::vector<std::string> groups;
  post_order_visit(fused.lookup("main")->body, [&](const Expr& e) {
    const auto* fn = as<FunctionNode>(e);
    if (!fn || !fn->is_primitive()) return;
    std::string ops;
    post_order_visit(fn->body, [&](const Expr& inner) {
      const auto* call = as<CallNode>(inner);
      if (call && call->op()) ops += (ops.empty() ? "" : "+") + call->op()->name;
    });
    groups.push_back(ops);
  });
  std::sort(groups.begin(), groups.end());
  EXPECT_EQ(groups, (std::vector<std::string>{"add", "device_copy", "device_copy", "device_copy", "exp", "log+subtract",
                                              "sqrt"}));
}

TEST(PlanDevices, CopiesThatDisagreeAreAnError) {
  IRModule m = parse_module(R"(
def @main(%x: Tensor[(2), float32]) {
  %0 = device_copy(%x, src_device="cpu", dst_device="cuda"); %1 = device_copy(%x, src_device="cuda", dst_device="cpu");
  add(%0, %1)
})");
  EXPECT_THROW(plan_devices(*m.lookup("main"), "cpu"), Error);
}

}  // namespace
}  // namespace kiln
