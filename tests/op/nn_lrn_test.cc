#include <cmath>

#include "op/numpy_eval.h"
#include "op/numpy_ref.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

TEST(NnLrnType, SameTypeAndErrors) {
  EXPECT_EQ(type_str(infer_op("nn.lrn", {f32({-1, 16, 7, 7})}, {{"size", 3}})), "Tensor[(?, 16, 7, 7), float32]");
  std::string e = infer_op_error("nn.lrn", {f32({1, 4})}, {{"size", 0}});
  EXPECT_NE(e.find("attribute 'size'"), std::string::npos) << e;
  EXPECT_NE(e.find("found 0"), std::string::npos) << e;
  e = infer_op_error("nn.lrn", {f32({1, 4})}, {{"axis", 2}});
  EXPECT_NE(e.find("'axis'"), std::string::npos) << e;
  EXPECT_NE(e.find("(1, 4)"), std::string::npos) << e;
  e = infer_op_error("nn.lrn", {tensor_type({1, 4}, DType::kInt64)});
  EXPECT_NE(e.find("floating point"), std::string::npos) << e;
}

// Channels [1, 2, 3] with alpha / size = 1, beta = 1, bias = 1: out = x / (1 + window sum of x^2).
TEST(NnLrnKernel, HandWorkedOddAndEvenWindows) {
  NDArray x = tensor({1, 3, 1, 1}, {1, 2, 3});
  // size 3: windows {0, 1}, {0, 1, 2}, {1, 2}.
  expect_close(run_op("nn.lrn", {x}, {{"size", 3}, {"alpha", 3.0}, {"beta", 1.0}, {"bias", 1.0}})[0],
               {1.0 / 6, 2.0 / 15, 3.0 / 14});
  // size 2 (ONNX's split: none before, one after): windows {0, 1}, {1, 2}, {2}.
  expect_close(run_op("nn.lrn", {x}, {{"size", 2}, {"alpha", 2.0}, {"beta", 1.0}, {"bias", 1.0}})[0],
               {1.0 / 6, 2.0 / 14, 3.0 / 10});
  // beta 0.5 takes a square root.
  expect_close(run_op("nn.lrn", {x}, {{"size", 1}, {"alpha", 1.0}, {"beta", 0.5}, {"bias", 0.0}})[0], {1, 1, 1});
}

// The formula of the ONNX operator's reference, in numpy.
TEST(NnLrnKernel, MatchesNumpy) {
  NDArray x = sample_tensor({2, 5, 3, 4}, 11, -2, 2);
  std::string setup = "x = " + np_array(x) +
                      "\ndef lrn(x, size, alpha, beta, bias):\n"
                      "    sq = np.zeros_like(x)\n"
                      "    C = x.shape[1]\n"
                      "    for c in range(C):\n"
                      "        lo = max(0, c - (size - 1) // 2)\n"
                      "        hi = min(C - 1, c + int(math.ceil((size - 1) / 2)))\n"
                      "        sq[:, c] = (x[:, lo:hi + 1] ** 2).sum(axis=1)\n"
                      "    return x / (bias + alpha / size * sq) ** beta\n";
  auto want = numpy::eval_many({"lrn(x, 3, 0.5, 0.75, 1.0)", "lrn(x, 4, 0.2, 0.6, 2.0)"}, setup);
  ASSERT_EQ(want.size(), 2u);
  expect_close(run_op("nn.lrn", {x}, {{"size", 3}, {"alpha", 0.5}, {"beta", 0.75}, {"bias", 1.0}})[0], want[0]);
  expect_close(run_op("nn.lrn", {x}, {{"size", 4}, {"alpha", 0.2}, {"beta", 0.6}, {"bias", 2.0}})[0], want[1]);
}

}  // namespace
}  // namespace kiln::testing
