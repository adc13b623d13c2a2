// Converters: recurrent layers (RNN, GRU, LSTM). Per direction, the input projection of all
// steps is one dense ahead of the recurrence. With the default activations and no clip the
// recurrence is one sequence op per direction (nn.lstm / nn.gru / nn.rnn, src/op/nn/recurrent.cc:
// one kernel per sequence), its weight R^T packed in panels here so that FoldConstant packs it at
// build time. Otherwise it is unrolled over the static sequence length: each step does one dense
// of h by R (two for GRU, whose candidate reads r*h) and the gate math.
//
// sequence_lens (constant or given at run time) shorter than X for some batch entries unrolls
// too, with a mask per step (t < length): a masked step keeps the state and writes zeros to Y,
// so Y_h / Y_c are the state after each entry's last step, in either direction, as ONNX says.
//
// ONNX packs the weights of all gates: W is [directions, gates*hidden, input], R is
// [directions, gates*hidden, hidden], B is [directions, 2*gates*hidden] (W's biases, then
// R's). Gate orders: RNN (i), GRU (z, r, h), LSTM (i, o, f, c); LSTM's peepholes P are
// [directions, 3*hidden] in the order (i, o, f).
#include "kiln/attrs/recurrent.h"

#include <algorithm>
#include <numeric>

#include "frontend/onnx/converters/converter_util.h"
#include "kiln/attrs/nn.h"
#include "kiln/attrs/pad.h"
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
Expr dense(const Expr& x, const Expr& w) { return call_op("nn.dense", {x, w}); }
Expr reshape(const Expr& x, std::vector<int64_t> shape) {
  return call_op("reshape", {x}, ReshapeAttrs{.newshape = std::move(shape)});
}

struct StepState {
  Expr h, c;  // [batch, hidden]; c for LSTM only
};

// The operands one direction reads every step.
struct Direction {
  Expr projection;  // [seq, batch, gates*hidden]: x W^T + the biases that do not depend on h
  Expr r;           // [gates*hidden, hidden]
  Expr rb_h;        // GRU with linear_before_reset: Rbh, added to h Rh^T before r scales it
  Expr peepholes;   // LSTM: [3*hidden] in the order (i, o, f), or null
};

class Unroller {
 public:
  Unroller(ConvertContext& c, Cell cell) : c_(c), cell_(cell) {}

  std::vector<Expr> run() {
    read_shapes();
    std::vector<std::vector<Activation>> fs = activations(c_, directions_, default_activations());
    if (!lens_ && sequence_op_applies(fs)) return run_sequence_ops();
    std::vector<std::vector<Expr>> ys(static_cast<size_t>(directions_));  // per direction, in time order
    std::vector<Expr> last_h, last_c;
    for (int64_t d = 0; d < directions_; ++d) {
      bool reverse = direction_ == "reverse" || (direction_ == "bidirectional" && d == 1);
      Direction dir = direction(d);
      StepState state{initial(5, d), cell_ == Cell::kLstm ? initial(6, d) : nullptr};
      std::vector<Expr>& y = ys[static_cast<size_t>(d)];
      y.resize(static_cast<size_t>(seq_len_));
      for (int64_t s = 0; s < seq_len_; ++s) {
        int64_t t = reverse ? seq_len_ - 1 - s : s;
        StepState next = step(dir, fs[static_cast<size_t>(d)], take_index(dir.projection, 0, t), state);
        if (!lens_) {
          state = next;
          y[static_cast<size_t>(t)] = state.h;
          continue;
        }
        Expr live = step_mask(t);
        y[static_cast<size_t>(t)] = call_op("where", {live, next.h, scalar_constant(dtype_, 0.0)});
        state = {call_op("where", {live, next.h, state.h}),
                 next.c ? call_op("where", {live, next.c, state.c}) : nullptr};
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
    return outputs(y, y_h, y_c);
  }

 private:
  // y [seq, directions, batch, hidden], y_h and y_c [directions, batch, hidden] in ONNX's layout.
  std::vector<Expr> outputs(Expr y, Expr y_h, Expr y_c) const {
    if (layout_ == 1) {
      y = call_op("transpose", {y}, TransposeAttrs{.axes = std::vector<int64_t>{2, 0, 1, 3}});
      y_h = call_op("transpose", {y_h}, TransposeAttrs{.axes = std::vector<int64_t>{1, 0, 2}});
      if (y_c) y_c = call_op("transpose", {y_c}, TransposeAttrs{.axes = std::vector<int64_t>{1, 0, 2}});
    }
    std::vector<Expr> out{y, y_h};
    if (y_c) out.push_back(y_c);
    return out;
  }

  // The sequence ops compute the default activations without clip.
  bool sequence_op_applies(const std::vector<std::vector<Activation>>& fs) const {
    if (clip_ || !is_float(dtype_)) return false;
    const std::vector<std::string> defaults = default_activations();
    for (const auto& per_direction : fs)
      for (size_t i = 0; i < per_direction.size(); ++i)
        if (per_direction[i].name != lower(defaults[i])) return false;
    return true;
  }

  // One nn.lstm / nn.gru / nn.rnn call per direction.
  std::vector<Expr> run_sequence_ops() {
    std::vector<Expr> ys, last_h, last_c;
    const bool cell_wanted = cell_ == Cell::kLstm && c_.num_outputs() > 2;
    for (int64_t d = 0; d < directions_; ++d) {
      RecurrentAttrs attrs;
      attrs.reverse = direction_ == "reverse" || (direction_ == "bidirectional" && d == 1);
      attrs.linear_before_reset = linear_before_reset_;
      const int64_t last = attrs.reverse ? 0 : seq_len_ - 1;
      Direction dir = direction(d);
      std::vector<Expr> args{dir.projection, packed_weight(dir.r)};
      if (cell_ == Cell::kGru) args.push_back(dir.rb_h ? dir.rb_h : zeros({hidden_}));
      args.push_back(initial(5, d));
      if (cell_ == Cell::kLstm) {
        args.push_back(initial(6, d));
        args.push_back(dir.peepholes ? dir.peepholes : zeros({3 * hidden_}));
      }
      const char* op = cell_ == Cell::kLstm ? "nn.lstm" : cell_ == Cell::kGru ? "nn.gru" : "nn.rnn";
      Expr y = call_op(op, args, attrs);  // [seq, batch, hidden]
      ys.push_back(y);
      last_h.push_back(take_index(y, 0, last));
      if (cell_wanted) {
        attrs.output_cell = true;
        last_c.push_back(take_index(call_op(op, args, attrs), 0, last));
      }
    }
    return outputs(stack(ys, 1), stack(last_h, 0), last_c.empty() ? nullptr : stack(last_c, 0));
  }

  Expr zeros(Shape shape) const {
    const size_t count =
        static_cast<size_t>(std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>()));
    return make_constant(NDArray::from_doubles(std::move(shape), dtype_, std::vector<double>(count, 0.0)));
  }

  // R [gates*hidden, hidden] as the sequence ops take it: R^T in panels of 32 columns, each gate
  // padded with zero rows to a multiple of 32 units.
  Expr packed_weight(const Expr& r) const {
    const int64_t gates = gate_count(cell_), padded = (hidden_ + 31) / 32 * 32;
    Expr w = r;
    if (padded != hidden_) {
      PadAttrs pad;
      pad.pad_width = PadAttrs::width_of({{0, 0}, {0, padded - hidden_}, {0, 0}});
      w = reshape(call_op("nn.pad", {reshape(w, {gates, hidden_, hidden_}), scalar_constant(dtype_, 0.0)}, pad),
                  {gates * padded, hidden_});
    }
    LayoutTransformAttrs layout;
    layout.src_layout = "NK";
    layout.dst_layout = "NK32n";
    return call_op("layout_transform", {w}, layout);
  }

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
    linear_before_reset_ = cell_ == Cell::kGru && c_.attrs().get_int("linear_before_reset", 0) != 0;
    read_sequence_lens();
  }

  // sequence_lens [batch] as lens_, unless it is absent or a constant of X's length everywhere
  // (then it changes nothing and the sequence ops apply).
  void read_sequence_lens() {
    if (!c_.has_input(4)) return;
    const TensorTypeNode& t = c_.input_type(4);
    if (t.ndim() != 1 || (t.shape[0] != kAnyDim && t.shape[0] != batch_) || !is_int(t.dtype))
      throw std::move(Error(cat(c_.op_type(), "'s sequence_lens has the wrong type"))
                          .expected(cat("an integer tensor of shape (", batch_, ")"),
                                    cat(dtype_name(t.dtype), " ", shape_str(t.shape))));
    if (std::optional<NDArray> lens = c_.constant_input(4)) {
      const std::vector<int64_t> values = lens->to_ints();
      if (std::all_of(values.begin(), values.end(), [&](int64_t len) { return len == seq_len_; })) return;
    }
    lens_ = call_op("cast", {c_.input(4)}, CastAttrs{.dtype = "int64"});
  }

  // [batch, 1]: whether step t is within each batch entry's sequence.
  Expr step_mask(int64_t t) const {
    Expr live = call_op("less", {make_constant(NDArray::scalar(DType::kInt64, static_cast<double>(t))), lens_});
    return call_op("expand_dims", {live}, ExpandDimsAttrs{.axis = 1});
  }

  // initial_h (input 5) or initial_c (input 6) of direction d, zeros when absent.
  Expr initial(size_t input, int64_t d) const {
    if (!c_.has_input(input))
      return make_constant(NDArray::from_doubles({batch_, hidden_}, dtype_,
                                                 std::vector<double>(static_cast<size_t>(batch_ * hidden_), 0.0)));
    return take_index(c_.input(input), layout_ == 1 ? 1 : 0, d);
  }

  // The input projection of every step is one dense over (seq*batch, input) ahead of the
  // recurrence, so a step only multiplies h by R. The biases join it, except GRU's Rbh under
  // linear_before_reset, which r scales.
  Direction direction(int64_t d) const {
    const int64_t width = gate_count(cell_) * hidden_;
    Direction dir;
    Expr projection = dense(reshape(x_, {seq_len_ * batch_, -1}), take_index(c_.input(1), 0, d));
    if (c_.has_input(3)) {
      Expr b = take_index(c_.input(3), 0, d);
      Expr wb = slice_axis(b, 0, 0, width), rb = slice_axis(b, 0, width, 2 * width);
      if (linear_before_reset_) {
        dir.rb_h = slice_axis(rb, 0, 2 * hidden_, width);
        Expr zr = add(slice_axis(wb, 0, 0, 2 * hidden_), slice_axis(rb, 0, 0, 2 * hidden_));
        projection = add(projection, call_op("concatenate", {make_tuple({zr, slice_axis(wb, 0, 2 * hidden_, width)})},
                                             ConcatenateAttrs{.axis = 0}));
      } else {
        projection = add(projection, add(wb, rb));
      }
    }
    dir.projection = reshape(projection, {seq_len_, batch_, width});
    dir.r = take_index(c_.input(2), 0, d);
    if (cell_ == Cell::kLstm && c_.has_input(7)) dir.peepholes = take_index(c_.input(7), 0, d);
    return dir;
  }

  // Gates [first, last) of a [batch, gates*hidden] value.
  Expr gates(const Expr& e, int64_t first, int64_t last) const {
    return slice_axis(e, 1, first * hidden_, last * hidden_);
  }
  Expr clipped(const Expr& e) const {
    if (!clip_) return e;
    return call_op("clip", {e}, ClipAttrs{.a_min = -*clip_, .a_max = *clip_});
  }
  Expr act(const Activation& f, const Expr& e) const { return apply(f, clipped(e), dtype_); }

  // `x` is the step's slice of the projection, [batch, gates*hidden].
  StepState step(const Direction& dir, const std::vector<Activation>& f, const Expr& x, const StepState& s) const {
    switch (cell_) {
      case Cell::kRnn: return {act(f[0], add(x, dense(s.h, dir.r))), nullptr};
      case Cell::kGru: return gru_step(dir, f, x, s);
      case Cell::kLstm: return lstm_step(dir, f, x, s);
    }
    return s;
  }

  StepState gru_step(const Direction& dir, const std::vector<Activation>& f, const Expr& x, const StepState& s) const {
    Expr candidate;
    Expr z, r;
    if (linear_before_reset_) {
      Expr hr = dense(s.h, dir.r);
      Expr zr = add(gates(x, 0, 2), gates(hr, 0, 2));
      z = act(f[0], gates(zr, 0, 1));
      r = act(f[0], gates(zr, 1, 2));
      Expr hr_h = gates(hr, 2, 3);
      if (dir.rb_h) hr_h = add(hr_h, dir.rb_h);
      candidate = add(gates(x, 2, 3), mul(r, hr_h));
    } else {
      Expr zr = add(gates(x, 0, 2), dense(s.h, slice_axis(dir.r, 0, 0, 2 * hidden_)));
      z = act(f[0], gates(zr, 0, 1));
      r = act(f[0], gates(zr, 1, 2));
      candidate = add(gates(x, 2, 3), dense(mul(r, s.h), slice_axis(dir.r, 0, 2 * hidden_, 3 * hidden_)));
    }
    Expr h_tilde = act(f[1], candidate);
    Expr one = scalar_constant(dtype_, 1.0);
    Expr h = add(mul(call_op("subtract", {one, z}), h_tilde), mul(z, s.h));
    return {h, nullptr};
  }

  StepState lstm_step(const Direction& dir, const std::vector<Activation>& f, const Expr& x, const StepState& s) const {
    Expr pre = add(x, dense(s.h, dir.r));  // gates i, o, f, c
    auto peephole = [&](int64_t k, const Expr& gate_pre, const Expr& cell) {
      if (!dir.peepholes) return gate_pre;
      return add(gate_pre, mul(slice_axis(dir.peepholes, 0, k * hidden_, (k + 1) * hidden_), cell));
    };
    Expr i = act(f[0], peephole(0, gates(pre, 0, 1), s.c));
    Expr fg = act(f[0], peephole(2, gates(pre, 2, 3), s.c));
    Expr candidate = act(f[1], gates(pre, 3, 4));
    Expr cell = add(mul(fg, s.c), mul(i, candidate));
    Expr o = act(f[0], peephole(1, gates(pre, 1, 2), cell));
    Expr h = mul(o, apply(f[2], cell, dtype_));
    return {h, cell};
  }

  ConvertContext& c_;
  Cell cell_;
  int64_t layout_ = 0, directions_ = 1, seq_len_ = 0, batch_ = 0, hidden_ = 0;
  std::string direction_;
  DType dtype_ = DType::kFloat32;
  std::optional<double> clip_;
  bool linear_before_reset_ = false;
  Expr x_;     // [seq, batch, input]
  Expr lens_;  // sequence_lens as int64 [batch] when some may be shorter than X, else null
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
