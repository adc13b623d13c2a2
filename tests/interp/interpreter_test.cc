#include "kiln/interp/interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>

#include "kiln/ir/module.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/type_infer.h"
#include "kiln/support/error.h"
#include "op_test_util.h"
#include "test_util.h"

namespace kiln {
namespace {

using testing::expect_close;
using testing::f32;
using testing::tensor;

Type i32_scalar() { return tensor_type({}, DType::kInt32); }
Expr f32_const(Shape shape, const std::vector<double>& values) {
  return make_constant(tensor(std::move(shape), values));
}
Expr i32_const(double value) { return make_constant(NDArray::scalar(DType::kInt32, value)); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Interpreter, EvaluatesArithmetic) {
  Var x = make_var("x", f32({2, 2}));
  Var y = make_var("y", f32({2, 2}));
  // (x + y) * (x - y) + 0.5
  Expr body = call_op(
      "add", {call_op("multiply", {call_op("add", {x, y}), call_op("subtract", {x, y})}), f32_const({}, {0.5})});
  IRModule mod = IRModule::from_function(make_function({x, y}, body));
  Value out = interpret(mod, "main", {tensor({2, 2}, {1, 2, 3, 4}), tensor({2, 2}, {4, 3, 2, 1})});
  EXPECT_EQ(out.tensor().shape(), (Shape{2, 2}));
  expect_close(out.tensor(), {1 - 16 + 0.5, 4 - 9 + 0.5, 9 - 4 + 0.5, 16 - 1 + 0.5});
}

TEST(Interpreter, RunsOpsWithAttributesAndTupleResults) {
  Var x = make_var("x", f32({2, 3}));
  // relu(x) summed over axis 1, and split(x) into its two rows.
  Expr sums = call_op("sum", {call_op("nn.relu", {x})}, {{"axis", std::vector<int64_t>{1}}});
  Expr rows = call_op("split", {x}, {{"indices_or_sections", 2}, {"axis", 0}});
  Expr body = make_tuple({sums, make_tuple_get_item(rows, 1), make_tuple_get_item(rows, 0)});
  IRModule mod = IRModule::from_function(make_function({x}, body));
  Value out = interpret(mod, "main", {tensor({2, 3}, {1, -2, 3, -4, 5, 6})});
  ASSERT_TRUE(out.is_tuple());
  ASSERT_EQ(out.tuple().size(), 3u);
  expect_close(out.tuple()[0].tensor(), {4, 11});
  EXPECT_EQ(out.tuple()[1].tensor().shape(), (Shape{1, 3}));
  expect_close(out.tuple()[1].tensor(), {-4, 5, 6});
  expect_close(out.tuple()[2].tensor(), {1, -2, 3});
  EXPECT_EQ(out.flatten().size(), 3u);
}

TEST(Interpreter, PassesTupleArgumentsFlattenedToKernels) {
  Var x = make_var("x", f32({1, 2}));
  Var y = make_var("y", f32({1, 1}));
  Var pair = make_var("pair", tuple_type({f32({1, 2}), f32({1, 1})}));
  Expr body = call_op("concatenate", {make_tuple({make_tuple_get_item(pair, 1), x, y})}, {{"axis", 1}});
  IRModule mod = IRModule::from_function(make_function({x, y, pair}, body));
  Value pair_value(std::vector<Value>{tensor({1, 2}, {7, 8}), tensor({1, 1}, {9})});
  Value out = interpret(mod, "main", {tensor({1, 2}, {1, 2}), tensor({1, 1}, {3}), pair_value});
  EXPECT_EQ(out.tensor().shape(), (Shape{1, 4}));
  expect_close(out.tensor(), {9, 1, 2, 3});
}

// main(c) = if (c) { x * 2 } else { ghost + x }, where %ghost is never bound: evaluating
// the else branch fails, so a correct interpreter must not touch it when c is true.
IRModule module_with_failing_else() {
  Var c = make_var("c", tensor_type({}, DType::kBool));
  Var x = make_var("x", f32({2}));
  Var ghost = make_var("ghost", f32({2}));
  Expr body = make_if(c, call_op("multiply", {x, f32_const({}, {2})}), call_op("add", {ghost, x}));
  return IRModule::from_function(make_function({c, x}, body));
}

TEST(Interpreter, IfEvaluatesOnlyTheChosenBranch) {
  IRModule mod = module_with_failing_else();
  Value out = interpret(mod, "main", {NDArray::scalar(DType::kBool, 1), tensor({2}, {3, -1})});
  expect_close(out.tensor(), {6, -2});
  // The other way round the broken branch is evaluated, and says why.
  std::string message = error_of([&] {
    interpret(mod, "main", {NDArray::scalar(DType::kBool, 0), tensor({2}, {3, -1})});
  });
  EXPECT_TRUE(contains(message, "%ghost")) << message;
}

TEST(Interpreter, IfConditionComputedByAnOp) {
  Var x = make_var("x", f32({}));
  // if (x < 0) { -x } else { x }
  Expr body = make_if(call_op("less", {x, f32_const({}, {0})}), call_op("negative", {x}), x);
  IRModule mod = IRModule::from_function(make_function({x}, body));
  EXPECT_EQ(interpret(mod, "main", {NDArray::scalar(DType::kFloat32, -2.5)}).tensor().at(0), 2.5);
  EXPECT_EQ(interpret(mod, "main", {NDArray::scalar(DType::kFloat32, 4)}).tensor().at(0), 4);
}

TEST(Interpreter, EvaluatesLetBindings) {
  Var x = make_var("x", f32({2}));
  Var a = make_var("a");
  Var b = make_var("b", f32({2}));
  // let %a = x + 1; let %b = a * a; b - a
  Expr body = make_let(a, call_op("add", {x, f32_const({}, {1})}),
                       make_let(b, call_op("multiply", {a, a}), call_op("subtract", {b, a})));
  IRModule mod = IRModule::from_function(make_function({x}, body));
  Value out = interpret(mod, "main", {tensor({2}, {1, 4})});
  expect_close(out.tensor(), {4 - 2, 25 - 5});
}

TEST(Interpreter, CallsGlobalFunctions) {
  Var v = make_var("v", f32({3}));
  Function square = make_function({v}, call_op("multiply", {v, v}));
  Var x = make_var("x", f32({3}));
  GlobalVar sq = make_global_var("square");
  Function main = make_function({x}, call_op("add", {make_call(sq, {make_call(sq, {x})}), x}));
  IRModule mod;
  mod.add("square", square);
  mod.add("main", main);
  Value out = interpret(mod, "main", {tensor({3}, {1, 2, -3})});
  expect_close(out.tensor(), {1 + 1, 16 + 2, 81 - 3});
  expect_close(interpret(mod, "square", {tensor({3}, {2, 3, 4})}).tensor(), {4, 9, 16});
}

TEST(Interpreter, CallsLocalClosuresCapturingVariables) {
  Var x = make_var("x", f32({2}));
  Var y = make_var("y", f32({2}));
  Var v = make_var("v", f32({2}));
  Var f = make_var("f");
  // let %f = fn (%v) { v + x }; f(f(y)) + (fn (%v) { v * x })(y)
  Function add_x = make_function({v}, call_op("add", {v, x}));
  Var w = make_var("w", f32({2}));
  Function times_x = make_function({w}, call_op("multiply", {w, x}));
  Expr body = make_let(f, add_x, call_op("add", {make_call(f, {make_call(f, {y})}), make_call(times_x, {y})}));
  IRModule mod = IRModule::from_function(make_function({x, y}, body));
  Value out = interpret(mod, "main", {tensor({2}, {10, 20}), tensor({2}, {1, 2})});
  expect_close(out.tensor(), {1 + 20 + 10, 2 + 40 + 40});
}

TEST(Interpreter, CallsPrimitiveFunctions) {
  Var p0 = make_var("p0", f32({2}));
  Var p1 = make_var("p1", f32({2}));
  Function fused =
      make_function({p0, p1}, call_op("nn.relu", {call_op("subtract", {p0, p1})}), nullptr, Attrs{{"Primitive", 1}});
  Var x = make_var("x", f32({2}));
  Var y = make_var("y", f32({2}));
  IRModule mod = IRModule::from_function(make_function({x, y}, make_call(fused, {x, y})));
  expect_close(interpret(mod, "main", {tensor({2}, {5, 1}), tensor({2}, {2, 3})}).tensor(), {3, 0});
}

// @loop(i, acc, n) = if (i < n) { @loop(i + 1, acc * 2 + 1) } else { acc }: a counted loop.
IRModule counted_loop_module() {
  Var i = make_var("i", i32_scalar());
  Var acc = make_var("acc", f32({2}));
  Var n = make_var("n", i32_scalar());
  GlobalVar loop = make_global_var("loop");
  Expr again =
      make_call(loop, {call_op("add", {i, i32_const(1)}),
                       call_op("add", {call_op("multiply", {acc, f32_const({}, {2})}), f32_const({}, {1})}), n});
  Function fn = make_function({i, acc, n}, make_if(call_op("less", {i, n}), again, acc), f32({2}));
  IRModule mod;
  mod.add("loop", fn);
  return mod;
}

TEST(Interpreter, RecursesThroughIf) {
  IRModule mod = counted_loop_module();
  auto run = [&](int n) {
    return interpret(mod, "loop",
                     {NDArray::scalar(DType::kInt32, 0), tensor({2}, {1, -3}), NDArray::scalar(DType::kInt32, n)});
  };
  // acc_n = 2^n * (acc_0 + 1) - 1
  expect_close(run(10).tensor(), {2047, -2049});
  expect_close(run(0).tensor(), {1, -3});
  expect_close(run(1).tensor(), {3, -5});
  // Five thousand nested calls need more stack than a thread has: the interpreter moves
  // to fresh stack segments as it goes deeper.
  Value deep = interpret(
      mod, "loop", {NDArray::scalar(DType::kInt32, 0), tensor({2}, {-1, -1}), NDArray::scalar(DType::kInt32, 5000)});
  expect_close(deep.tensor(), {-1, -1});
}

TEST(Interpreter, EvaluatesA50000NodeChainWithoutRecursion) {
  constexpr int kLength = 50000;
  Var x = make_var("x", f32({2}));
  Expr one = f32_const({}, {1});
  Expr e = x;
  for (int i = 0; i < kLength; ++i) e = call_op("add", {e, one});
  IRModule mod = IRModule::from_function(make_function({x}, e));
  expect_close(interpret(mod, "main", {tensor({2}, {0, -10})}).tensor(), {kLength, kLength - 10});
}

TEST(Interpreter, EvaluatesA50000DeepLetChain) {
  constexpr int kLength = 50000;
  Var x = make_var("x", f32({2}));
  Expr one = f32_const({}, {1});
  std::vector<Var> vars{x};
  for (int i = 0; i < kLength; ++i) vars.push_back(make_var(cat("v", i)));
  // let %v0 = x + 1; let %v1 = v0 + 1; ...; v_last * 2, built innermost first.
  Expr e = call_op("multiply", {vars.back(), f32_const({}, {2})});
  for (int i = kLength; i >= 1; --i) e = make_let(vars[i], call_op("add", {vars[i - 1], one}), e);
  IRModule mod = IRModule::from_function(make_function({x}, e));
  expect_close(interpret(mod, "main", {tensor({2}, {0, 1})}).tensor(), {2.0 * kLength, 2.0 * (kLength + 1)});
}

// Resets the peak resident memory of the process (Linux); false when not permitted.
bool reset_peak_memory() { return static_cast<bool>(std::ofstream("/proc/self/clear_refs") << "5" << std::flush); }
// Peak resident memory in KiB, or -1 when unknown.
int64_t peak_memory_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

// GCC says it builds with AddressSanitizer by __SANITIZE_ADDRESS__, clang by a feature test.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

TEST(Interpreter, FreesEachValueAfterItsLastUse) {
  if (kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer keeps freed memory in quarantine";
  // 100 chained adds of 4 MiB tensors: 400 MiB if intermediate values were kept.
  constexpr int64_t kElements = int64_t{1} << 20;
  Var x = make_var("x", f32({kElements}));
  Expr e = x;
  for (int i = 0; i < 100; ++i) e = call_op("add", {e, x});
  IRModule mod = IRModule::from_function(make_function({x}, e));
  NDArray input = NDArray::from_doubles({kElements}, DType::kFloat32, std::vector<double>(kElements, 0.5));
  infer_types(mod);
  if (!reset_peak_memory() || peak_memory_kib() < 0) GTEST_SKIP() << "cannot measure peak memory";
  int64_t before = peak_memory_kib();
  Value out = interpret(mod, "main", {input});
  int64_t growth_mib = (peak_memory_kib() - before) / 1024;
  EXPECT_EQ(out.tensor().at(kElements - 1), 50.5);
  EXPECT_LT(growth_mib, 64) << "intermediate values must be freed after their last use";
}

TEST(Interpreter, SharedSubexpressionsAreEvaluatedOnce) {
  // A diamond lattice: each level doubles the number of paths but not of nodes. Without
  // memoisation 40 levels would take 2^40 kernel calls.
  Var x = make_var("x", f32({1}));
  Expr e = x;
  for (int i = 0; i < 40; ++i) e = call_op("add", {call_op("negative", {e}), call_op("negative", {e})});
  IRModule mod = IRModule::from_function(make_function({x}, e));
  expect_close(interpret(mod, "main", {tensor({1}, {1})}).tensor(), {std::ldexp(1.0, 40)}, 0, 1e-6);
}

TEST(Interpreter, ReportsArgumentMismatchesNamingTheParameter) {
  Var x = make_var("x", f32({2, 3}));
  Var y = make_var("y", tensor_type({3}, DType::kInt64));
  IRModule mod = IRModule::from_function(make_function({x, y}, x));
  NDArray y_ok = NDArray::empty({3}, DType::kInt64);

  std::string message = error_of([&] { interpret(mod, "main", {NDArray::empty({3, 2}, DType::kFloat32), y_ok}); });
  EXPECT_TRUE(contains(message, "%x")) << message;
  EXPECT_TRUE(contains(message, "Tensor[(2, 3), float32]")) << message;
  EXPECT_TRUE(contains(message, "Tensor[(3, 2), float32]")) << message;

  message = error_of([&] {
    interpret(mod, "main", {NDArray::empty({2, 3}, DType::kFloat32), tensor({3}, {1, 2, 3})});
  });
  EXPECT_TRUE(contains(message, "%y")) << message;
  EXPECT_TRUE(contains(message, "Tensor[(3), int64]")) << message;
  EXPECT_TRUE(contains(message, "Tensor[(3), float32]")) << message;

  message = error_of([&] { interpret(mod, "main", {NDArray::empty({2, 3}, DType::kFloat32)}); });
  EXPECT_TRUE(contains(message, "expected 2, found 1")) << message;

  message = error_of([&] { interpret(mod, "nope", {}); });
  EXPECT_TRUE(contains(message, "nope")) << message;
}

TEST(Interpreter, ReportsTypeErrorsBeforeEvaluating) {
  Var x = make_var("x", f32({2}));
  Var y = make_var("y", f32({3}));
  IRModule mod = IRModule::from_function(make_function({x, y}, call_op("add", {x, y})));
  std::string message = error_of([&] { interpret(mod, "main", {tensor({2}, {1, 2}), tensor({3}, {1, 2, 3})}); });
  EXPECT_TRUE(contains(message, "add")) << message;
}

TEST(Interpreter, SpecialisesUnknownDimensionsToTheArguments) {
  Var x = make_var("x", f32({kAnyDim, 3}));
  // sum(relu(x + x), axis=1)
  Expr body = call_op("sum", {call_op("nn.relu", {call_op("add", {x, x})})}, {{"axis", std::vector<int64_t>{1}}});
  IRModule mod = IRModule::from_function(make_function({x}, body));
  Value two = interpret(mod, "main", {tensor({2, 3}, {1, -2, 3, 4, 5, -6})});
  EXPECT_EQ(two.tensor().shape(), (Shape{2}));
  expect_close(two.tensor(), {8, 18});
  Value four = interpret(mod, "main", {tensor({4, 3}, {1, 1, 1, 2, 2, 2, -3, 3, 3, 0, 0, 0})});
  EXPECT_EQ(four.tensor().shape(), (Shape{4}));
  expect_close(four.tensor(), {6, 12, 12, 0});
  // '?' accepts any extent but not another rank.
  std::string message = error_of([&] { interpret(mod, "main", {NDArray::empty({2, 3, 1}, DType::kFloat32)}); });
  EXPECT_TRUE(contains(message, "Tensor[(?, 3), float32]")) << message;
  EXPECT_TRUE(contains(message, "Tensor[(2, 3, 1), float32]")) << message;
  message = error_of([&] { interpret(mod, "main", {NDArray::empty({2, 4}, DType::kFloat32)}); });
  EXPECT_TRUE(contains(message, "%x")) << message;
}

TEST(Interpreter, SpecialisesResultsOfFunctionsWithUnknownDimensions) {
  // @double(v: (?)) = v + v; main(x: (3)) = relu(@double(x)) * x: the call's declared type
  // has an unknown dim, so main's ops must size their outputs from the actual values.
  Var v = make_var("v", f32({kAnyDim}));
  Function twice = make_function({v}, call_op("add", {v, v}));
  Var x = make_var("x", f32({3}));
  Var y = make_var("y", f32({kAnyDim, kAnyDim}));
  Expr doubled = make_call(make_global_var("double"), {x});
  Expr body = make_tuple({call_op("multiply", {call_op("nn.relu", {doubled}), x}),
                          call_op("sum", {y}, {{"axis", std::vector<int64_t>{0}}})});
  IRModule mod;
  mod.add("double", twice);
  mod.add("main", make_function({x, y}, body));
  Value out = interpret(mod, "main", {tensor({3}, {1, -2, 3}), tensor({2, 2}, {1, 2, 3, 4})});
  expect_close(out.tuple()[0].tensor(), {2, 0, 18});
  EXPECT_EQ(out.tuple()[1].tensor().shape(), (Shape{2}));
  expect_close(out.tuple()[1].tensor(), {4, 6});
}

TEST(InterpretExpr, EvaluatesClosedExpressions) {
  Expr e = call_op("multiply", {f32_const({2}, {1.5, -2}), call_op("exp", {f32_const({2}, {0, 0})})});
  expect_close(interpret_expr(e).tensor(), {1.5, -2});

  Var v = make_var("v", f32({1}));
  Expr call = make_call(make_function({v}, call_op("add", {v, v})), {f32_const({1}, {21})});
  expect_close(interpret_expr(call).tensor(), {42});

  Expr tuple = make_tuple_get_item(make_tuple({f32_const({}, {1}), f32_const({}, {2})}), 1);
  EXPECT_EQ(interpret_expr(tuple).tensor().at(0), 2);
}

TEST(InterpretExpr, ResolvesGlobalsThroughTheModule) {
  IRModule mod = counted_loop_module();
  Expr e = make_call(make_global_var("loop"), {i32_const(0), f32_const({2}, {1, 2}), i32_const(3)});
  expect_close(interpret_expr(e, &mod).tensor(), {15, 23});
  std::string message = error_of([&] { interpret_expr(e); });
  EXPECT_TRUE(contains(message, "@loop")) << message;
}

TEST(InterpretExpr, RejectsFreeVariables) {
  Var free = make_var("free", f32({2}));
  std::string message = error_of([&] { interpret_expr(call_op("add", {free, free})); });
  EXPECT_TRUE(contains(message, "%free")) << message;
}

TEST(Interpreter, ReturnsClosuresAsValues) {
  Var x = make_var("x", f32({1}));
  Var v = make_var("v", f32({1}));
  IRModule mod = IRModule::from_function(make_function({x}, make_function({v}, call_op("add", {v, x}))));
  Value out = interpret(mod, "main", {tensor({1}, {1})});
  EXPECT_TRUE(out.is_closure());
  EXPECT_FALSE(out.is_tensor());
  std::string message = error_of([&] { out.tensor(); });
  EXPECT_TRUE(contains(message, "expected a tensor value")) << message;
}

TEST(Interpreter, RunsModulesWrittenAsText) {
  IRModule mod = parse_module(R"(
def @fact(%n: int64, %acc: int64) -> int64 {
  if (less_equal(%n, 1i64)) { %acc } else { @fact(subtract(%n, 1i64), multiply(%acc, %n)) }
}
def @main(%n: int64, %x: Tensor[(2), float32]) {
  let %f = @fact(%n, 1i64);
  %0 = fn (%p: Tensor[(2), float32]) { exp(%p) };
  (%f, %0(%x))
}
)");
  Value out = interpret(mod, "main", {NDArray::scalar(DType::kInt64, 10), tensor({2}, {0, 1})});
  EXPECT_EQ(out.tuple()[0].tensor().int_at(0), 3628800);
  expect_close(out.tuple()[1].tensor(), {1, std::exp(1.0)});
}

}  // namespace
}  // namespace kiln
