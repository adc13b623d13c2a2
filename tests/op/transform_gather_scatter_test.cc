// gather_elements, scatter_elements, gather_nd, scatter_nd: type relations, errors, and the
// reference kernels against numpy (ONNX's reference formulas written with numpy indexing).
#include "op/transform_test_util.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

using Ints = std::vector<int64_t>;

Type i64(Shape shape) { return tensor_type(std::move(shape), DType::kInt64); }
NDArray ints_tensor(Shape shape, const std::vector<double>& values) { return tensor(shape, values, DType::kInt64); }

TEST(TransformGatherElements, TypeRelationAndErrors) {
  EXPECT_EQ(type_str(infer_op("gather_elements", {f32({3, 4}), i64({2, 4})}, {{"axis", int64_t{0}}})),
            "Tensor[(2, 4), float32]");
  EXPECT_EQ(type_str(infer_op("gather_elements", {f32({-1, 4}), i64({-1, 2})}, {{"axis", int64_t{-1}}})),
            "Tensor[(?, 2), float32]");
  expect_mentions(infer_op_error("gather_elements", {f32({3, 4}), i64({2})}),
                  {"op 'gather_elements'", "argument 'indices'", "(3, 4)", "rank 2", "rank 1 (2)"});
  expect_mentions(infer_op_error("gather_elements", {f32({3, 4}), f32({3, 4})}),
                  {"op 'gather_elements'", "'indices'", "integers", "float32"});
  expect_mentions(infer_op_error("gather_elements", {f32({3, 4}), i64({3, 4})}, {{"axis", int64_t{2}}}),
                  {"op 'gather_elements'", "axis out of range", "[-2, 2)"});
}

TEST(TransformGatherElements, KernelAgainstNumpy) {
  NDArray data = iota({3, 4});
  NDArray indices = ints_tensor({2, 4}, {0, 2, -1, 1, 2, -3, 0, 1});
  for (int64_t axis : {0, 1}) {
    NDArray out = run_op("gather_elements", {data, indices}, {{"axis", axis}})[0];
    auto ref = numpy_eval("d = " + numpy_iota({3, 4}) +
                          "\ni = np.array([[0,2,-1,1],[2,-3,0,1]])\n"
                          "a = " +
                          std::to_string(axis) +
                          "\nd = d if a == 0 else d[:2]  # numpy wants the other extents equal\n"
                          "r = np.take_along_axis(d, np.where(i < 0, i + d.shape[a], i), axis=a)");
    expect_same(out, ref[0]);
  }
  EXPECT_THROW(run_op("gather_elements", {data, ints_tensor({1, 1}, {4})}, {{"axis", int64_t{0}}}), Error);
}

TEST(TransformScatterElements, TypeRelationAndErrors) {
  EXPECT_EQ(type_str(infer_op("scatter_elements", {f32({3, 3}), i64({2, 3}), f32({2, 3})})), "Tensor[(3, 3), float32]");
  expect_mentions(infer_op_error("scatter_elements", {f32({3, 3}), i64({2, 3}), f32({3, 2})}),
                  {"op 'scatter_elements'", "'updates'", "(2, 3)", "(3, 2)"});
  expect_mentions(infer_op_error("scatter_elements", {f32({3, 3}), i64({2, 3}), f32({2, 3})}, {{"reduction", "mean"}}),
                  {"op 'scatter_elements'", "'reduction'", "mean"});
}

TEST(TransformScatterElements, ReductionsAgainstNumpy) {
  NDArray data = iota({3, 3});
  NDArray indices = ints_tensor({2, 3}, {1, 0, 2, 1, -1, 0});  // duplicate (1, 0)
  NDArray updates = tensor({2, 3}, {10, 20, 30, 40, 50, 60});
  for (std::string reduction : {"update", "add", "mul", "max"}) {
    NDArray out =
        run_op("scatter_elements", {data, indices, updates}, {{"axis", int64_t{0}}, {"reduction", reduction}})[0];
    std::string op = reduction == "update" ? "u"
                     : reduction == "add"  ? "o + u"
                     : reduction == "mul"  ? "o * u"
                                           : "max(o, u)";
    auto ref = numpy_eval("o_ = " + numpy_iota({3, 3}) +
                          ".astype(float)\ni = np.array([[1,0,2],[1,-1,0]])\nup = np.array([[10.,20,30],[40,50,60]])\n"
                          "for k in range(2):\n"
                          "  for j in range(3):\n"
                          "    o = o_[i[k,j] % 3, j]; u = up[k,j]\n"
                          "    o_[i[k,j] % 3, j] = " +
                          op + "\nr = o_");
    expect_same(out, ref[0]);
  }
}

TEST(TransformGatherNd, TypeRelationAndErrors) {
  // ONNX's indices (..., M) arrive transposed: (M, ...).
  EXPECT_EQ(type_str(infer_op("gather_nd", {f32({2, 3, 4}), i64({2, 5})})), "Tensor[(5, 4), float32]");
  EXPECT_EQ(type_str(infer_op("gather_nd", {f32({2, 3, 4}), i64({1, 2, 5})}, {{"batch_dims", int64_t{1}}})),
            "Tensor[(2, 5, 4), float32]");
  EXPECT_EQ(type_str(infer_op("gather_nd", {f32({2, 3}), i64({2})})), "float32");
  expect_mentions(infer_op_error("gather_nd", {f32({2, 3}), i64({3, 5})}),
                  {"op 'gather_nd'", "length 3", "(2, 3)", "M + batch_dims <= 2"});
  expect_mentions(infer_op_error("gather_nd", {f32({2, 3}), i64({1, 4})}, {{"batch_dims", int64_t{1}}}),
                  {"op 'gather_nd'", "batch dim 0", "(2, 3)", "(1, 4)"});
}

TEST(TransformGatherNd, KernelAgainstNumpy) {
  NDArray data = iota({2, 3, 4});
  // Indices (M=2, 3): coordinates (1, 2), (0, -1), (1, 0).
  NDArray idx = ints_tensor({2, 3}, {1, 0, 1, 2, -1, 0});
  expect_same(run_op("gather_nd", {data, idx})[0],
              numpy_eval("d = " + numpy_iota({2, 3, 4}) + "\nr = d[[1, 0, 1], [2, 2, 0]]")[0]);
  // batch_dims=1: indices (M=1, 2 batches, 2 per batch) pick rows of each batch.
  NDArray batched = ints_tensor({1, 2, 2}, {2, 0, 1, 1});
  expect_same(run_op("gather_nd", {data, batched}, {{"batch_dims", int64_t{1}}})[0],
              numpy_eval("d = " + numpy_iota({2, 3, 4}) + "\nr = np.stack([d[0][[2, 0]], d[1][[1, 1]]])")[0]);
}

TEST(TransformScatterNd, TypeRelationErrorsAndKernel) {
  EXPECT_EQ(type_str(infer_op("scatter_nd", {f32({4, 3}), i64({1, 2}), f32({2, 3})})), "Tensor[(4, 3), float32]");
  expect_mentions(infer_op_error("scatter_nd", {f32({4, 3}), i64({1, 2}), f32({2, 4})}),
                  {"op 'scatter_nd'", "'updates'", "(2, 3)", "(2, 4)"});
  NDArray data = iota({4, 3});
  NDArray idx = ints_tensor({1, 3}, {3, 0, 3});
  NDArray updates = tensor({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_same(run_op("scatter_nd", {data, idx, updates}, {{"mode", "add"}})[0],
              numpy_eval("d = " + numpy_iota({4, 3}) +
                         ".astype(float)\nu = np.arange(1., 10).reshape(3, 3)\n"
                         "np.add.at(d, [3, 0, 3], u)\nr = d")[0]);
  expect_same(run_op("scatter_nd", {data, idx, updates}, {{"mode", "mul"}})[0],
              numpy_eval("d = " + numpy_iota({4, 3}) +
                         ".astype(float)\nu = np.arange(1., 10).reshape(3, 3)\n"
                         "np.multiply.at(d, [3, 0, 3], u)\nr = d")[0]);
  NDArray ints_data = iota({4, 3}, DType::kInt32);
  NDArray replaced =
      run_op("scatter_nd", {ints_data, ints_tensor({1, 1}, {1}), tensor({1, 3}, {7, 8, 9}, DType::kInt32)})[0];
  EXPECT_EQ(replaced.to_ints(), (std::vector<int64_t>{0, 1, 2, 7, 8, 9, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(replaced.dtype(), DType::kInt32);
}

}  // namespace
}  // namespace kiln::testing
