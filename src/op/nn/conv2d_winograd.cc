// Ops: nn.winograd_weight_transform and nn.conv2d_winograd — a 3x3 stride-1 convolution as
// Winograd's F(4x4, 3x3) in the blocked layouts AlterOpLayout chooses (WinogradConv2D,
// src/transform/winograd_conv2d.cc, rewrites nn.conv2d into them). The weight transform
// U = G g G^T is a call on the constant weight that FoldConstant evaluates at build time (its
// reference kernel), so the artifact's params hold U and only data and output are transformed at
// run time.
//
// Compiled, nn.conv2d_winograd is one call of kiln_conv2d_winograd_f32
// (kiln/runtime/microkernels.h: input transform per tile, 36 products on the panel GEMM, output
// transform). The algorithm has no te form worth lowering, so the compute is a stand-in that
// names the operands and the output and the schedule tensorizes its whole nest. The bias, the
// residual and the clamp (a relu or clip) that WinogradConv2D folds into the call are applied by
// the kernel's output transform before its store; other element-wise ops FuseOps adds after it
// are stages over its output, a second pass.
#include <algorithm>

#include "kiln/attrs/winograd.h"
#include "kiln/runtime/microkernels.h"
#include "op/nn/nn_compute.h"
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

using tir::PrimExpr;

int64_t panels_of(int64_t out_channels) { return (out_channels + KILN_PANEL_NR - 1) / KILN_PANEL_NR; }

// weight OIHW{x}i{y}o (O/y, I/x, 3, 3, x, y) -> (36, ceil(O/32), I, 32).
Type weight_transform_relation(const std::vector<Type>& args, const WinogradWeightAttrs& attrs) {
  const TensorTypeNode& w = arg_tensor_of_rank(args, 0, "weight", 6, "OIHW{x}i{y}o");
  check_float_arg(w, "weight");
  if (w.shape[2] != 3 || w.shape[3] != 3)
    throw std::move(Error(cat("the weight ", shape_str(w.shape), " must have a 3x3 window"))
                        .expected("3x3", cat(w.shape[2], "x", w.shape[3])));
  const int64_t blocked_out = w.shape[0] < 0 ? kAnyDim : w.shape[0] * w.shape[5];
  if (attrs.out_channels <= 0 || (blocked_out >= 0 && attrs.out_channels > blocked_out))
    throw std::move(Error(cat("attribute 'out_channels' does not fit the weight ", shape_str(w.shape)))
                        .expected(cat("1 to ", blocked_out), cat(attrs.out_channels)));
  const int64_t in_channels = w.shape[1] < 0 ? kAnyDim : w.shape[1] * w.shape[4];
  return tensor_type({kWinogradPoints, panels_of(attrs.out_channels), in_channels, KILN_PANEL_NR}, w.dtype);
}

// data (N, C/x, H, W, x), weight (36, P, C, 32) -> (N, ceil(channels/out_block), OH, OW, out_block).
Type conv2d_winograd_relation(const std::vector<Type>& args, const Conv2DWinogradAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", 5, "NCHW{x}c");
  const TensorTypeNode& u = arg_tensor_of_rank(args, 1, "weight", 4, "(36, out panels, in channels, 32)");
  check_float_arg(data, "data");
  if (u.dtype != data.dtype)
    throw std::move(Error("dtypes of 'data' and 'weight' differ")
                        .expected(std::string(dtype_name(data.dtype)), std::string(dtype_name(u.dtype))));
  if (attrs.padding.size() != 4)
    throw std::move(Error("attribute 'padding' of nn.conv2d_winograd needs [top, left, bottom, right]")
                        .expected("4 values", cat(attrs.padding.size(), " values")));
  if (attrs.channels <= 0 || attrs.out_block <= 0 || attrs.channels % attrs.out_block != 0)
    throw std::move(Error("attribute 'channels' must be a positive multiple of 'out_block'")
                        .expected(cat("a multiple of ", attrs.out_block), cat(attrs.channels)));
  const Shape& x = data.shape;
  const int64_t in_channels = x[1] < 0 ? kAnyDim : x[1] * x[4];
  const Shape expected = {kWinogradPoints, panels_of(attrs.channels), in_channels, KILN_PANEL_NR};
  for (size_t d = 0; d < 4; ++d)
    if (u.shape[d] >= 0 && expected[d] >= 0 && u.shape[d] != expected[d])
      throw std::move(Error(cat("the weight does not fit data ", shape_str(x), " and channels=", attrs.channels))
                          .expected(shape_str(expected), shape_str(u.shape)));
  if (args.size() > 2) {
    const TensorTypeNode& bias = arg_tensor_of_rank(args, 2, "bias", 1, "(channels)");
    if (bias.dtype != data.dtype || (bias.shape[0] >= 0 && bias.shape[0] != attrs.channels))
      throw std::move(Error("argument 'bias' must hold one value of the data's dtype per output channel")
                          .expected(cat(dtype_name(data.dtype), " (", attrs.channels, ")"),
                                    cat(dtype_name(bias.dtype), " ", shape_str(bias.shape))));
  }
  const auto& p = attrs.padding;
  const int64_t out_h = window_extent("height", x, x[2], 3, 1, 1, p[0], p[2]);
  const int64_t out_w = window_extent("width", x, x[3], 3, 1, 1, p[1], p[3]);
  Type out = tensor_type({x[0], attrs.channels / attrs.out_block, out_h, out_w, attrs.out_block}, data.dtype);
  if (args.size() > 3) {
    const TensorTypeNode& residual = arg_tensor(args, 3, "residual");
    const TensorTypeNode& want = *as_tensor(out);
    if (residual.dtype != want.dtype || residual.shape != want.shape)
      throw std::move(Error("argument 'residual' must have the output's type")
                          .expected(cat(dtype_name(want.dtype), " ", shape_str(want.shape)),
                                    cat(dtype_name(residual.dtype), " ", shape_str(residual.shape))));
  }
  return out;
}

std::vector<int64_t> out_shape_of(const ComputeInput& call) { return expect_tensor(call.out_type, "output").shape; }

std::vector<te::Tensor> conv2d_winograd_compute(const ComputeInput& call, const Conv2DWinogradAttrs&) {
  std::vector<te::Tensor> operands;
  for (size_t i = 0; i < call.args.size(); ++i) operands.push_back(nn::operand_in_memory(call, i));
  return {nn::stand_in(out_shape_of(call), operands, call.name, !nn::all_placeholders(operands))};
}

// Tiles per task: as many as keep a task's V and M (36 rows of in + out channels per tile) in
// half of L2, 8 to 64 of them, and at least two tasks when there are tiles for two.
int64_t tiles_per_task(int64_t tiles, int64_t channels, int64_t out_panels, const Target& target) {
  const int64_t row_bytes = kWinogradPoints * (channels + out_panels * KILN_PANEL_NR) * int64_t{sizeof(float)};
  int64_t block = std::clamp<int64_t>(target.l2_bytes / 2 / row_bytes, 8, 64);
  if (tiles >= 16) block = std::min(block, (tiles + 1) / 2);
  return std::max<int64_t>(1, std::min(block, tiles));
}

// k-blocks of the panel GEMM: a block of one panel (kc x 32 floats) in half of L1.
int64_t panel_k_block(int64_t channels, const Target& target) {
  const int64_t kc = std::max<int64_t>(16, target.l1_bytes / 2 / (KILN_PANEL_NR * int64_t{sizeof(float)}) / 16 * 16);
  return std::min(kc, channels);
}

te::TensorIntrin winograd_intrin(const ComputeInput& call, const Conv2DWinogradAttrs& attrs, const Target& target) {
  const Shape x = call.args.at(0).shape(), out = out_shape_of(call);
  const int64_t tiles = x[0] * ((out[2] + 3) / 4) * ((out[3] + 3) / 4);
  const int64_t block = tiles_per_task(tiles, x[1] * x[4], call.args.at(1).shape()[1], target);
  const int64_t kc = panel_k_block(x[1] * x[4], target);
  const int64_t pad_top = attrs.padding[0], pad_left = attrs.padding[1];
  const double lo = attrs.clamp_min, hi = attrs.clamp_max;
  auto emit = [x, out, pad_top, pad_left, block, kc, lo, hi](const std::vector<te::BufferSlice>& in,
                                                             const te::BufferSlice& o) -> tir::Stmt {
    std::vector<PrimExpr> args;
    for (int64_t v : {x[0], x[1], x[2], x[3], x[4], out[1], out[2], out[3], out[4], pad_top, pad_left, block, kc})
      args.push_back(PrimExpr(v));
    args.push_back(in.at(0).pointer());
    args.push_back(in.at(1).pointer());
    for (size_t i = 2; i < 4; ++i)  // bias, residual; 0 is a null pointer
      args.push_back(i < in.size() ? in[i].pointer() : PrimExpr(int64_t{0}));
    args.push_back(tir::make_const(DType::kFloat32, lo));
    args.push_back(tir::make_const(DType::kFloat32, hi));
    args.push_back(o.pointer());
    return tir::Evaluate{tir::extern_call("kiln_conv2d_winograd_f32", std::move(args))};
  };
  return te::TensorIntrin{"kiln_conv2d_winograd_f32", nn::stand_in_description(call, out, "winograd"), emit};
}

// The whole convolution is one call; the group's element-wise tail runs over its output.
void conv2d_winograd_schedule(const ScheduleInput& in, const Conv2DWinogradAttrs& attrs) {
  const te::Tensor& out = in.anchor.at(0);
  te::Stage& stage = in.schedule[out];
  stage.tensorize(stage.axis(0), winograd_intrin(in.call, attrs, in.target));
  nn::schedule_around_stand_in(in, out);
}

// The kernel is float32 only, on static non-empty shapes.
std::string float32_static(const std::vector<Type>& arg_types, const Type& out_type, const Attrs&) {
  if (std::string reason = nn::float32_static_reason(arg_types, out_type, "Winograd"); !reason.empty()) return reason;
  const TensorTypeNode* data = as_tensor(arg_types.at(0));
  const TensorTypeNode* out = as_tensor(out_type);
  if (data->shape[4] > KILN_WINO_MAX_LANES || out->shape[4] > KILN_WINO_MAX_LANES)
    return "the Winograd kernel takes channel blocks of at most 64";
  return "";
}

// The direct convolution's 2 * N * K * C * 9 * OH * OW, so that kiln bench --profile reports the
// effective GFLOP/s (Winograd itself multiplies 2.25 times per output, not 9).
double effective_flops(const std::vector<Type>& args, const Type& out_type, const Conv2DWinogradAttrs&) {
  const TensorTypeNode* data = as_tensor(args.at(0));
  const TensorTypeNode* out = as_tensor(out_type);
  if (!data || !out || !data->is_static() || !out->is_static()) return 0;
  const double channels = static_cast<double>(data->shape[1] * data->shape[4]);
  double outputs = 1;
  for (int64_t d : out->shape) outputs *= static_cast<double>(d);
  return 2.0 * outputs * channels * 9;
}

}  // namespace

void register_nn_winograd_ops(OpRegistry& registry) {
  registry.add("nn.winograd_weight_transform")
      .describe(
          "The weight of a 3x3 blocked nn.conv2d, OIHW{x}i{y}o, as Winograd F(4x4, 3x3)'s U = G g G^T per channel "
          "pair, laid out as (36, ceil(O/32), I, 32) for the panel GEMM (output channels past O are zero). Evaluated "
          "at build time on constant weights.")
      .arg("weight")
      .attrs<WinogradWeightAttrs>()
      .set_relation<WinogradWeightAttrs>(weight_transform_relation)
      .set_pattern(OpPattern::kOpaque);
  OpDef& conv = registry.add("nn.conv2d_winograd")
                    .describe(
                        "A 3x3, stride-1, dilation-1 convolution of blocked data NCHW{x}c with a weight from "
                        "nn.winograd_weight_transform, by Winograd's F(4x4, 3x3), into NCHW{out_block}c, plus an "
                        "optional bias per output channel and an optional residual of the output's type, clamped to "
                        "[clamp_min, clamp_max].")
                    .arg("data")
                    .arg("weight")
                    .arg("bias", /*optional=*/true)
                    .arg("residual", /*optional=*/true)
                    .attrs<Conv2DWinogradAttrs>()
                    .set_relation<Conv2DWinogradAttrs>(conv2d_winograd_relation)
                    .set_pattern(OpPattern::kOutEWiseFusable);
  conv.set_flops<Conv2DWinogradAttrs>(effective_flops);
  set_compute<Conv2DWinogradAttrs>(conv, conv2d_winograd_compute, float32_static);
  set_schedule<Conv2DWinogradAttrs>(conv, conv2d_winograd_schedule);
}

}  // namespace kiln
