// Converters: recurrent layers (RNN, GRU, LSTM), unrolled over the static sequence length
// into dense, add, multiply and activations, one step per time step and direction.
//
// ONNX packs the weights of all gates: W is [directions, gates*hidden, input], R is
// [directions, gates*hidden, hidden], B is [directions, 2*gates*hidden] (W's biases, then
// R's). Gate orders: RNN (i), GRU (z, r, h), LSTM (i, o, f, c); LSTM's peepholes P are
// [directions, 3*hidden] in the order (i, o, f).
#include "frontend/onnx/converters/converter_util.h"
#include "kiln/attrs/nn.h"
#include "kiln/attrs/transform.h"
#include "kiln/attrs/unary.h"

namespace kiln::frontend {

namespace {

enum class Cell { kRnn, kGru, kLstm };

int64_t gate_count(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }

// One of ONNX's recurrent activation functions, with its alpha and beta.
struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

Expr apply(const Activation& f, const Expr& x, DType dtype) {
  auto k = [&](double v) { return scalar_constant(dtype, v); };
  const std::string& n = f.name;
  if (n == "sigmoid") return call_op("sigmoid", {x});
  if (n == "tanh") return call_op("tanh", {x});
  if (n == "relu") return call_op("nn.relu", {x});
  if (n == "affine") return call_op("add", {call_op("multiply", {k(f.alpha), x}), k(f.beta)});
  if (n == "leakyrelu") return call_op("nn.leaky_relu", {x}, LeakyReluAttrs{.alpha = f.alpha});
  if (n == "thresholdedrelu") return call_op("where", {call_op("greater", {x, k(f.alpha)}), x, k(0)});
  if (n == "scaledtanh")
    return call_op("multiply", {k(f.alpha), call_op("tanh", {call_op("multiply", {k(f.beta), x})})});
  if (n == "hardsigmoid")
    return call_op("clip", {call_op("add", {call_op("multiply", {k(f.alpha), x}), k(f.beta)})},
                   ClipAttrs{.a_min = 0.0, .a_max = 1.0});
  if (n == "elu") {
    Expr negative = call_op("multiply", {k(f.alpha), call_op("subtract", {call_op("exp", {x}), k(1)})});
    return call_op("where", {call_op("greater", {x, k(0)}), x, negative});
  }
  if (n == "softsign") return call_op("divide", {x, call_op("add", {k(1), call_op("abs", {x})})});
  if (n == "softplus") return call_op("log", {call_op("add", {call_op("exp", {x}), k(1)})});
  throw Error(cat("recurrent activation '", f.name, "' is not supported"));
}

// ONNX's defaults for alpha and beta of the activations that take them.
std::pair<double, double> default_alpha_beta(const std::string& n) {
  if (n == "leakyrelu") return {0.01, 0};
  if (n == "thresholdedrelu") return {1.0, 0};
  if (n == "hardsigmoid") return {0.2, 0.5};
  if (n == "elu") return {1.0, 0};
  if (n == "affine" || n == "scaledtanh") return {1.0, 0.0};
  return {0, 0};
}

bool takes_alpha(const std::string& n) {
  return n == "leakyrelu" || n == "thresholdedrelu" || n == "hardsigmoid" || n == "elu" || n == "affine" ||
         n == "scaledtanh";
}
bool takes_beta(const std::string& n) { return n == "hardsigmoid" || n == "affine" || n == "scaledtanh"; }

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// The activations per direction: `per_direction` functions each, from the attribute or the
// defaults; alphas and betas are consumed in order by the functions that take them.
std::vector<std::vector<Activation>> activations(ConvertContext& c, int64_t directions,
                                                 const std::vector<std::string>& defaults) {
  const size_t per_direction = defaults.size();
  std::vector<std::string> names;
  if (const OnnxAttr* a = c.attrs().find("activations")) names = a->strings;
  if (names.empty())
    for (int64_t d = 0; d < directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  if (names.size() != per_direction * static_cast<size_t>(directions))
    throw std::move(
        Error(cat(c.op_type(), "'s activations list the wrong number of functions"))
            .expected(cat(per_direction * static_cast<size_t>(directions), " (", per_direction, " per direction)"),
                      cat(names.size())));
  std::vector<double> alphas = c.attrs().get_floats("activation_alpha", {});
  std::vector<double> betas = c.attrs().get_floats("activation_beta", {});
  size_t next_alpha = 0, next_beta = 0;
  std::vector<std::vector<Activation>> out(static_cast<size_t>(directions));
  for (size_t i = 0; i < names.size(); ++i) {
    Activation f{lower(names[i])};
    std::tie(f.alpha, f.beta) = default_alpha_beta(f.name);
    if (takes_alpha(f.name) && next_alpha < alphas.size()) f.alpha = alphas[next_alpha++];
    if (takes_beta(f.name) && next_beta < betas.size()) f.beta = betas[next_beta++];
    out[i / per_direction].push_back(f);
  }
  return out;
}

Expr take_index(const Expr& x, int64_t axis, int64_t index) {
  return call_op("squeeze", {slice_axis(x, axis, index, index + 1)}, SqueezeAttrs{.axis = std::vector<int64_t>{axis}});
}

Expr stack(const std::vector<Expr>& parts, int64_t axis) {
  std::vector<Expr> expanded;
  for (const Expr& p : parts) expanded.push_back(call_op("expand_dims", {p}, ExpandDimsAttrs{.axis = axis}));
  if (expanded.size() == 1) return expanded[0];
  return call_op("concatenate", {make_tuple(expanded)}, ConcatenateAttrs{.axis = axis});
}

Expr add(const Expr& a, const Expr& b) { return call_op("add", {a, b}); }
Expr mul(const Expr& a, const Expr& b) { return call_op("multiply", {a, b}); }

// The weights of one direction, split by gate.
struct DirectionWeights {
  std::vector<Expr> w, r;       // [hidden, input], [hidden, hidden] per gate
  std::vector<Expr> wb, rb;     // [hidden] per gate, or null without B
  std::vector<Expr> peepholes;  // LSTM: i, o, f, [hidden] each, or empty
};

DirectionWeights direction_weights(ConvertContext& c, Cell cell, int64_t d, int64_t hidden) {
  DirectionWeights dw;
  const int64_t gates = gate_count(cell);
  Expr w = take_index(c.input(1), 0, d), r = take_index(c.input(2), 0, d);
  Expr b = c.has_input(3) ? take_index(c.input(3), 0, d) : nullptr;
  for (int64_t g = 0; g < gates; ++g) {
    dw.w.push_back(slice_axis(w, 0, g * hidden, (g + 1) * hidden));
    dw.r.push_back(slice_axis(r, 0, g * hidden, (g + 1) * hidden));
    dw.wb.push_back(b ? slice_axis(b, 0, g * hidden, (g + 1) * hidden) : nullptr);
    dw.rb.push_back(b ? slice_axis(b, 0, (gates + g) * hidden, (gates + g + 1) * hidden) : nullptr);
  }
  if (cell == Cell::kLstm && c.has_input(7)) {
    Expr p = take_index(c.input(7), 0, d);
    for (int64_t k = 0; k < 3; ++k) dw.peepholes.push_back(slice_axis(p, 0, k * hidden, (k + 1) * hidden));
  }
  return dw;
}

struct StepState {
  Expr h, c;  // [batch, hidden]; c for LSTM only
};

class Unroller {
 public:
  Unroller(ConvertContext& c, Cell cell) : c_(c), cell_(cell) {}

  std::vector<Expr> run() {
    read_shapes();
    std::vector<std::vector<Activation>> fs = activations(c_, directions_, default_activations());
    std::vector<std::vector<Expr>> ys(static_cast<size_t>(directions_));  // per direction, in time order
    std::vector<Expr> last_h, last_c;
    for (int64_t d = 0; d < directions_; ++d) {
      bool reverse = direction_ == "reverse" || (direction_ == "bidirectional" && d == 1);
      DirectionWeights dw = direction_weights(c_, cell_, d, hidden_);
      StepState state{initial(5, d), cell_ == Cell::kLstm ? initial(6, d) : nullptr};
      std::vector<Expr>& y = ys[static_cast<size_t>(d)];
      y.resize(static_cast<size_t>(seq_len_));
      for (int64_t s = 0; s < seq_len_; ++s) {
        int64_t t = reverse ? seq_len_ - 1 - s : s;
        state = step(dw, fs[static_cast<size_t>(d)], take_index(x_, 0, t), state);
        y[static_cast<size_t>(t)] = state.h;
      }
      last_h.push_back(state.h);
      if (state.c) last_c.push_back(state.c);
    }
    std::vector<Expr> per_time;
    for (int64_t t = 0; t < seq_len_; ++t) {
      std::vector<Expr> dirs;
      for (const auto& y : ys) dirs.push_back(y[static_cast<size_t>(t)]);
      per_time.push_back(stack(dirs, 0));
    }
    Expr y = stack(per_time, 0);  // [seq, directions, batch, hidden]
    Expr y_h = stack(last_h, 0);  // [directions, batch, hidden]
    Expr y_c = last_c.empty() ? nullptr : stack(last_c, 0);
    if (layout_ == 1) {
      y = call_op("transpose", {y}, TransposeAttrs{.axes = std::vector<int64_t>{2, 0, 1, 3}});
      y_h = call_op("transpose", {y_h}, TransposeAttrs{.axes = std::vector<int64_t>{1, 0, 2}});
      if (y_c) y_c = call_op("transpose", {y_c}, TransposeAttrs{.axes = std::vector<int64_t>{1, 0, 2}});
    }
    std::vector<Expr> out{y, y_h};
    if (y_c) out.push_back(y_c);
    return out;
  }

 private:
  std::vector<std::string> default_activations() const {
    switch (cell_) {
      case Cell::kRnn: return {"Tanh"};
      case Cell::kGru: return {"Sigmoid", "Tanh"};
      case Cell::kLstm: return {"Sigmoid", "Tanh", "Tanh"};
    }
    return {};
  }

  void read_shapes() {
    layout_ = c_.attrs().get_int("layout", 0);
    check(layout_ == 0 || layout_ == 1, c_.op_type(), "'s layout must be 0 or 1, found ", layout_);
    direction_ = c_.attrs().get_string("direction", "forward");
    if (direction_ != "forward" && direction_ != "reverse" && direction_ != "bidirectional")
      throw std::move(Error(cat(c_.op_type(), "'s direction is not valid"))
                          .expected("forward, reverse or bidirectional", direction_));
    directions_ = direction_ == "bidirectional" ? 2 : 1;
    require_rank(c_, 0, 3, "X");
    require_rank(c_, 2, 3, "R");
    x_ = layout_ == 1 ? call_op("transpose", {c_.input(0)}, TransposeAttrs{.axes = std::vector<int64_t>{1, 0, 2}})
                      : c_.input(0);
    const Shape& xs = c_.tensor_type_of(x_, "X").shape;
    seq_len_ = xs[0];
    batch_ = xs[1];
    dtype_ = c_.input_dtype(0);
    const Shape& rs = c_.input_shape(2);
    hidden_ = c_.attrs().get_int("hidden_size", rs[2]);
    if (seq_len_ == kAnyDim || batch_ == kAnyDim || hidden_ == kAnyDim)
      throw Error(cat(c_.op_type(), " needs static sequence length, batch and hidden size; X is ",
                      shape_str(c_.input_shape(0)), " and R is ", shape_str(rs)));
    if (rs[0] != directions_ || rs[1] != gate_count(cell_) * hidden_)
      throw std::move(Error(cat(c_.op_type(), "'s R has the wrong shape"))
                          .expected(shape_str({directions_, gate_count(cell_) * hidden_, hidden_}), shape_str(rs)));
    clip_ = c_.attrs().has("clip") ? std::optional(c_.attrs().get_float("clip")) : std::nullopt;
    check_sequence_lens();
  }

  // Every sequence as long as X: sequence_lens changes nothing. Shorter ones are not supported.
  void check_sequence_lens() {
    if (!c_.has_input(4)) return;
    std::vector<int64_t> lens = c_.require_ints_input(4, "sequence_lens");
    for (int64_t len : lens)
      if (len != seq_len_)
        throw std::move(Error(cat(c_.op_type(), ": sequences shorter than X are not supported"))
                            .expected(cat("every sequence_lens entry equal to ", seq_len_), shape_str(lens)));
  }

  // initial_h (input 5) or initial_c (input 6) of direction d, zeros when absent.
  Expr initial(size_t input, int64_t d) const {
    if (!c_.has_input(input))
      return make_constant(NDArray::from_doubles({batch_, hidden_}, dtype_,
                                                 std::vector<double>(static_cast<size_t>(batch_ * hidden_), 0.0)));
    return take_index(c_.input(input), layout_ == 1 ? 1 : 0, d);
  }

  // x W^T + wb (+ rb when given).
  Expr input_part(const DirectionWeights& dw, int64_t g, const Expr& x, bool with_rb) const {
    Expr out = call_op("nn.dense", {x, dw.w[static_cast<size_t>(g)]});
    if (dw.wb[static_cast<size_t>(g)]) out = add(out, dw.wb[static_cast<size_t>(g)]);
    if (with_rb && dw.rb[static_cast<size_t>(g)]) out = add(out, dw.rb[static_cast<size_t>(g)]);
    return out;
  }
  Expr hidden_part(const DirectionWeights& dw, int64_t g, const Expr& h) const {
    return call_op("nn.dense", {h, dw.r[static_cast<size_t>(g)]});
  }
  Expr clipped(const Expr& e) const {
    if (!clip_) return e;
    return call_op("clip", {e}, ClipAttrs{.a_min = -*clip_, .a_max = *clip_});
  }
  Expr act(const Activation& f, const Expr& e) const { return apply(f, clipped(e), dtype_); }
  // The pre-activation of gate g: x W^T + h R^T + biases.
  Expr gate(const DirectionWeights& dw, int64_t g, const Expr& x, const Expr& h) const {
    return add(input_part(dw, g, x, true), hidden_part(dw, g, h));
  }

  StepState step(const DirectionWeights& dw, const std::vector<Activation>& f, const Expr& x,
                 const StepState& s) const {
    switch (cell_) {
      case Cell::kRnn: return {act(f[0], gate(dw, 0, x, s.h)), nullptr};
      case Cell::kGru: return gru_step(dw, f, x, s);
      case Cell::kLstm: return lstm_step(dw, f, x, s);
    }
    return s;
  }

  StepState gru_step(const DirectionWeights& dw, const std::vector<Activation>& f, const Expr& x,
                     const StepState& s) const {
    Expr z = act(f[0], gate(dw, 0, x, s.h));
    Expr r = act(f[0], gate(dw, 1, x, s.h));
    Expr candidate;
    if (c_.attrs().get_int("linear_before_reset", 0) != 0) {
      Expr hr = hidden_part(dw, 2, s.h);
      if (dw.rb[2]) hr = add(hr, dw.rb[2]);
      candidate = add(input_part(dw, 2, x, false), mul(r, hr));
    } else {
      candidate = add(input_part(dw, 2, x, true), hidden_part(dw, 2, mul(r, s.h)));
    }
    Expr h_tilde = act(f[1], candidate);
    Expr one = scalar_constant(dtype_, 1.0);
    Expr h = add(mul(call_op("subtract", {one, z}), h_tilde), mul(z, s.h));
    return {h, nullptr};
  }

  StepState lstm_step(const DirectionWeights& dw, const std::vector<Activation>& f, const Expr& x,
                      const StepState& s) const {
    auto peephole = [&](size_t k, const Expr& pre, const Expr& cell) {
      return dw.peepholes.empty() ? pre : add(pre, mul(dw.peepholes[k], cell));
    };
    Expr i = act(f[0], peephole(0, gate(dw, 0, x, s.h), s.c));
    Expr fg = act(f[0], peephole(2, gate(dw, 2, x, s.h), s.c));
    Expr candidate = act(f[1], gate(dw, 3, x, s.h));
    Expr cell = add(mul(fg, s.c), mul(i, candidate));
    Expr o = act(f[0], peephole(1, gate(dw, 1, x, s.h), cell));
    Expr h = mul(o, apply(f[2], cell, dtype_));
    return {h, cell};
  }

  ConvertContext& c_;
  Cell cell_;
  int64_t layout_ = 0, directions_ = 1, seq_len_ = 0, batch_ = 0, hidden_ = 0;
  std::string direction_;
  DType dtype_ = DType::kFloat32;
  std::optional<double> clip_;
  Expr x_;  // [seq, batch, input]
};

ConvertResult convert_rnn(ConvertContext& c) { return Unroller(c, Cell::kRnn).run(); }
ConvertResult convert_gru(ConvertContext& c) { return Unroller(c, Cell::kGru).run(); }
ConvertResult convert_lstm(ConvertContext& c) {
  if (c.attrs().get_int("input_forget", 0) != 0) throw Error("LSTM's input_forget=1 is not supported");
  return Unroller(c, Cell::kLstm).run();
}

}  // namespace

void register_recurrent_converters(ConverterRegistry& r) {
  r.add("RNN", 7, convert_rnn);
  r.add("GRU", 7, convert_gru);
  r.add("LSTM", 7, convert_lstm);
}

}  // namespace kiln::frontend
