// Property test of RewriteAnnotatedOps: on random graphs with random device annotations
// (tuples, projections, inputs and values read on several devices), the interpreter gives
// bit-identical results before and after the pass, no annotation is left, every copy moves
// a value between two different devices, and no value is copied twice to one device.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "kiln/attrs/control.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/op.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"

namespace kiln {
namespace {

NDArray random_array(const Shape& shape, std::mt19937& gen) {
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  NDArray a = NDArray::empty(shape, DType::kFloat32);
  for (int64_t i = 0; i < a.numel(); ++i) a.set(i, dist(gen));
  return a;
}

class AnnotatedGraphGenerator {
 public:
  explicit AnnotatedGraphGenerator(unsigned seed) : gen_(seed) {}

  IRModule make(std::vector<Value>* args) {
    const Shape shape{2, 3};
    Var x = make_var("x", tensor_type(shape, DType::kFloat32));
    Var y = make_var("y", tensor_type(shape, DType::kFloat32));
    args->assign({Value(random_array(shape, gen_)), Value(random_array(shape, gen_))});
    pool_ = {maybe_annotate(x), maybe_annotate(y)};
    int steps = 4 + pick(10);
    for (int i = 0; i < steps; ++i) pool_.push_back(maybe_annotate(step()));
    Expr body = make_tuple({pool_.back(), any(), any()});
    IRModule mod;
    mod.add("main", make_function({x, y}, maybe_annotate(body)));
    return mod;
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(gen_); }
  const Expr& any() { return pool_[static_cast<size_t>(pick(static_cast<int>(pool_.size())))]; }

  Expr maybe_annotate(const Expr& e) {
    static const char* const kDevices[] = {"cpu", "cuda", "cuda"};
    if (pick(2)) return e;
    OnDeviceAttrs attrs;
    attrs.virtual_device = kDevices[pick(3)];
    return call_op("on_device", {e}, attrs);
  }

  Expr step() {
    static const char* const kUnary[] = {"tanh", "negative", "exp"};
    static const char* const kBinary[] = {"add", "multiply", "subtract", "maximum"};
    switch (pick(5)) {
      case 0: return call_op(kUnary[pick(3)], {any()});
      case 1: return call_op(kBinary[pick(4)], {any(), any()});
      case 2: return call_op("add", {any(), make_constant(NDArray::scalar(DType::kFloat32, 0.5))});
      case 3: {  // a projection of a tuple, annotated or not
        Expr tuple = maybe_annotate(make_tuple({any(), any()}));
        return make_tuple_get_item(tuple, pick(2));
      }
      default: {  // a projection of an op's tuple result
        Expr parts = maybe_annotate(call_op("split", {call_op("concatenate", {make_tuple({any(), any()})})},
                                            {{"indices_or_sections", int64_t{2}}}));
        return make_tuple_get_item(parts, pick(2));
      }
    }
  }

  std::mt19937 gen_;
  std::vector<Expr> pool_;
};

void check_copies(const IRModule& mod, const std::string& what) {
  std::set<std::pair<const ExprNode*, std::string>> copied;
  post_order_visit(mod.lookup("main")->body, [&](const Expr& e) {
    const auto* call = as<CallNode>(e);
    if (!call || !call->op()) return;
    EXPECT_NE(call->op()->name, "on_device") << what;
    if (call->op()->name != "device_copy") return;
    const auto attrs = attrs_from<DeviceCopyAttrs>(call->attrs, "device_copy");
    EXPECT_NE(attrs.src_device, attrs.dst_device) << what;
    EXPECT_TRUE(copied.emplace(call->args[0].get(), attrs.dst_device).second) << what << ": copied twice";
  });
}

TEST(RewriteAnnotatedOpsProperty, RandomAnnotatedGraphsKeepTheirResults) {
  register_builtin_passes();
  for (unsigned seed = 0; seed < 60; ++seed) {
    std::vector<Value> args;
    IRModule mod = AnnotatedGraphGenerator(seed).make(&args);
    std::vector<NDArray> want = interpret(mod, "main", args).flatten();
    for (int64_t fallback : {1, 2}) {
      PassContext ctx;
      ctx.options["RewriteAnnotatedOps"] = {{"fallback_device", fallback}};
      const std::string what = "seed " + std::to_string(seed) + ", fallback " + std::to_string(fallback);
      IRModule out = run_passes(mod, {"RewriteAnnotatedOps"}, ctx);
      std::vector<NDArray> got = interpret(out, "main", args).flatten();
      ASSERT_EQ(want.size(), got.size()) << what;
      for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(want[i].same_as(got[i])) << what << ", output " << i;
      check_copies(out, what + ":\n" + print_module(out));
      // What is left has no annotation: the pass changes nothing more.
      EXPECT_EQ(run_passes(out, {"RewriteAnnotatedOps"}, ctx).lookup("main"), out.lookup("main")) << what;
      // PlanDevices finds a device for every value of what is left.
      EXPECT_NO_THROW(plan_devices(*out.lookup("main"), fallback == 1 ? "cpu" : "cuda")) << what;
    }
  }
}

}  // namespace
}  // namespace kiln
