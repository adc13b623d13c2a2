// Ops: nn.lstm, nn.gru, nn.rnn — one layer and direction of a recurrent network over a whole
// sequence, as the ONNX converter emits them for LSTM / GRU / RNN with the default activations.
// The input projection of every step (x W^T plus the biases that do not depend on h) is an
// operand, computed ahead by one nn.dense over all steps; the recurrent weight is R^T packed in
// panels of 32 columns, each gate padded to a whole number of panels (see kiln_lstm_seq_f32 in
// kiln/runtime/microkernels.h), so the packing is folded into the params at build time.
//
// Compiled, a call is one kernel: float32 calls are the sequence kernels of microkernels.h, which
// keep h, c and the packed R in cache over the time loop and launch nothing per step. The
// recurrence has no te form, so the compute is a stand-in whose only role is to name the operands
// and the output; the schedule always tensorizes its whole loop nest with the sequence kernel,
// and the ComputeLimit sends other dtypes to the reference kernel.
#include "kiln/attrs/recurrent.h"

#include "kiln/op/strategy.h"
#include "kiln/runtime/microkernels.h"
#include "op/nn/window_attrs.h"
#include "op/op_util.h"

namespace kiln {

namespace {

using tir::PrimExpr;

enum class Cell { kRnn, kGru, kLstm };

int64_t gate_count(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }

const char* kernel_of(Cell cell) {
  return cell == Cell::kRnn ? "kiln_rnn_seq_f32" : cell == Cell::kGru ? "kiln_gru_seq_f32" : "kiln_lstm_seq_f32";
}

void expect_shape(const TensorTypeNode& t, const Shape& expected, const std::string& name, DType dtype) {
  if (t.dtype != dtype)
    throw std::move(Error(cat("dtype of '", name, "' differs from the projection's"))
                        .expected(std::string(dtype_name(dtype)), std::string(dtype_name(t.dtype))));
  if (t.shape.size() != expected.size())
    throw std::move(Error(cat("'", name, "' has the wrong rank")).expected(shape_str(expected), shape_str(t.shape)));
  for (size_t d = 0; d < expected.size(); ++d)
    if (t.shape[d] >= 0 && expected[d] >= 0 && t.shape[d] != expected[d])
      throw std::move(Error(cat("'", name, "' has the wrong shape")).expected(shape_str(expected), shape_str(t.shape)));
}

int64_t panels_of(Cell cell, int64_t hidden) {
  return hidden < 0 ? kAnyDim : gate_count(cell) * KILN_REC_HP(hidden) / KILN_PANEL_NR;
}

// projection (seq, batch, gates*hidden), weight (gates*hp/32, hidden, 32), then per cell:
// lstm init_h, init_c (batch, hidden), peepholes (3*hidden); gru rb_h (hidden), init_h; rnn init_h.
// -> (seq, batch, hidden).
Type recurrent_relation(Cell cell, const std::vector<Type>& args) {
  const TensorTypeNode& proj = arg_tensor_of_rank(args, 0, "projection", 3, "(seq, batch, gates * hidden)");
  check_float_arg(proj, "projection");
  const size_t h_arg = cell == Cell::kGru ? 3 : 2;
  const TensorTypeNode& h0 = arg_tensor_of_rank(args, h_arg, "init_h", 2, "(batch, hidden)");
  const int64_t seq = proj.shape[0], batch = proj.shape[1], hidden = h0.shape[1];
  const int64_t gates = gate_count(cell);
  expect_shape(proj, {seq, batch, hidden < 0 ? kAnyDim : gates * hidden}, "projection", proj.dtype);
  expect_shape(arg_tensor(args, 1, "weight"), {panels_of(cell, hidden), hidden, KILN_PANEL_NR}, "weight", proj.dtype);
  expect_shape(h0, {batch, hidden}, "init_h", proj.dtype);
  if (cell == Cell::kLstm) {
    expect_shape(arg_tensor(args, 3, "init_c"), {batch, hidden}, "init_c", proj.dtype);
    expect_shape(arg_tensor(args, 4, "peepholes"), {hidden < 0 ? kAnyDim : 3 * hidden}, "peepholes", proj.dtype);
  }
  if (cell == Cell::kGru) expect_shape(arg_tensor(args, 2, "rb_h"), {hidden}, "rb_h", proj.dtype);
  return tensor_type({seq, batch, hidden}, proj.dtype);
}

// The stand-in element: it reads every operand once, in argument order, so that the tensorized
// call receives them in that order.
PrimExpr stand_in(const std::vector<te::Tensor>& args, const te::Indices& i) {
  PrimExpr sum = args[0](i[0], i[1], i[2]);
  for (size_t a = 1; a < args.size(); ++a) {
    std::vector<PrimExpr> zero(args[a].ndim(), PrimExpr(int64_t{0}));
    sum = sum + args[a](zero);
  }
  return sum;
}

te::Tensor stand_in_of(const std::vector<te::Tensor>& args, const std::string& name) {
  const int64_t hidden = args[0].shape()[2] == 0 ? 0 : args[1].shape()[1];
  return te::compute({args[0].shape()[0], args[0].shape()[1], hidden}, name,
                     [&](const te::Indices& i) { return stand_in(args, i); });
}

std::vector<te::Tensor> recurrent_compute(const ComputeInput& call) { return {stand_in_of(call.args, call.name)}; }

te::TensorIntrin sequence_intrin(Cell cell, const std::vector<te::Tensor>& args, const RecurrentAttrs& attrs) {
  // Operands that are one tensor (zero init_h and init_c folded into one constant) are one input
  // of the loop nest: one placeholder each, and `slot` maps an operand to its input.
  std::vector<te::Tensor> distinct, slots;
  std::vector<size_t> slot;
  for (const te::Tensor& arg : args) {
    size_t i = 0;
    while (i < distinct.size() && !distinct[i].same_as(arg)) ++i;
    if (i == distinct.size()) {
      distinct.push_back(arg);
      slots.push_back(te::placeholder(arg.shape(), arg.dtype(), cat("A", i)));
    }
    slot.push_back(i);
  }
  std::vector<te::Tensor> operands;
  for (size_t i : slot) operands.push_back(slots[i]);
  const int64_t seq = args[0].shape()[0], batch = args[0].shape()[1], hidden = args[1].shape()[1];
  auto emit = [cell, seq, batch, hidden, attrs, slot](const std::vector<te::BufferSlice>& in,
                                                      const te::BufferSlice& out) -> tir::Stmt {
    std::vector<PrimExpr> call_args{PrimExpr(seq), PrimExpr(batch), PrimExpr(hidden)};
    for (size_t i : slot) call_args.push_back(in.at(i).pointer());
    call_args.push_back(PrimExpr(int64_t{attrs.reverse}));
    if (cell == Cell::kLstm) call_args.push_back(PrimExpr(int64_t{attrs.output_cell}));
    if (cell == Cell::kGru) call_args.push_back(PrimExpr(int64_t{attrs.linear_before_reset}));
    call_args.push_back(out.pointer());
    return tir::Evaluate{tir::extern_call(kernel_of(cell), std::move(call_args))};
  };
  return te::TensorIntrin{kernel_of(cell), stand_in_of(operands, "sequence"), emit};
}

// The whole sequence is one call of the sequence kernel.
void recurrent_schedule(Cell cell, const ScheduleInput& in, const RecurrentAttrs& attrs) {
  te::Stage& stage = in.schedule[in.anchor.at(0)];
  stage.tensorize(stage.axis(0), sequence_intrin(cell, in.call.args, attrs));
}

// The sequence kernels are float32 only.
std::string float32_only(const std::vector<Type>& arg_types, const Type& out_type, const Attrs&) {
  const TensorTypeNode* out = as_tensor(out_type);
  if (!out || out->dtype != DType::kFloat32) return "the sequence kernels are float32 only";
  for (const Type& t : arg_types) {
    const TensorTypeNode* tt = as_tensor(t);
    if (!tt || tt->dtype != DType::kFloat32) return "the sequence kernels are float32 only";
    for (int64_t d : tt->shape)
      if (d <= 0) return "the sequence kernels need static, non-empty operands";
  }
  return "";
}

// The recurrent products h R^T of every step: 2 * seq * batch * (gates * hidden) * hidden (the
// input projection is an nn.dense of its own and counts there).
double recurrent_flops(const std::vector<Type>& args, const Type& out) {
  const TensorTypeNode* proj = as_tensor(args.at(0));
  const TensorTypeNode* h = as_tensor(out);
  if (!proj || !h || proj->shape.size() != 3 || h->shape.size() != 3 || h->shape[2] < 0) return 0;
  return 2.0 * known_elements(proj->shape) * static_cast<double>(h->shape[2]);
}

void add_recurrent_op(OpRegistry& registry, Cell cell, const std::string& name, const std::string& doc,
                      const std::vector<std::string>& operands) {
  OpDef& def = registry.add(name).describe(doc);
  for (const std::string& operand : operands) def.arg(operand);
  def.attrs<RecurrentAttrs>()
      .set_relation<RecurrentAttrs>(
          [cell](const std::vector<Type>& args, const RecurrentAttrs&) { return recurrent_relation(cell, args); })
      .set_pattern(OpPattern::kOpaque)
      .set_flops<RecurrentAttrs>([](const std::vector<Type>& args, const Type& out, const RecurrentAttrs&) {
        return recurrent_flops(args, out);
      });
  set_compute(def, recurrent_compute, float32_only);
  set_schedule<RecurrentAttrs>(
      def, [cell](const ScheduleInput& in, const RecurrentAttrs& attrs) { recurrent_schedule(cell, in, attrs); });
}

}  // namespace

void register_nn_recurrent_ops(OpRegistry& registry) {
  const std::string common =
      " over a whole sequence. projection (seq, batch, gates * hidden): x W^T plus the biases of every step; "
      "weight: R^T in panels of 32 columns, (gates * hp / 32, hidden, 32), hp = hidden rounded up to 32, gate g's "
      "unit u at column g * hp + u. Returns h of every step (seq, batch, hidden).";
  add_recurrent_op(registry, Cell::kLstm, "nn.lstm",
                   "One direction of an LSTM (ONNX gates i, o, f, c; default activations)" + common +
                       " init_h, init_c (batch, hidden); peepholes (3 * hidden), order i, o, f.",
                   {"projection", "weight", "init_h", "init_c", "peepholes"});
  add_recurrent_op(registry, Cell::kGru, "nn.gru",
                   "One direction of a GRU (ONNX gates z, r, h; default activations)" + common +
                       " rb_h (hidden): the recurrent bias of the h gate; init_h (batch, hidden).",
                   {"projection", "weight", "rb_h", "init_h"});
  add_recurrent_op(registry, Cell::kRnn, "nn.rnn", "One direction of a tanh RNN" + common + " init_h (batch, hidden).",
                   {"projection", "weight", "init_h"});
}

}  // namespace kiln
