// RNN, GRU and LSTM converters against a numpy implementation of ONNX's formulas, over the
// attributes the backend tests leave at their defaults: reverse and bidirectional directions,
// layout 1, clip, linear_before_reset, peepholes, initial states. Default activations without
// clip become the sequence ops (nn.lstm / nn.gru / nn.rnn, run here by their reference kernels);
// the rest is unrolled.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/onnx_test_util.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/printer.h"

namespace kiln::testing {
namespace {

// Deterministic values in (-0.6, 0.6), different per tensor.
NDArray filled(Shape shape, double seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v;
  for (int64_t k = 0; k < n; ++k) v.push_back(0.6 * std::sin(seed + 0.73 * static_cast<double>(k)));
  return tensor(std::move(shape), v);
}

// numpy versions of ONNX's cells; `params` holds the python that fixes the cell's options.
const char* kNumpyCells = R"(
def sig(x): return 1 / (1 + np.exp(-x))
def act(name, x):
    return {'Sigmoid': sig, 'Tanh': np.tanh, 'Relu': lambda v: np.maximum(v, 0)}[name](x)
def clipped(x):
    return np.clip(x, -clip, clip) if clip is not None else x
def run(X, W, R, B, H0, C0, P):
    if layout == 1:
        X = X.transpose(1, 0, 2)
        H0 = H0.transpose(1, 0, 2) if H0 is not None else None
        C0 = C0.transpose(1, 0, 2) if C0 is not None else None
    S, N, _ = X.shape
    D, H = R.shape[0], R.shape[2]
    Y = np.zeros((S, D, N, H), np.float32)
    YH, YC = np.zeros((D, N, H), np.float32), np.zeros((D, N, H), np.float32)
    for d in range(D):
        g = W.shape[1] // H
        w, r = W[d], R[d]
        wb, rb = (B[d][:g*H], B[d][g*H:]) if B is not None else (np.zeros(g*H), np.zeros(g*H))
        h = H0[d] if H0 is not None else np.zeros((N, H))
        c = C0[d] if C0 is not None else np.zeros((N, H))
        p = P[d] if P is not None else np.zeros(3*H)
        steps = range(S - 1, -1, -1) if (direction == 'reverse' or d == 1) else range(S)
        gate = lambda k, x, hh: x @ w[k*H:(k+1)*H].T + hh @ r[k*H:(k+1)*H].T + wb[k*H:(k+1)*H] + rb[k*H:(k+1)*H]
        for t in steps:
            x = X[t]
            if cell == 'rnn':
                h = act(acts[d][0], clipped(gate(0, x, h)))
            elif cell == 'gru':
                z = act(acts[d][0], clipped(gate(0, x, h)))
                rr = act(acts[d][0], clipped(gate(1, x, h)))
                if lbr:
                    cand = x @ w[2*H:].T + wb[2*H:] + rr * (h @ r[2*H:].T + rb[2*H:])
                else:
                    cand = x @ w[2*H:].T + wb[2*H:] + (rr * h) @ r[2*H:].T + rb[2*H:]
                h = (1 - z) * act(acts[d][1], clipped(cand)) + z * h
            else:
                i = act(acts[d][0], clipped(gate(0, x, h) + p[:H] * c))
                f = act(acts[d][0], clipped(gate(2, x, h) + p[2*H:] * c))
                cc = act(acts[d][1], clipped(gate(3, x, h)))
                c = f * c + i * cc
                o = act(acts[d][0], clipped(gate(1, x, h) + p[H:2*H] * c))
                h = o * act(acts[d][2], c)
            Y[t, d] = h
        YH[d], YC[d] = h, c
    if layout == 1:
        return Y.transpose(2, 0, 1, 3), YH.transpose(1, 0, 2), YC.transpose(1, 0, 2)
    return Y, YH, YC
)";

struct Case {
  std::string op;
  std::string direction = "forward";
  int64_t layout = 0;
  std::optional<double> clip = std::nullopt;
  int64_t linear_before_reset = 0;
  std::vector<std::string> activations = {};  // empty: the defaults
  bool initial_state = false, peepholes = false;
  int64_t seq = 3, batch = 2, input = 3, hidden = 4;
};

// Default activations and no clip: one sequence op per direction.
bool takes_sequence_op(const Case& c) {
  if (c.clip) return false;
  for (const std::string& a : c.activations)
    if (a != "Sigmoid" && a != "Tanh") return false;
  return true;
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The input projection of all steps is one dense per direction, [rows, width], ahead of the
// steps; then one sequence op per direction (LSTM: two, the second for Y_c), or, unrolled, each
// step multiplies h by R once (GRU without linear_before_reset: twice, as its candidate reads r*h).
void expect_one_projection_per_direction(const IRModule& module, const Case& c, int64_t rows, int64_t steps,
                                         int64_t width) {
  const std::string text = print_module(module);
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1;
  const int64_t per_step = c.op == "GRU" && c.linear_before_reset == 0 ? 2 : 1;
  const std::string sequence_op = c.op == "LSTM" ? "nn.lstm(" : c.op == "GRU" ? "nn.gru(" : "nn.rnn(";
  if (takes_sequence_op(c)) {
    EXPECT_EQ(count_of(text, "nn.dense("), static_cast<size_t>(dirs)) << text;
    EXPECT_EQ(count_of(text, sequence_op), static_cast<size_t>(c.op == "LSTM" ? 2 * dirs : dirs)) << text;
  } else {
    EXPECT_EQ(count_of(text, "nn.dense("), static_cast<size_t>(dirs + steps * per_step)) << text;
    EXPECT_EQ(count_of(text, sequence_op), 0u) << text;
  }
  EXPECT_TRUE(contains(text, cat("ty=Tensor[(", rows, ", ", width, "), float32]"))) << text;
}

void expect_matches_numpy(const Case& c) {
  const int64_t seq = c.seq, batch = c.batch, input = c.input, hidden = c.hidden;
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1;
  const int64_t gates = c.op == "RNN" ? 1 : c.op == "GRU" ? 3 : 4;
  Shape x_shape = c.layout == 1 ? Shape{batch, seq, input} : Shape{seq, batch, input};
  Shape state_shape = c.layout == 1 ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
  std::vector<std::pair<std::string, NDArray>> values = {{"X", filled(x_shape, 0.1)},
                                                         {"W", filled({dirs, gates * hidden, input}, 1.3)},
                                                         {"R", filled({dirs, gates * hidden, hidden}, 2.9)},
                                                         {"B", filled({dirs, 2 * gates * hidden}, 4.1)}};
  std::vector<std::string> node_inputs = {"X", "W", "R", "B"};
  if (c.initial_state || c.peepholes) {
    node_inputs.push_back("");  // sequence_lens
    values.push_back({"H0", filled(state_shape, 5.7)});
    node_inputs.push_back("H0");
    if (c.op == "LSTM") {
      values.push_back({"C0", filled(state_shape, 6.2)});
      node_inputs.push_back("C0");
    }
    if (c.peepholes) {
      values.push_back({"P", filled({dirs, 3 * hidden}, 7.7)});
      node_inputs.push_back("P");
    }
  }
  OnnxModelBuilder b(14);
  b.input("X", x_shape);
  for (size_t i = 1; i < values.size(); ++i) b.initializer(values[i].first, values[i].second);
  std::vector<std::string> outputs = {"Y", "Y_h"};
  if (c.op == "LSTM") outputs.push_back("Y_c");
  auto& n = b.node(c.op, node_inputs, outputs);
  set_attr(n, "hidden_size", hidden);
  set_attr(n, "direction", c.direction);
  set_attr(n, "layout", c.layout);
  if (c.clip) set_attr(n, "clip", *c.clip);
  if (c.op == "GRU") set_attr(n, "linear_before_reset", c.linear_before_reset);
  if (!c.activations.empty()) {
    auto* a = n.add_attribute();
    a->set_name("activations");
    a->set_type(onnx::AttributeProto::STRINGS);
    for (const auto& s : c.activations) a->add_strings(s);
  }
  for (const auto& o : outputs) b.output_any(o);
  OnnxImportOptions options;
  options.freeze_params = true;
  OnnxModel m = from_onnx_bytes(b.bytes(), options);
  expect_one_projection_per_direction(m.module, c, seq * batch, dirs * seq, gates * hidden);
  std::vector<Value> actual = interpret(m.module, "main", {values[0].second}).tuple();

  std::vector<std::string> defaults = c.op == "RNN"   ? std::vector<std::string>{"Tanh"}
                                      : c.op == "GRU" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                      : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  std::vector<std::string> acts = c.activations;
  if (acts.empty())
    for (int64_t d = 0; d < dirs; ++d) acts.insert(acts.end(), defaults.begin(), defaults.end());
  std::string acts_py = "[";
  for (int64_t d = 0; d < dirs; ++d) {
    acts_py += "[";
    for (size_t k = 0; k < defaults.size(); ++k) acts_py += "'" + acts[d * defaults.size() + k] + "',";
    acts_py += "],";
  }
  acts_py += "]";
  std::string params = cat("cell = '",
                           c.op == "RNN"   ? "rnn"
                           : c.op == "GRU" ? "gru"
                                           : "lstm",
                           "'\n", "direction = '", c.direction, "'\nlayout = ", c.layout,
                           "\nclip = ", c.clip ? cat(*c.clip) : std::string("None"), "\nlbr = ", c.linear_before_reset,
                           "\nacts = ", acts_py, "\n");
  auto load = [&](const std::string& name) {
    for (const auto& v : values)
      if (v.first == name) return cat("np.load('", name, ".npy').astype(np.float64)");
    return std::string("None");
  };
  for (size_t k = 0; k < outputs.size(); ++k) {
    TempDir dir;
    std::string call = cat("out = run(", load("X"), ", ", load("W"), ", ", load("R"), ", ", load("B"), ", ", load("H0"),
                           ", ", load("C0"), ", ", load("P"), ")[", k, "].astype(np.float32)");
    NDArray expected = numpy_reference(dir, values, params + kNumpyCells + call);
    const NDArray& got = actual[k].tensor();
    ASSERT_EQ(got.shape(), expected.shape()) << c.op << " output " << outputs[k];
    std::vector<double> want;
    for (int64_t i = 0; i < expected.numel(); ++i) want.push_back(expected.at(i));
    expect_close(got, want, 1e-5);
  }
}

TEST(OnnxRecurrentConverter, RnnReverseWithReluAndInitialState) {
  expect_matches_numpy({.op = "RNN", .direction = "reverse", .activations = {"Relu"}, .initial_state = true});
}

TEST(OnnxRecurrentConverter, GruBidirectionalLinearBeforeResetLayout1) {
  expect_matches_numpy(
      {.op = "GRU", .direction = "bidirectional", .layout = 1, .linear_before_reset = 1, .initial_state = true});
}

TEST(OnnxRecurrentConverter, GruForwardWithClip) { expect_matches_numpy({.op = "GRU", .clip = 0.3}); }

TEST(OnnxRecurrentConverter, LstmBidirectionalWithPeepholes) {
  expect_matches_numpy({.op = "LSTM", .direction = "bidirectional", .peepholes = true});
}

TEST(OnnxRecurrentConverter, LstmLayout1ReverseWithClip) {
  expect_matches_numpy({.op = "LSTM", .direction = "reverse", .layout = 1, .clip = 0.25, .initial_state = true});
}

TEST(OnnxRecurrentConverter, RnnSequenceOpReverseOddSizes) {
  expect_matches_numpy(
      {.op = "RNN", .direction = "reverse", .initial_state = true, .seq = 4, .batch = 3, .input = 5, .hidden = 7});
}

TEST(OnnxRecurrentConverter, GruSequenceOpBidirectionalOddSizes) {
  expect_matches_numpy({.op = "GRU", .direction = "bidirectional", .seq = 5, .batch = 3, .input = 6, .hidden = 9});
}

TEST(OnnxRecurrentConverter, GruSequenceOpLinearBeforeResetExplicitDefaults) {
  expect_matches_numpy({.op = "GRU",
                        .linear_before_reset = 1,
                        .activations = {"Sigmoid", "Tanh"},
                        .initial_state = true,
                        .seq = 3,
                        .batch = 1,
                        .input = 4,
                        .hidden = 33});
}

TEST(OnnxRecurrentConverter, LstmSequenceOpBidirectionalLayout1PeepholesOddSizes) {
  expect_matches_numpy({.op = "LSTM",
                        .direction = "bidirectional",
                        .layout = 1,
                        .initial_state = true,
                        .peepholes = true,
                        .seq = 4,
                        .batch = 3,
                        .input = 5,
                        .hidden = 17});
}

// Shorter sequences are masked per step (tests/cli/recurrent_sequence_lens.sh checks the values
// against ONNX Runtime); lengths of the wrong shape are an error naming what was expected.
TEST(OnnxRecurrentConverter, SequenceLensOfTheWrongShapeIsAnErrorNamingTheType) {
  OnnxModelBuilder b(14);
  b.input("X", {3, 1, 2});
  b.initializer("W", filled({1, 2, 2}, 0)).initializer("R", filled({1, 2, 2}, 1));
  b.initializer("lens", NDArray::from_vector<int32_t>({2}, {2, 3}));
  auto& n = b.node("RNN", {"X", "W", "R", "", "lens"}, {"Y"});
  set_attr(n, "hidden_size", int64_t{2});
  b.output_any("Y");
  OnnxImportOptions options;
  options.freeze_params = true;
  std::string message = error_of([&] { from_onnx_bytes(b.bytes(), options); });
  EXPECT_TRUE(contains(message, "RNN's sequence_lens has the wrong type")) << message;
  EXPECT_TRUE(contains(message, "an integer tensor of shape (1)")) << message;
}

}  // namespace
}  // namespace kiln::testing
