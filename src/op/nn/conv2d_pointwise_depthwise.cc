// Op: nn.conv2d_pointwise_depthwise — a 1x1 convolution (plus its bias and activation) whose only
// reader is a depthwise convolution (plus its optional bias and activation), in one call, as the
// inverted residual blocks of MobileNetV2 / EfficientNet open. FusePointwiseDepthwise
// (src/transform/fuse_pointwise_depthwise.cc) rewrites the blocked pair into it.
//
// Compiled, it is one call of kiln_pwdw_f32 (kiln/runtime/microkernels.h) per task of output rows
// of one channel block: the expanded tensor, the network's largest, lives only as a ring of rows
// in the task's L1 instead of being written out and read back. The compute is a stand-in
// that names the operands and the output (as nn.conv2d_winograd's); the schedule splits its nest
// into the tasks and tensorizes each.
#include <algorithm>

#include "kiln/attrs/pointwise_depthwise.h"
#include "kiln/runtime/microkernels.h"
#include "op/nn/conv2d_compute.h"
#include "op/nn/nn_compute.h"
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

using tir::PrimExpr;

constexpr int64_t kBlock = 16;

void check_extent(int64_t got, int64_t want, const std::string& what, const TensorTypeNode& arg,
                  const std::string& arg_name) {
  if (got >= 0 && want >= 0 && got != want)
    throw std::move(Error(cat(what, " of '", arg_name, "' ", shape_str(arg.shape), " does not fit the call"))
                        .expected(cat(want), cat(got)));
}

// data (N, C/x, H, W, x), pw (E/16, C/x, 1, 1, x, 16), pw_bias (E), dw (E/16, 1, KH, KW, 1, 16)
// [, dw_bias (E)] -> (N, E/16, OH, OW, 16).
Type pointwise_depthwise_relation(const std::vector<Type>& args, const Conv2DPointwiseDepthwiseAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", 5, "NCHW{x}c");
  const TensorTypeNode& pw = arg_tensor_of_rank(args, 1, "pointwise_weight", 6, "OIHW{x}i16o");
  const TensorTypeNode& pw_bias = arg_tensor_of_rank(args, 2, "pointwise_bias", 1, "(E)");
  const TensorTypeNode& dw = arg_tensor_of_rank(args, 3, "depthwise_weight", 6, "OIHW1i16o");
  check_float_arg(data, "data");
  for (const TensorTypeNode* t : {&pw, &pw_bias, &dw})
    if (t->dtype != data.dtype)
      throw std::move(Error("the weights and biases must have the data's dtype")
                          .expected(std::string(dtype_name(data.dtype)), std::string(dtype_name(t->dtype))));
  const Shape& x = data.shape;
  const int64_t eb = pw.shape[0], channels = eb < 0 ? kAnyDim : eb * kBlock;
  check_extent(pw.shape[1], x[1], "axis 1 (input channel blocks)", pw, "pointwise_weight");
  check_extent(pw.shape[2] * pw.shape[3], 1, "the window (axes 2, 3)", pw, "pointwise_weight");
  check_extent(pw.shape[4], x[4], "axis 4 (the data's channel block)", pw, "pointwise_weight");
  check_extent(pw.shape[5], kBlock, "axis 5 (the output channel block)", pw, "pointwise_weight");
  check_extent(pw_bias.shape[0], channels, "the length", pw_bias, "pointwise_bias");
  check_extent(dw.shape[0], eb, "axis 0 (channel blocks)", dw, "depthwise_weight");
  check_extent(dw.shape[1] * dw.shape[4], 1, "axes 1 and 4", dw, "depthwise_weight");
  check_extent(dw.shape[5], kBlock, "axis 5 (the channel block)", dw, "depthwise_weight");
  if (args.size() > 4) {
    const TensorTypeNode& dw_bias = arg_tensor_of_rank(args, 4, "depthwise_bias", 1, "(E)");
    check_extent(dw_bias.shape[0], channels, "the length", dw_bias, "depthwise_bias");
  }
  const Window2D win = attrs.window();
  const int64_t out_h =
      window_extent("height", x, x[2], dw.shape[2], win.strides.h, win.dilation.h, win.padding.top, win.padding.bottom);
  const int64_t out_w =
      window_extent("width", x, x[3], dw.shape[3], win.strides.w, win.dilation.w, win.padding.left, win.padding.right);
  return tensor_type({x[0], eb, out_h, out_w, kBlock}, data.dtype);
}

std::vector<te::Tensor> pointwise_depthwise_compute(const ComputeInput& call, const Conv2DPointwiseDepthwiseAttrs&) {
  std::vector<te::Tensor> operands;
  for (size_t i = 0; i < call.args.size(); ++i) operands.push_back(nn::operand_in_memory(call, i));
  return {
      nn::stand_in(expect_tensor(call.out_type, "output").shape, operands, call.name, !nn::all_placeholders(operands))};
}

// How the call splits into tasks: `blocks` channel blocks x `rows` output rows of one image each,
// the 1x1 rows on a register tile of `tile`.
struct PointwiseDepthwiseTasks {
  nn::ConvRegisterTile tile;
  int64_t blocks = 0, rows = 0;
};

// One channel block per task, so that its ring of expanded rows (2 * span rows of W x 16 floats:
// 43 KB at 112 wide) stays in L1; three blocks' ring in L2 ran slower than not fusing. An odd
// number of tasks splits the rows in two (when they divide), each half recomputing the expanded
// rows both read, so that two threads share them evenly.
PointwiseDepthwiseTasks tasks_of(const Shape& data, const Shape& out) {
  PointwiseDepthwiseTasks t;
  t.tile = nn::conv_register_tile(data[3], 1, 16);
  t.blocks = t.tile.blocks;
  t.rows = out[2];
  if ((data[0] * out[1] / t.blocks) % 2 == 1 && out[2] % 2 == 0 && out[2] >= 16) t.rows = out[2] / 2;
  return t;
}

PrimExpr activation_code(const FoldedActivation& act) {
  return PrimExpr(int64_t{act.kind == "clip" ? KILN_ACT_CLAMP : act.kind == "swish" ? KILN_ACT_SWISH : KILN_ACT_NONE});
}

te::TensorIntrin pointwise_depthwise_intrin(const ComputeInput& call, const Conv2DPointwiseDepthwiseAttrs& attrs,
                                            const PointwiseDepthwiseTasks& tasks) {
  const Shape x = call.args.at(0).shape(), dw = call.args.at(3).shape(),
              out = expect_tensor(call.out_type, "output").shape;
  const Window2D win = attrs.window();
  const FoldedActivation pw_act = attrs.pointwise(), dw_act = attrs.depthwise();
  auto emit = [=](const std::vector<te::BufferSlice>& in, const te::BufferSlice& o) -> tir::Stmt {
    const PrimExpr zero(int64_t{0});
    const PrimExpr image = o.origin.at(0), block = o.origin.at(1), row = o.origin.at(2);
    auto at = [&](size_t i, std::vector<PrimExpr> index) { return tir::address_of(in.at(i).buffer, std::move(index)); };
    auto f32 = [](double v) { return tir::make_const(DType::kFloat32, v); };
    std::vector<PrimExpr> args;
    for (int64_t v :
         {tasks.tile.positions, tasks.tile.blocks, x[1], x[2], x[3], x[4], dw[2], dw[3], win.strides.h, win.strides.w,
          win.dilation.h, win.dilation.w, win.padding.top, win.padding.left, out[3], tasks.blocks})
      args.push_back(PrimExpr(v));
    args.push_back(row);
    args.push_back(row + tasks.rows);
    args.push_back(at(0, {image, zero, zero, zero, zero}));
    args.push_back(at(1, {block, zero, zero, zero, zero, zero}));
    args.push_back(at(2, {block * kBlock}));
    args.insert(args.end(), {activation_code(pw_act), f32(pw_act.clamp_min), f32(pw_act.clamp_max)});
    args.push_back(at(3, {block, zero, zero, zero, zero, zero}));
    args.push_back(in.size() > 4 ? at(4, {block * kBlock}) : zero);
    args.insert(args.end(), {activation_code(dw_act), f32(dw_act.clamp_min), f32(dw_act.clamp_max)});
    args.push_back(o.pointer());
    args.push_back(PrimExpr(out[2] * out[3] * kBlock));
    return tir::Evaluate{tir::extern_call("kiln_pwdw_f32", std::move(args))};
  };
  const std::vector<int64_t> task_shape = {1, tasks.blocks, tasks.rows, out[3], kBlock};
  return te::TensorIntrin{"kiln_pwdw_f32", nn::stand_in_description(call, task_shape, "pwdw"), emit};
}

// Tasks (image, block group, row group) in parallel, each one call.
void pointwise_depthwise_schedule(const ScheduleInput& in, const Conv2DPointwiseDepthwiseAttrs& attrs) {
  const te::Tensor& out = in.anchor.at(0);
  const PointwiseDepthwiseTasks tasks = tasks_of(in.call.args.at(0).shape(), out.shape());
  te::Stage& stage = in.schedule[out];
  auto [bo, bi] = stage.split(stage.axis(1), tasks.blocks);
  auto [ro, ri] = stage.split(stage.axis(2), tasks.rows);
  stage.reorder({stage.axis(0), bo, ro, bi, ri, stage.axis(3), stage.axis(4)});
  te::IterVar task = nn::fuse_all(stage, {stage.axis(0), bo, ro});
  const Shape x = in.call.args.at(0).shape(), dw = in.call.args.at(3).shape();
  const int64_t macs = nn::product(out.shape()) * (x[1] * x[4] + dw[2] * dw[3] * nn::kDepthwiseCostPerMac);
  if (macs >= nn::kMinParallelWork) stage.parallel(task);
  stage.tensorize(bi, pointwise_depthwise_intrin(in.call, attrs, tasks));
  nn::schedule_around_stand_in(in, out);
}

std::string float32_static(const std::vector<Type>& arg_types, const Type& out_type, const Attrs&) {
  return nn::float32_static_reason(arg_types, out_type, "pointwise-depthwise");
}

// The two convolutions' 2 * (N * E * H * W * C + N * E * OH * OW * KH * KW).
double pointwise_depthwise_flops(const std::vector<Type>& args, const Type& out_type,
                                 const Conv2DPointwiseDepthwiseAttrs&) {
  const TensorTypeNode* data = as_tensor(args.at(0));
  const TensorTypeNode* dw = as_tensor(args.at(3));
  const TensorTypeNode* out = as_tensor(out_type);
  if (!data || !dw || !out || !data->is_static() || !dw->is_static() || !out->is_static()) return 0;
  const auto& x = data->shape;
  const double channels = static_cast<double>(out->shape[1] * kBlock);
  const double pointwise = static_cast<double>(x[0] * x[2] * x[3] * x[1] * x[4]) * channels;
  const double depthwise = static_cast<double>(nn::product(out->shape) * dw->shape[2] * dw->shape[3]);
  return 2.0 * (pointwise + depthwise);
}

}  // namespace

void register_nn_pointwise_depthwise_ops(OpRegistry& registry) {
  OpDef& op = registry.add("nn.conv2d_pointwise_depthwise")
                  .describe(
                      "A 1x1 convolution of blocked data NCHW{x}c into 16-channel blocks, plus a bias per channel, "
                      "then an activation, then a depthwise convolution of that (OIHW1i16o weight, strides, padding, "
                      "dilation), plus an optional bias, then an activation: an inverted residual block's opening "
                      "pair, whose expanded tensor is never stored.")
                  .arg("data")
                  .arg("pointwise_weight")
                  .arg("pointwise_bias")
                  .arg("depthwise_weight")
                  .arg("depthwise_bias", /*optional=*/true)
                  .attrs<Conv2DPointwiseDepthwiseAttrs>()
                  .set_relation<Conv2DPointwiseDepthwiseAttrs>(pointwise_depthwise_relation)
                  .set_pattern(OpPattern::kOutEWiseFusable);
  op.set_flops<Conv2DPointwiseDepthwiseAttrs>(pointwise_depthwise_flops);
  set_compute<Conv2DPointwiseDepthwiseAttrs>(op, pointwise_depthwise_compute, float32_static);
  set_schedule<Conv2DPointwiseDepthwiseAttrs>(op, pointwise_depthwise_schedule);
}

}  // namespace kiln
