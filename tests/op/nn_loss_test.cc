#include <cmath>

#include "op/numpy_eval.h"
#include "op/numpy_ref.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

Type i64(Shape shape) { return tensor_type(std::move(shape), DType::kInt64); }

// ---- type relation ----

TEST(NnNllLossType, ReductionNoneKeepsTargetShapeElseScalar) {
  EXPECT_EQ(type_str(infer_op("nn.nll_loss", {f32({3, 5, 2}), i64({3, 2}), f32({5})}, {{"reduction", "none"}})),
            "Tensor[(3, 2), float32]");
  EXPECT_EQ(type_str(infer_op("nn.nll_loss", {f32({3, 5, 2}), i64({3, 2}), f32({5})})), "float32");
  EXPECT_EQ(type_str(infer_op("nn.nll_loss", {f32({3, 5}), i64({3})}, {{"reduction", "sum"}})), "float32");
  EXPECT_EQ(type_str(infer_op("nn.nll_loss", {f32({-1, 5, 4, 4}), tensor_type({-1, 4, 4}, DType::kInt32)},
                              {{"reduction", "none"}})),
            "Tensor[(?, 4, 4), float32]");
}

TEST(NnNllLossType, ErrorsNameArgumentAndShapes) {
  std::string e = infer_op_error("nn.nll_loss", {f32({3, 5, 2}), i64({3, 3})});
  EXPECT_NE(e.find("argument 'targets'"), std::string::npos) << e;
  EXPECT_NE(e.find("(3, 5, 2)"), std::string::npos) << e;
  EXPECT_NE(e.find("expected (3, 2), found (3, 3)"), std::string::npos) << e;
  e = infer_op_error("nn.nll_loss", {f32({3, 5, 2}), i64({3, 2}), f32({4})});
  EXPECT_NE(e.find("argument 'weights'"), std::string::npos) << e;
  EXPECT_NE(e.find("expected (5), found (4)"), std::string::npos) << e;
  e = infer_op_error("nn.nll_loss", {f32({3, 5}), f32({3})});
  EXPECT_NE(e.find("argument 'targets' must hold integer"), std::string::npos) << e;
  e = infer_op_error("nn.nll_loss", {f32({5}), i64({})});
  EXPECT_NE(e.find("argument 'predictions'"), std::string::npos) << e;
  e = infer_op_error("nn.nll_loss", {f32({3, 5}), i64({3})}, {{"reduction", "max"}});
  EXPECT_NE(e.find("'reduction'"), std::string::npos) << e;
}

// ---- kernel, hand-worked ----

// predictions [[-1, -2, -3], [-4, -5, -6]], targets [2, 0], weights [1, 2, 3]:
// element losses 3 * 3 = 9 and 1 * 4 = 4; mean divides by the weights used, 3 + 1.
TEST(NnNllLossKernel, ReductionsWeightsAndIgnoreIndex) {
  NDArray p = tensor({2, 3}, {-1, -2, -3, -4, -5, -6});
  NDArray t = tensor({2}, {2, 0}, DType::kInt64), w = tensor({3}, {1, 2, 3});
  expect_close(run_op("nn.nll_loss", {p, t, w}, {{"reduction", "none"}})[0], {9, 4});
  expect_close(run_op("nn.nll_loss", {p, t, w}, {{"reduction", "sum"}})[0], {13});
  expect_close(run_op("nn.nll_loss", {p, t, w})[0], {3.25});
  expect_close(run_op("nn.nll_loss", {p, t})[0], {3.5});
  expect_close(run_op("nn.nll_loss", {p, t, w}, {{"reduction", "none"}, {"ignore_index", 0}})[0], {9, 0});
  expect_close(run_op("nn.nll_loss", {p, t, w}, {{"ignore_index", 0}})[0], {3});
  // A negative ignore_index matches negative targets.
  NDArray t_neg = tensor({2}, {-1, 1}, DType::kInt32);
  expect_close(run_op("nn.nll_loss", {p, t_neg, w}, {{"reduction", "none"}, {"ignore_index", -1}})[0], {0, 10});
  expect_close(run_op("nn.nll_loss", {p, t_neg, w}, {{"ignore_index", -1}})[0], {5});
}

TEST(NnNllLossKernel, TargetOutOfRangeIsAnError) {
  NDArray p = tensor({2, 3}, {-1, -2, -3, -4, -5, -6});
  try {
    run_op("nn.nll_loss", {p, tensor({2}, {0, 3}, DType::kInt64)});
    ADD_FAILURE() << "expected a kiln::Error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("target 3"), std::string::npos) << m;
    EXPECT_NE(m.find("0 ... 2"), std::string::npos) << m;
  }
}

// ---- kernel against numpy: rank 4, weights, mean, an ignored class ----

TEST(NnNllLossKernel, MatchesNumpyOnSpatialInput) {
  NDArray p = sample_tensor({2, 4, 3, 5}, 7, -3, 0);
  std::vector<double> labels(30);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<double>((i * 7 + 3) % 4);
  NDArray t = tensor({2, 3, 5}, labels, DType::kInt64), w = tensor({4}, {0.5, 1, 2, 1.5});
  std::string setup = "p = " + np_array(p) + "\nt = " + np_array(t) + ".astype(np.int64)\nw = " + np_array(w) +
                      "\ng = np.take_along_axis(p, t[:, None], 1)[:, 0]\nwt = np.where(t == 2, 0.0, w[t])\n";
  auto want = numpy::eval_many({"-g * wt", "(-g * wt).sum() / wt.sum()"}, setup);
  ASSERT_EQ(want.size(), 2u);
  expect_close(run_op("nn.nll_loss", {p, t, w}, {{"reduction", "none"}, {"ignore_index", 2}})[0], want[0]);
  expect_close(run_op("nn.nll_loss", {p, t, w}, {{"ignore_index", 2}})[0], want[1]);
}

}  // namespace
}  // namespace kiln::testing
