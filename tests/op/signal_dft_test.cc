// signal.dft, signal.stft, the window ops and signal.mel_weight_matrix: type relations and
// reference kernels against numpy (np.fft, np.hanning ...).
#include "op/numpy_eval.h"
#include "op/numpy_ref.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

TEST(SignalDftType, Shapes) {
  EXPECT_EQ(type_str(infer_op("signal.dft", {f32({1, 10, 10, 1})})), "Tensor[(1, 10, 10, 2), float32]");
  EXPECT_EQ(type_str(infer_op("signal.dft", {f32({3, 8, 1})}, {{"onesided", true}})), "Tensor[(3, 5, 2), float32]");
  EXPECT_EQ(type_str(infer_op("signal.dft", {f32({3, 8, 2})}, {{"dft_length", 12}, {"axis", 1}})),
            "Tensor[(3, 12, 2), float32]");
  EXPECT_EQ(type_str(infer_op("signal.stft", {f32({1, 128, 1})}, {{"frame_step", 8}, {"frame_length", 16}})),
            "Tensor[(1, 15, 9, 2), float32]");
  EXPECT_EQ(type_str(infer_op("signal.stft", {f32({2, 20, 2}), f32({6})}, {{"frame_step", 4}, {"onesided", false}})),
            "Tensor[(2, 4, 6, 2), float32]");
}

TEST(SignalDftType, Errors) {
  std::string e = infer_op_error("signal.dft", {f32({4, 3})});
  EXPECT_NE(e.find("signal.dft"), std::string::npos) << e;
  EXPECT_NE(e.find("'data'"), std::string::npos) << e;
  EXPECT_NE(e.find("(4, 3)"), std::string::npos) << e;
  e = infer_op_error("signal.dft", {f32({4, 3, 1})}, {{"axis", 2}});
  EXPECT_NE(e.find("'axis'"), std::string::npos) << e;
  e = infer_op_error("signal.dft", {f32({4, 3, 2})}, {{"onesided", true}});
  EXPECT_NE(e.find("onesided"), std::string::npos) << e;
  e = infer_op_error("signal.stft", {f32({1, 20, 1}), f32({5})}, {{"frame_step", 2}, {"frame_length", 4}});
  EXPECT_NE(e.find("'window' (5)"), std::string::npos) << e;
  e = infer_op_error("signal.stft", {f32({1, 20, 1})}, {{"frame_step", 2}});
  EXPECT_NE(e.find("frame_length"), std::string::npos) << e;
}

// (real, imag) pairs of a complex numpy expression, flattened as kiln lays them out.
std::string as_pairs(const std::string& complex_expr) {
  return "np.stack([(" + complex_expr + ").real, (" + complex_expr + ").imag], axis=-1)";
}

TEST(SignalDftKernel, RealForwardAlongEachAxis) {
  NDArray x = sample_tensor({2, 5, 6, 1}, 7);
  std::string xs = np_array(x) + "[..., 0]";
  auto results =
      numpy::eval_many({as_pairs("np.fft.fft(" + xs + ", axis=1)"), as_pairs("np.fft.fft(" + xs + ", axis=2)"),
                        as_pairs("np.fft.rfft(" + xs + ", n=8, axis=2)")});
  ASSERT_EQ(results.size(), 3u);
  expect_close(run_op("signal.dft", {x}, {{"axis", 1}})[0], results[0]);
  expect_close(run_op("signal.dft", {x}, {{"axis", 2}})[0], results[1]);
  auto onesided = run_op("signal.dft", {x}, {{"axis", 2}, {"onesided", true}, {"dft_length", 8}});
  EXPECT_EQ(onesided[0].shape(), (Shape{2, 5, 5, 2}));
  expect_close(onesided[0], results[2]);
}

TEST(SignalDftKernel, ComplexInverseAndTruncation) {
  NDArray x = sample_tensor({3, 7, 2}, 8);
  std::string xs = "(" + np_array(x) + "[..., 0] + 1j * " + np_array(x) + "[..., 1])";
  auto results =
      numpy::eval_many({as_pairs("np.fft.ifft(" + xs + ", axis=1)"), as_pairs("np.fft.fft(" + xs + ", n=4, axis=1)")});
  ASSERT_EQ(results.size(), 2u);
  expect_close(run_op("signal.dft", {x}, {{"axis", 1}, {"inverse", true}})[0], results[0]);
  expect_close(run_op("signal.dft", {x}, {{"axis", 1}, {"dft_length", 4}})[0], results[1]);
}

TEST(SignalStftKernel, WindowedFramesMatchNumpy) {
  NDArray signal = sample_tensor({2, 30, 1}, 9);
  NDArray window = sample_tensor({8}, 10, 0, 1);
  std::string setup = "s = " + np_array(signal) + "[..., 0]\nw = " + np_array(window) +
                      "\nframes = np.stack([s[:, 5 * f:5 * f + 8] * w for f in range(5)], axis=1)\n";
  auto results =
      numpy::eval_many({as_pairs("np.fft.rfft(frames, axis=-1)"), as_pairs("np.fft.fft(frames, axis=-1)")}, setup);
  ASSERT_EQ(results.size(), 2u);
  auto onesided = run_op("signal.stft", {signal, window}, {{"frame_step", 5}});
  EXPECT_EQ(onesided[0].shape(), (Shape{2, 5, 5, 2}));
  expect_close(onesided[0], results[0]);
  expect_close(run_op("signal.stft", {signal, window}, {{"frame_step", 5}, {"onesided", false}})[0], results[1]);
}

TEST(SignalWindowKernel, MatchNumpyWindows) {
  // numpy's windows are symmetric; a periodic window of n is the symmetric one of n + 1 without its last sample.
  auto results = numpy::eval_many(
      {"np.hanning(10)", "np.hanning(11)[:10]", "np.hamming(7)", "np.blackman(9)[:8]", "np.blackman(6)"});
  ASSERT_EQ(results.size(), 5u);
  auto window = [](const std::string& op, int64_t n, bool periodic) {
    return run_op(op, {}, {{"window_length", n}, {"periodic", periodic}, {"dtype", "float64"}})[0];
  };
  expect_close(window("signal.hann_window", 10, false), results[0], 1e-12);
  expect_close(window("signal.hann_window", 10, true), results[1], 1e-12);
  // numpy's Hamming uses 0.54 / 0.46 where ONNX uses 25/46 and 21/46.
  expect_close(window("signal.hamming_window", 7, false), results[2], 0.01);
  expect_close(window("signal.blackman_window", 8, true), results[3], 1e-12);
  expect_close(window("signal.blackman_window", 6, false), results[4], 1e-12);
  // Hamming by hand: 25/46 - 21/46 cos(2 pi n / 4).
  expect_close(window("signal.hamming_window", 4, true), {4.0 / 46, 25.0 / 46, 46.0 / 46, 25.0 / 46}, 1e-12);
  EXPECT_EQ(window("signal.hann_window", 3, true).dtype(), DType::kFloat64);
}

TEST(SignalMelWeightMatrixKernel, MatchesOnnxDefinition) {
  auto out = run_op("signal.mel_weight_matrix", {},
                    {{"num_mel_bins", 8},
                     {"dft_length", 16},
                     {"sample_rate", 8192},
                     {"lower_edge_hertz", 0.0},
                     {"upper_edge_hertz", 4096.0}});
  ASSERT_EQ(out[0].shape(), (Shape{9, 8}));
  // The expected matrix of ONNX's MelWeightMatrix example: ones on a staircase.
  std::vector<double> expected(72, 0.0);
  for (auto [row, col] :
       std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7}})
    expected[static_cast<size_t>(row * 8 + col)] = 1.0;
  expect_close(out[0], expected);
  std::string e = infer_op_error("signal.mel_weight_matrix", {},
                                 {{"num_mel_bins", 8},
                                  {"dft_length", 16},
                                  {"sample_rate", 8192},
                                  {"lower_edge_hertz", 100.0},
                                  {"upper_edge_hertz", 50.0}});
  EXPECT_NE(e.find("lower_edge_hertz"), std::string::npos) << e;
}

}  // namespace
}  // namespace kiln::testing
