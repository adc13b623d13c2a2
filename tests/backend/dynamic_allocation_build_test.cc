// The graph executor's caching allocator: tensors of run-time shape (outputs of kernels with an
// output function, a loop's carried values and scan outputs) are views of blocks the executor
// keeps, so running a model again at the same or a smaller shape allocates nothing, and a
// larger shape grows the blocks once; outputs stay those of the interpreter, and a tensor
// get_output returned is not overwritten by later runs.
#include <gtest/gtest.h>

#include "kiln/backend/build.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/runtime/graph_executor.h"
#include "kiln/support/strings.h"
#include "runtime/runtime_test_util.h"

namespace kiln {
namespace {

// dyn.full and dyn.reshape size their results from the values of %s and %r; add and multiply
// then read tensors of run-time shape.
const char* kRunTimeShapes = R"(
def @main(%v: float32, %s: Tensor[(2), int64], %x: Tensor[(12), float32], %r: Tensor[(2), int64]) {
  %0 = dyn.full(%v, %s);
  %1 = dyn.reshape(%x, %r);
  (add(%0, 1f), multiply(%1, 2f))
})";

// A loop whose trip count is an input: one carried value, every value scanned.
const char* kCountingLoop = R"(
def @main(%m: int64, %a: Tensor[(3), float32]) {
  %0 = fn (%i: int64, %c: bool, %s: Tensor[(3), float32]) { %1 = add(%s, %a); (%c, %1, %1) };
  %2 = loop(%m, True, %a) %0;
  (%2.0, %2.1)
})";

// A carried value whose extent doubles every iteration: typed '?' in the body.
const char* kGrowingLoop = R"(
def @main(%m: int64, %a: Tensor[(2), float32], %r: Tensor[(1), int64]) {
  %0 = fn (%i: int64, %c: bool, %s: Tensor[(?), float32]) { %1 = dyn.tile(%s, %r); (%c, %1) };
  %2 = loop(%m, True, %a) %0;
  %2.0
})";

NDArray shape_tensor(int64_t rows, int64_t cols) { return NDArray::from_vector<int64_t>({2}, {rows, cols}); }

// An executor of `text` whose devices it counts the allocations of.
struct CountedExecutor {
  runtime_test::TempDir dir;
  std::vector<Device*> devices;
  std::unique_ptr<GraphExecutor> executor;

  CountedExecutor(const std::string& text, const std::vector<std::string>& outputs) {
    IRModule mod = parse_module(text);
    std::vector<std::string> inputs;
    for (const Var& p : mod.lookup("main")->params) inputs.push_back(p->name);
    write_artifact(build(mod, {}, inputs, outputs), dir.file("m.kiln"));
    executor = std::make_unique<GraphExecutor>(Artifact::load(dir.file("m.kiln")), 1, [this](int64_t) {
      auto device = std::make_unique<CpuDevice>();
      devices.push_back(device.get());
      return device;
    });
  }

  size_t allocations() const {
    size_t n = 0;
    for (const Device* d : devices) n += d->num_allocations();
    return n;
  }
};

void expect_equal(const NDArray& got, const NDArray& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.numel(); ++i) EXPECT_EQ(got.at(i), want.at(i)) << what << " element " << i;
}

class RunTimeShapes : public ::testing::Test {
 protected:
  // Runs the model with %s = rows x cols, %r = cols x rows2; checks it against the interpreter
  // and returns how many blocks the run allocated.
  size_t run(int64_t rows, int64_t cols, int64_t reshape_rows) {
    std::vector<float> x(12);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 3;
    const NDArray v = NDArray::scalar(DType::kFloat32, 0.5), s = shape_tensor(rows, cols),
                  xs = NDArray::from_vector<float>({12}, x), r = shape_tensor(reshape_rows, 12 / reshape_rows);
    GraphExecutor& e = *model.executor;
    e.set_input("v", v);
    e.set_input("s", s);
    e.set_input("x", xs);
    e.set_input("r", r);
    const size_t before = model.allocations();
    e.run();
    const size_t allocated = model.allocations() - before;
    std::vector<NDArray> want =
        interpret(parse_module(kRunTimeShapes), "main", {Value(v), Value(s), Value(xs), Value(r)}).flatten();
    const std::string what = cat(rows, "x", cols, ", reshape rows ", reshape_rows);
    expect_equal(e.get_output(0), want[0], what + " full");
    expect_equal(e.get_output(1), want[1], what + " reshape");
    return allocated;
  }

  CountedExecutor model{kRunTimeShapes, {"f", "y"}};
};

TEST_F(RunTimeShapes, AllocatesOnTheFirstRunOnly) {
  EXPECT_GT(run(3, 4, 3), 0u);
  EXPECT_EQ(run(3, 4, 3), 0u);
  EXPECT_EQ(run(3, 4, 3), 0u);
}

TEST_F(RunTimeShapes, ALargerShapeGrowsOnceAndASmallerOneReuses) {
  run(3, 4, 3);
  EXPECT_GT(run(20, 30, 3), 0u);
  EXPECT_EQ(run(20, 30, 3), 0u);
  EXPECT_EQ(run(2, 2, 6), 0u);
  EXPECT_EQ(run(20, 30, 4), 0u);
}

TEST_F(RunTimeShapes, AnOutputTakenIsNotOverwrittenByTheNextRun) {
  run(2, 3, 3);
  const NDArray first = model.executor->get_output(0);
  run(2, 3, 3);
  model.executor->set_input("v", NDArray::scalar(DType::kFloat32, -7));
  model.executor->run();
  for (int64_t i = 0; i < first.numel(); ++i) EXPECT_EQ(first.at(i), 1.5) << i;
  EXPECT_EQ(model.executor->get_output(0).at(0), -6);
}

TEST(LoopBlocks, CarriedAndScannedValuesKeepTheirBlocksAcrossExecutions) {
  CountedExecutor model(kCountingLoop, {"s", "all"});
  GraphExecutor& e = *model.executor;
  const NDArray a = NDArray::from_vector<float>({3}, {1, 2, 3});
  e.set_input("a", a);
  auto run = [&](int64_t m) {
    e.set_input("m", NDArray::from_vector<int64_t>({}, {m}));
    const size_t before = model.allocations();
    e.run();
    const NDArray s = e.get_output(0), all = e.get_output(1);
    EXPECT_EQ(s.shape(), Shape({3}));
    EXPECT_EQ(all.shape(), Shape({m, 3}));
    for (int64_t k = 0; k < 3; ++k) {
      EXPECT_EQ(s.at(k), static_cast<double>((m + 1) * (k + 1))) << "m = " << m;
      for (int64_t i = 0; i < m; ++i) EXPECT_EQ(all.at(i * 3 + k), static_cast<double>((i + 2) * (k + 1)));
    }
    return model.allocations() - before;
  };
  EXPECT_GT(run(5), 0u);
  EXPECT_EQ(run(5), 0u);
  EXPECT_EQ(run(2), 0u);
  EXPECT_GT(run(40), 0u);  // the scan output grows
  EXPECT_EQ(run(40), 0u);
  EXPECT_EQ(run(0), 0u);
  EXPECT_EQ(run(7), 0u);
}

TEST(LoopBlocks, CarriedValueOfChangingShapeMatchesTheInterpreter) {
  CountedExecutor model(kGrowingLoop, {"s"});
  GraphExecutor& e = *model.executor;
  const NDArray a = NDArray::from_vector<float>({2}, {1, -2}), r = NDArray::from_vector<int64_t>({1}, {1});
  e.set_input("a", a);
  e.set_input("r", r);
  const IRModule mod = parse_module(kGrowingLoop);
  for (int64_t m : {0, 1, 3}) {
    const NDArray trips = NDArray::from_vector<int64_t>({}, {m});
    e.set_input("m", trips);
    e.run();
    std::vector<NDArray> want = interpret(mod, "main", {Value(trips), Value(a), Value(r)}).flatten();
    expect_equal(e.get_output(0), want[0], cat("m = ", m));
  }
  // Doubling extents: r = 2 makes s 2 * 2^m long.
  e.set_input("r", NDArray::from_vector<int64_t>({1}, {2}));
  e.set_input("m", NDArray::from_vector<int64_t>({}, {4}));
  e.run();
  EXPECT_EQ(e.get_output(0).shape(), Shape({32}));
  const size_t before = model.allocations();
  e.set_input("m", NDArray::from_vector<int64_t>({}, {3}));
  e.run();
  EXPECT_EQ(e.get_output(0).shape(), Shape({16}));
  EXPECT_EQ(model.allocations(), before);
}

}  // namespace
}  // namespace kiln
