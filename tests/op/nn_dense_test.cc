#include "op/numpy_ref.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

Shape shape_of(const Type& t) { return expect_tensor(t, "result").shape; }

// ---- type relations ----

TEST(NnDenseType, Shapes) {
  EXPECT_EQ(type_str(infer_op("nn.dense", {f32({1, 10}), f32({2, 10})})), "Tensor[(1, 2), float32]");
  EXPECT_EQ(shape_of(infer_op("nn.dense", {f32({-1, 7, 10}), f32({4, 10})})), (Shape{-1, 7, 4}));
  EXPECT_EQ(shape_of(infer_op("nn.dense", {f32({3, -1}), f32({4, 10})}, {{"units", 4}})), (Shape{3, 4}));
  EXPECT_EQ(type_str(infer_op("nn.dense", {tensor_type({2, 3}, DType::kInt8), tensor_type({5, 3}, DType::kInt8)},
                              {{"out_dtype", "int32"}})),
            "Tensor[(2, 5), int32]");
}

TEST(NnDenseType, Errors) {
  std::string e = infer_op_error("nn.dense", {f32({1, 10}), f32({2, 9})});
  EXPECT_NE(e.find("'data' (1, 10)"), std::string::npos) << e;
  EXPECT_NE(e.find("'weight' (2, 9)"), std::string::npos) << e;
  e = infer_op_error("nn.dense", {f32({1, 10}), f32({2, 5, 10})});
  EXPECT_NE(e.find("argument 'weight'"), std::string::npos) << e;
  EXPECT_NE(e.find("(2, 5, 10)"), std::string::npos) << e;
  e = infer_op_error("nn.dense", {f32({1, 10}), f32({2, 10})}, {{"units", 3}});
  EXPECT_NE(e.find("'units'"), std::string::npos) << e;
  e = infer_op_error("nn.dense", {f32({1, 10}), tensor_type({2, 10}, DType::kFloat16)});
  EXPECT_NE(e.find("float16"), std::string::npos) << e;
}

TEST(NnMatmulType, ShapesWithTransposesAndBroadcast) {
  EXPECT_EQ(shape_of(infer_op("nn.matmul", {f32({2, 3}), f32({3, 4})})), (Shape{2, 4}));
  EXPECT_EQ(shape_of(infer_op("nn.matmul", {f32({3, 2}), f32({4, 3})}, {{"transpose_a", true}, {"transpose_b", true}})),
            (Shape{2, 4}));
  EXPECT_EQ(shape_of(infer_op("nn.matmul", {f32({5, 1, 2, 3}), f32({6, 3, 4})})), (Shape{5, 6, 2, 4}));
  EXPECT_EQ(shape_of(infer_op("nn.matmul", {f32({-1, 2, 3}), f32({3, 4})})), (Shape{-1, 2, 4}));
  // Vectors, as numpy: their axis disappears from the result.
  EXPECT_EQ(shape_of(infer_op("nn.matmul", {f32({3}), f32({2, 3, 4})})), (Shape{2, 4}));
  EXPECT_EQ(shape_of(infer_op("nn.matmul", {f32({2, 3}), f32({3})})), (Shape{2}));
  EXPECT_EQ(shape_of(infer_op("nn.matmul", {f32({3}), f32({3})})), (Shape{}));
}

TEST(NnMatmulType, Errors) {
  std::string e = infer_op_error("nn.matmul", {f32({2, 3}), f32({4, 5})});
  EXPECT_NE(e.find("'tensor_a' (2, 3)"), std::string::npos) << e;
  EXPECT_NE(e.find("'tensor_b' (4, 5)"), std::string::npos) << e;
  e = infer_op_error("nn.matmul", {f32({2, 2, 3}), f32({3, 3, 4})});
  EXPECT_NE(e.find("batch dimensions"), std::string::npos) << e;
  EXPECT_NE(e.find("(2, 2, 3)"), std::string::npos) << e;
  EXPECT_NE(e.find("(3, 3, 4)"), std::string::npos) << e;
}

TEST(NnBatchMatmulType, Shapes) {
  EXPECT_EQ(shape_of(infer_op("nn.batch_matmul", {f32({4, 2, 3}), f32({4, 5, 3})})), (Shape{4, 2, 5}));
  EXPECT_EQ(shape_of(infer_op("nn.batch_matmul", {f32({4, 2, 3}), f32({1, 3, 5})}, {{"transpose_b", false}})),
            (Shape{4, 2, 5}));
  EXPECT_EQ(shape_of(infer_op("nn.batch_matmul", {f32({1, 3, 2}), f32({-1, 5, 3})}, {{"transpose_a", true}})),
            (Shape{-1, 2, 5}));
}

TEST(NnBatchMatmulType, Errors) {
  std::string e = infer_op_error("nn.batch_matmul", {f32({4, 2, 3}), f32({4, 3, 5})});  // y is (B, N, K)
  EXPECT_NE(e.find("'x' (4, 2, 3)"), std::string::npos) << e;
  EXPECT_NE(e.find("'y' (4, 3, 5)"), std::string::npos) << e;
  e = infer_op_error("nn.batch_matmul", {f32({4, 2, 3}), f32({2, 5, 3})});
  EXPECT_NE(e.find("cannot be broadcast"), std::string::npos) << e;
  e = infer_op_error("nn.batch_matmul", {f32({2, 3}), f32({2, 5, 3})});
  EXPECT_NE(e.find("argument 'x'"), std::string::npos) << e;
}

// ---- kernels, hand-worked ----

TEST(NnDenseKernel, HandWorked) {
  // [1 2 3] . [1 0 -1] = -2, [1 2 3] . [2 2 2] = 12; [4 5 6] -> -2, 30
  auto out = run_op("nn.dense", {tensor({2, 3}, {1, 2, 3, 4, 5, 6}), tensor({2, 3}, {1, 0, -1, 2, 2, 2})});
  expect_close(out[0], {-2, 12, -2, 30});
  // A long reduction exercises the unrolled partial sums: sum of 1..20 = 210.
  std::vector<double> ones(20, 1.0), counting;
  for (int i = 1; i <= 20; ++i) counting.push_back(i);
  out = run_op("nn.dense", {tensor({1, 20}, counting, DType::kFloat64), tensor({1, 20}, ones, DType::kFloat64)});
  expect_close(out[0], {210}, 0, 0);
  out = run_op("nn.dense", {tensor({1, 2}, {100, -100}, DType::kInt8), tensor({1, 2}, {100, 100}, DType::kInt8)},
               {{"out_dtype", "int32"}});
  EXPECT_EQ(out[0].int_at(0), 0);
}

// Integers into int32 wrap (as Relay's int32 arithmetic) rather than saturate, so generated code
// may sum in int32: 3 * 32767^2 = 3221028867 is 2^32 - 1073938429. Into int64 the sum is exact.
TEST(NnMatmulKernel, IntegersIntoInt32Wrap) {
  NDArray a = tensor({1, 3}, {32767, 32767, 32767}, DType::kInt16),
          b = tensor({3, 1}, {32767, 32767, 32767}, DType::kInt16);
  for (const char* op : {"nn.matmul", "nn.dense"}) {
    auto out = run_op(op, {a, std::string(op) == "nn.dense" ? tensor({1, 3}, {32767, 32767, 32767}, DType::kInt16) : b},
                      {{"out_dtype", "int32"}});
    EXPECT_EQ(out[0].int_at(0), -1073938429) << op;
  }
  EXPECT_EQ(run_op("nn.matmul", {a, b}, {{"out_dtype", "int64"}})[0].int_at(0), 3221028867);
}

TEST(NnMatmulKernel, HandWorked) {
  NDArray a = tensor({2, 2}, {1, 2, 3, 4});
  NDArray b = tensor({2, 2}, {5, 6, 7, 8});
  expect_close(run_op("nn.matmul", {a, b})[0], {19, 22, 43, 50});
  expect_close(run_op("nn.matmul", {a, b}, {{"transpose_a", true}})[0], {26, 30, 38, 44});
  expect_close(run_op("nn.matmul", {a, b}, {{"transpose_b", true}})[0], {17, 23, 39, 53});
  expect_close(run_op("nn.matmul", {a, b}, {{"transpose_a", true}, {"transpose_b", true}})[0], {23, 31, 34, 46});
  // Vector times matrix and matrix times vector.
  expect_close(run_op("nn.matmul", {tensor({2}, {1, 1}), b})[0], {12, 14});
  expect_close(run_op("nn.matmul", {a, tensor({2}, {1, -1})})[0], {-1, -1});
}

TEST(NnBatchMatmulKernel, HandWorkedWithBroadcast) {
  // x: two batches of 1x2; y: one (N=2, K=2) matrix shared by both.
  auto out = run_op("nn.batch_matmul", {tensor({2, 1, 2}, {1, 2, 3, 4}), tensor({1, 2, 2}, {1, 0, 1, 1})});
  EXPECT_EQ(out[0].shape(), (Shape{2, 1, 2}));
  expect_close(out[0], {1, 3, 3, 7});
  out = run_op("nn.batch_matmul", {tensor({1, 2, 1}, {1, 2}), tensor({2, 1, 2}, {1, 10, 100, 1000})},
               {{"transpose_b", false}});
  expect_close(out[0], {1, 10, 2, 20, 100, 1000, 200, 2000});
}

// ---- comparison with numpy ----

TEST(NnMatmulKernel, MatchesNumpyBroadcastTransposed) {
  NDArray a = sample_tensor({3, 1, 13, 7}, 11);  // transposed: (.., 7, 13)
  NDArray b = sample_tensor({4, 9, 13}, 12);     // transposed: (.., 13, 9)
  auto out = run_op("nn.matmul", {a, b}, {{"transpose_a", true}, {"transpose_b", true}});
  EXPECT_EQ(out[0].shape(), (Shape{3, 4, 7, 9}));
  std::string script = "a = " + np_array(a) + "\nb = " + np_array(b) + "\n" +
                       print_values("np.matmul(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2))");
  expect_close(out[0], run_python(script), 1e-5, 1e-5);
}

TEST(NnDenseKernel, MatchesNumpy) {
  NDArray x = sample_tensor({2, 3, 37}, 13);
  NDArray w = sample_tensor({11, 37}, 14);
  auto out = run_op("nn.dense", {x, w});
  std::string script = "x = " + np_array(x) + "\nw = " + np_array(w) + "\n" + print_values("x @ w.T");
  expect_close(out[0], run_python(script), 1e-5, 1e-5);
}

}  // namespace
}  // namespace kiln::testing
