#include <cmath>

#include "op/numpy_ref.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

// ---- type relations ----

TEST(NnBatchNormType, TupleOfOutputAndStatistics) {
  Type t = infer_op("nn.batch_norm", {f32({1, 3, 4, 4}), f32({3}), f32({3}), f32({3}), f32({3})});
  const TupleTypeNode* tuple = as_tuple(t);
  ASSERT_NE(tuple, nullptr) << type_str(t);
  ASSERT_EQ(tuple->fields.size(), 3u);
  EXPECT_EQ(type_str(tuple->fields[0]), "Tensor[(1, 3, 4, 4), float32]");
  EXPECT_EQ(type_str(tuple->fields[1]), "Tensor[(3), float32]");
  EXPECT_EQ(type_str(tuple->fields[2]), "Tensor[(3), float32]");
}

TEST(NnBatchNormType, UnknownDimsAndOtherAxis) {
  Type t = infer_op("nn.batch_norm", {f32({-1, 3, -1, -1}), f32({3}), f32({3}), f32({3}), f32({3})});
  EXPECT_EQ(type_str(as_tuple(t)->fields[0]), "Tensor[(?, 3, ?, ?), float32]");
  t = infer_op("nn.batch_norm", {f32({2, -1}), f32({5}), f32({5}), f32({5}), f32({5})});
  EXPECT_EQ(type_str(as_tuple(t)->fields[0]), "Tensor[(2, ?), float32]");
  t = infer_op("nn.batch_norm", {f32({2, 7, 5}), f32({5}), f32({5}), f32({5}), f32({5})}, {{"axis", -1}});
  EXPECT_EQ(type_str(as_tuple(t)->fields[0]), "Tensor[(2, 7, 5), float32]");
}

TEST(NnBatchNormType, Errors) {
  std::string e = infer_op_error("nn.batch_norm", {f32({1, 3, 4, 4}), f32({4}), f32({3}), f32({3}), f32({3})});
  EXPECT_NE(e.find("argument 'gamma'"), std::string::npos) << e;
  EXPECT_NE(e.find("'data' (1, 3, 4, 4)"), std::string::npos) << e;
  EXPECT_NE(e.find("expected (3), found (4)"), std::string::npos) << e;
  e = infer_op_error("nn.batch_norm", {f32({1, 3, 4, 4}), f32({3}), f32({3}), f32({3}), f32({3, 1})});
  EXPECT_NE(e.find("argument 'moving_var'"), std::string::npos) << e;
  e = infer_op_error("nn.batch_norm", {f32({1, 3}), f32({3}), f32({3}), f32({3}), f32({3})}, {{"axis", 2}});
  EXPECT_NE(e.find("'axis'"), std::string::npos) << e;
  e = infer_op_error("nn.batch_norm", {tensor_type({1, 3}, DType::kInt32), f32({3}), f32({3}), f32({3}), f32({3})});
  EXPECT_NE(e.find("floating point"), std::string::npos) << e;
}

TEST(NnLayerNormType, ShapesAndErrors) {
  EXPECT_EQ(type_str(infer_op("nn.layer_norm", {f32({-1, 128, 768}), f32({768}), f32({768})})),
            "Tensor[(?, 128, 768), float32]");
  EXPECT_EQ(type_str(infer_op("nn.layer_norm", {f32({4, 6}), f32({4}), f32({4})}, {{"axis", 0}})),
            "Tensor[(4, 6), float32]");
  std::string e = infer_op_error("nn.layer_norm", {f32({2, 8}), f32({8}), f32({7})});
  EXPECT_NE(e.find("argument 'beta'"), std::string::npos) << e;
  EXPECT_NE(e.find("(2, 8)"), std::string::npos) << e;
  EXPECT_NE(e.find("found (7)"), std::string::npos) << e;
}

// ---- kernels, hand-worked ----

TEST(NnBatchNormKernel, InferenceWithMovingStatistics) {
  NDArray x = tensor({1, 2, 1, 2}, {1, 2, 3, 4});
  NDArray gamma = tensor({2}, {1, 2}), beta = tensor({2}, {0, 1});
  NDArray mean = tensor({2}, {1, 3}), var = tensor({2}, {4, 1});
  // Channel 0: (x - 1) / 2; channel 1: (x - 3) * 2 + 1.
  auto out = run_op("nn.batch_norm", {x, gamma, beta, mean, var}, {{"epsilon", 0.0}});
  ASSERT_EQ(out.size(), 3u);
  expect_close(out[0], {0, 0.5, 1, 3});
  expect_close(out[1], {1, 3});
  expect_close(out[2], {4, 1});
  expect_close(run_op("nn.batch_norm", {x, gamma, beta, mean, var}, {{"epsilon", 0.0}, {"center", false}})[0],
               {0, 0.5, 0, 2});
  expect_close(run_op("nn.batch_norm", {x, gamma, beta, mean, var}, {{"epsilon", 0.0}, {"scale", false}})[0],
               {0, 0.5, 1, 2});
  // The default epsilon 1e-5 is added to the variance.
  expect_close(run_op("nn.batch_norm", {x, gamma, beta, mean, var})[0],
               {0, 1 / std::sqrt(4 + 1e-5), 1, 1 + 2 / std::sqrt(1 + 1e-5)}, 1e-6, 1e-6);
}

TEST(NnBatchNormKernel, LastAxisAndFloat64) {
  NDArray x = tensor({2, 2}, {1, 2, 3, 4}, DType::kFloat64);
  NDArray ones = tensor({2}, {1, 1}, DType::kFloat64), zeros = tensor({2}, {0, 0}, DType::kFloat64);
  auto out = run_op("nn.batch_norm",
                    {x, ones, zeros, tensor({2}, {1, 2}, DType::kFloat64), tensor({2}, {1, 4}, DType::kFloat64)},
                    {{"axis", -1}, {"epsilon", 0.0}});
  EXPECT_EQ(out[0].dtype(), DType::kFloat64);
  expect_close(out[0], {0, 0, 2, 1}, 0, 0);
}

TEST(NnLayerNormKernel, LastAxis) {
  // Both rows normalise to (-sqrt(1.5), 0, sqrt(1.5)); then gamma (1, 2, 3) and beta (0, 0, 1).
  NDArray x = tensor({2, 3}, {1, 2, 3, 2, 4, 6});
  auto out = run_op("nn.layer_norm", {x, tensor({3}, {1, 2, 3}), tensor({3}, {0, 0, 1})}, {{"epsilon", 0.0}});
  double r = std::sqrt(1.5);
  expect_close(out[0], {-r, 0, 3 * r + 1, -r, 0, 3 * r + 1});
  out = run_op("nn.layer_norm", {x, tensor({3}, {1, 2, 3}), tensor({3}, {0, 0, 1})},
               {{"epsilon", 0.0}, {"scale", false}, {"center", false}});
  expect_close(out[0], {-r, 0, r, -r, 0, r});
}

TEST(NnLayerNormKernel, FirstAxisWithEpsilon) {
  // Column 0 is (1, 3): mean 2, variance 1, so (x - 2) / sqrt(1 + 1); column 1 is constant.
  NDArray x = tensor({2, 2}, {1, 5, 3, 5});
  auto out = run_op("nn.layer_norm", {x, tensor({2}, {1, 2}), tensor({2}, {0, 10})}, {{"axis", 0}, {"epsilon", 1.0}});
  double h = 1 / std::sqrt(2.0);
  expect_close(out[0], {-h, 0, 2 * h + 10, 10});
}

// ---- comparison with numpy ----

TEST(NnLayerNormKernel, MatchesNumpyMiddleAxis) {
  NDArray x = sample_tensor({3, 17, 5}, 31, -4, 6);
  NDArray gamma = sample_tensor({17}, 32), beta = sample_tensor({17}, 33);
  auto out = run_op("nn.layer_norm", {x, gamma, beta}, {{"axis", 1}});
  std::string script = "x = " + np_array(x) + "\ng = " + np_array(gamma) + "\nb = " + np_array(beta) + R"(
m = x.mean(axis=1, keepdims=True)
v = x.var(axis=1, keepdims=True)
out = (x - m) / np.sqrt(v + 1e-5) * g[None, :, None] + b[None, :, None]
)" + print_values("out");
  expect_close(out[0], run_python(script), 1e-5, 1e-5);
}

TEST(NnBatchNormKernel, MatchesNumpy) {
  NDArray x = sample_tensor({2, 5, 3, 4}, 34, -2, 2);
  NDArray gamma = sample_tensor({5}, 35), beta = sample_tensor({5}, 36);
  NDArray mean = sample_tensor({5}, 37), var = sample_tensor({5}, 38, 0.1, 2);
  auto out = run_op("nn.batch_norm", {x, gamma, beta, mean, var}, {{"epsilon", 1e-3}});
  std::string script = "x = " + np_array(x) + "\ng = " + np_array(gamma) + "\nb = " + np_array(beta) +
                       "\nm = " + np_array(mean) + "\nv = " + np_array(var) + R"(
c = lambda a: a[None, :, None, None]
out = (x - c(m)) / np.sqrt(c(v) + 1e-3) * c(g) + c(b)
)" + print_values("out");
  expect_close(out[0], run_python(script), 1e-5, 1e-5);
}

}  // namespace
}  // namespace kiln::testing
