// nn.lstm, nn.gru, nn.rnn: the relation, the reference kernel on hand-worked values (the numpy
// comparisons over the ONNX attributes are in tests/frontend/onnx_recurrent_converter_test.cc),
// and the compiled sequence kernels of kiln/runtime/microkernels.h against the reference kernel
// on odd sizes: hidden sizes off the 32-column panels, batch 1 (the GEMV path, with four-panel
// groups and a remainder) and batch 3, reverse, GRU in both linear_before_reset modes.
#include <gtest/gtest.h>

#include <cmath>

#include "op/compute_test_util.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// A packed weight of `gates` panels for hidden 1: column 0 of panel g is R[g][0]; the padding
// columns hold junk, which the op must never read.
NDArray one_unit_weight(const std::vector<double>& r) {
  std::vector<double> v;
  for (double rg : r) {
    v.push_back(rg);
    for (int j = 1; j < 32; ++j) v.push_back(9.0);
  }
  return tensor({static_cast<int64_t>(r.size()), 1, 32}, v);
}

TEST(NnRecurrentType, SequenceOfHiddenStates) {
  EXPECT_EQ(type_str(infer_op("nn.lstm", {f32({7, 3, 80}), f32({4, 20, 32}), f32({3, 20}), f32({3, 20}), f32({60})})),
            "Tensor[(7, 3, 20), float32]");
  EXPECT_EQ(type_str(infer_op("nn.gru", {f32({5, 1, 99}), f32({6, 33, 32}), f32({33}), f32({1, 33})})),
            "Tensor[(5, 1, 33), float32]");
  EXPECT_EQ(type_str(infer_op("nn.rnn", {f32({2, 2, 64}), f32({2, 64, 32}), f32({2, 64})})),
            "Tensor[(2, 2, 64), float32]");
}

TEST(NnRecurrentType, Errors) {
  std::string e = infer_op_error("nn.rnn", {f32({2, 2, 64}), f32({1, 64, 32}), f32({2, 64})});
  EXPECT_NE(e.find("'weight' has the wrong shape"), std::string::npos) << e;
  EXPECT_NE(e.find("(2, 64, 32)"), std::string::npos) << e;
  e = infer_op_error("nn.gru", {f32({5, 1, 31}), f32({3, 10, 32}), f32({10}), f32({1, 10})});
  EXPECT_NE(e.find("'projection' has the wrong shape"), std::string::npos) << e;
  e = infer_op_error("nn.lstm", {f32({7, 3, 80}), f32({4, 20, 32}), f32({3, 20}), f32({2, 20}), f32({60})});
  EXPECT_NE(e.find("'init_c' has the wrong shape"), std::string::npos) << e;
  e = infer_op_error("nn.rnn", {tensor_type({2, 2, 4}, DType::kInt32), f32({1, 4, 32}), f32({2, 4})});
  EXPECT_NE(e.find("floating point"), std::string::npos) << e;
}

TEST(NnRecurrentKernel, RnnHandWorkedBothDirections) {
  const NDArray proj = tensor({2, 1, 1}, {0.5, -0.25}), h0 = tensor({1, 1}, {0.1});
  const double h1 = std::tanh(0.5 + 0.1 * 2), h2 = std::tanh(-0.25 + h1 * 2);
  expect_close(run_op("nn.rnn", {proj, one_unit_weight({2}), h0})[0], {h1, h2}, 1e-6);
  const double r1 = std::tanh(-0.25 + 0.1 * 2), r0 = std::tanh(0.5 + r1 * 2);
  expect_close(run_op("nn.rnn", {proj, one_unit_weight({2}), h0}, {{"reverse", true}})[0], {r0, r1}, 1e-6);
}

TEST(NnRecurrentKernel, LstmHandWorkedWithPeepholes) {
  // One step, R = 0: the gates are the projection (i, o, f, c) plus the peepholes times c.
  const NDArray proj = tensor({1, 1, 4}, {0.1, 0.2, 0.3, 0.4});
  const NDArray p = tensor({3}, {0.1, 0.2, 0.3});
  const double i = sigmoid(0.1 + 0.1 * 0.5), f = sigmoid(0.3 + 0.3 * 0.5), g = std::tanh(0.4);
  const double c = f * 0.5 + i * g, o = sigmoid(0.2 + 0.2 * c);
  const std::vector<OpArg> args{proj, one_unit_weight({0, 0, 0, 0}), tensor({1, 1}, {0}), tensor({1, 1}, {0.5}), p};
  expect_close(run_op("nn.lstm", args)[0], {o * std::tanh(c)}, 1e-6);
  expect_close(run_op("nn.lstm", args, {{"output_cell", true}})[0], {c}, 1e-6);
}

TEST(NnRecurrentKernel, GruHandWorkedBothResetModes) {
  // One step, h0 = 0.5, R = (rz, rr, rh) = (0.2, -0.4, 0.6), rb_h = 0.3.
  const NDArray proj = tensor({1, 1, 3}, {0.1, 0.2, 0.3});
  const std::vector<OpArg> args{proj, one_unit_weight({0.2, -0.4, 0.6}), tensor({1}, {0.3}), tensor({1, 1}, {0.5})};
  const double z = sigmoid(0.1 + 0.5 * 0.2), r = sigmoid(0.2 - 0.5 * 0.4);
  const double after = std::tanh(0.3 + r * (0.5 * 0.6 + 0.3)), before = std::tanh(0.3 + (r * 0.5) * 0.6 + 0.3);
  expect_close(run_op("nn.gru", args, {{"linear_before_reset", true}})[0], {(1 - z) * after + z * 0.5}, 1e-6);
  expect_close(run_op("nn.gru", args)[0], {(1 - z) * before + z * 0.5}, 1e-6);
}

std::string sequence_fn(const std::string& op, int64_t seq, int64_t batch, int64_t hidden, const std::string& attrs) {
  const int64_t gates = op == "nn.lstm" ? 4 : op == "nn.gru" ? 3 : 1, hp = (hidden + 31) / 32 * 32;
  auto type = [](const std::vector<int64_t>& shape) {
    std::string s = "Tensor[(";
    for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
    return s + (shape.size() == 1 ? ",), float32]" : "), float32]");
  };
  std::vector<std::pair<std::string, std::vector<int64_t>>> params = {{"proj", {seq, batch, gates * hidden}},
                                                                      {"w", {gates * hp / 32, hidden, 32}}};
  if (op == "nn.gru") params.push_back({"rb", {hidden}});
  params.push_back({"h0", {batch, hidden}});
  if (op == "nn.lstm") {
    params.push_back({"c0", {batch, hidden}});
    params.push_back({"p", {3 * hidden}});
  }
  std::string fn = "fn (", call = op + "(";
  for (size_t i = 0; i < params.size(); ++i) {
    fn += "%" + params[i].first + ": " + type(params[i].second) + ", ";
    call += (i ? ", %" : "%") + params[i].first;
  }
  return fn + "Primitive=1) { " + call + (attrs.empty() ? "" : ", " + attrs) + ") }";
}

// The recurrence compounds rounding differences (the kernel's vector sigmoid and tanh, its order
// of products) over the steps.
CompareOptions recurrent_tolerance() {
  CompareOptions o = inputs_in(-0.5, 0.5);
  o.rtol = 1e-4;
  o.atol = 1e-5;
  return o;
}

void expect_sequence_kernel(const std::string& op, int64_t seq, int64_t batch, int64_t hidden,
                            const std::string& attrs = "") {
  SCOPED_TRACE(cat(op, " seq ", seq, " batch ", batch, " hidden ", hidden, " ", attrs));
  const std::string source =
      expect_compiled_matches_interpreter(sequence_fn(op, seq, batch, hidden, attrs), recurrent_tolerance());
  const std::string kernel = op == "nn.lstm"  ? "kiln_lstm_seq_f32("
                             : op == "nn.gru" ? "kiln_gru_seq_f32("
                                              : "kiln_rnn_seq_f32(";
  EXPECT_NE(source.find(kernel), std::string::npos) << source;
}

TEST(NnRecurrentCompute, LstmOddSizes) {
  expect_sequence_kernel("nn.lstm", 5, 3, 20);
  expect_sequence_kernel("nn.lstm", 6, 1, 40, "reverse=True");
  expect_sequence_kernel("nn.lstm", 4, 1, 33, "output_cell=True");
}

TEST(NnRecurrentCompute, GruBothResetModes) {
  expect_sequence_kernel("nn.gru", 5, 3, 13);
  expect_sequence_kernel("nn.gru", 5, 3, 13, "linear_before_reset=True");
  expect_sequence_kernel("nn.gru", 4, 1, 70, "reverse=True");
  expect_sequence_kernel("nn.gru", 4, 1, 24, "linear_before_reset=True");
}

TEST(NnRecurrentCompute, RnnOddSizes) {
  expect_sequence_kernel("nn.rnn", 7, 1, 7);
  expect_sequence_kernel("nn.rnn", 3, 3, 130, "reverse=True");
}

}  // namespace
}  // namespace kiln::testing
