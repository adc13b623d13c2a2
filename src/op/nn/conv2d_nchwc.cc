// nn.conv2d in blocked layouts (TVM's NCHWc, chosen by AlterOpLayout): data NCHW{x}c
// (N, C/x, H, W, x), weight OIHW{x}i{y}o (O/y, (C/G)/x, KH, KW, x, y), output NCHW{y}c. Every output
// element is a reduction over input channel blocks, taps and the channels of a block (for a
// depthwise convolution, weight OIHW1i{x}o, over the taps alone). With G > 1 groups that split
// whole blocks (C/G a multiple of x, O/G of y) output block ob belongs to group
// g = ob / ((O/G)/y) and reduces over that group's input blocks g * ((C/G)/x) + ico only; the
// schedule keeps a tile of output positions x one channel block of accumulators in registers
// and runs the innermost loop over the output channel block, y contiguous floats of weight and
// output, so the C compiler turns it into one vector multiply and add per position. A float32
// convolution whose output blocks are one vector of the target (16 channels with AVX-512, 8 with
// AVX2) instead runs the hand-written tile kiln_conv_nchwc_f32
// over several output channel blocks at once (of one group, whose input blocks they all read),
// each input broadcast feeding one multiply-add per block.
#include <algorithm>
#include <cmath>

#include "kiln/attrs/layout.h"
#include "kiln/runtime/microkernels.h"
#include "op/nn/conv2d_compute.h"
#include "op/nn/nn_compute.h"
#include "op/nn/window_attrs.h"

namespace kiln::nn {

namespace {

using tir::PrimExpr;

void check_block(int64_t extent, int64_t block, const std::string& arg_name, const Shape& shape,
                 const std::string& layout) {
  if (extent >= 0 && extent != block)
    throw std::move(
        Error(cat("the innermost axis of '", arg_name, "' ", shape_str(shape), " must be the block of ", layout))
            .expected(cat(block), cat(extent)));
}

// A grouped blocked convolution's groups must split whole channel blocks of the data (C/G a
// multiple of x) and of the output (O/G of y): each output block then reads the input blocks of
// one group, weight axis 1 holding that group's C/G/x of them (as OIHW's I axis holds C/G).
void check_groups_of_blocks(int64_t blocks, int64_t groups, const std::string& what, const std::string& arg_name,
                            const Shape& shape) {
  if (blocks >= 0 && blocks % groups != 0)
    throw std::move(Error(cat(what, " of '", arg_name, "' ", shape_str(shape), " do not divide into groups=", groups,
                              ": a blocked convolution's groups must be whole channel blocks"))
                        .expected(cat("a multiple of ", groups), cat(blocks)));
}

void check_block_groups(const Shape& x, const Shape& w, const Conv2DAttrs& attrs) {
  if (attrs.groups == 1) {
    check_same_extent(x[1], w[1], "input channel blocks (weight axis 1)", "data", x, "weight", w);
    return;
  }
  check_groups_of_blocks(x[1], attrs.groups, "input channel blocks (axis 1)", "data", x);
  check_groups_of_blocks(w[0], attrs.groups, "output channel blocks (axis 0)", "weight", w);
  const int64_t group_blocks = x[1] < 0 ? kAnyDim : x[1] / attrs.groups;
  check_same_extent(group_blocks, w[1],
                    cat("input channel blocks per group (data axis 1 / groups=", attrs.groups, "; weight axis 1)"),
                    "data", x, "weight", w);
}

struct BlockedShape {
  int64_t n, cb, h, w, ob, kh, kw, oh, ow, x, y;
  // Groups of whole blocks (1 for depthwise, whose path indexes its blocks directly), and each
  // group's input and output channel blocks.
  int64_t groups, group_in_blocks, group_out_blocks;
  Pair2D strides, dilation;
  Padding2D pad;
  DType dtype, acc, out_dtype;
};

BlockedShape blocked_shape(const ComputeInput& call, const Conv2DAttrs& attrs, const ConvLayoutChoice& blocks) {
  const TensorTypeNode& data = expect_tensor(call.arg_types.at(0), "data");
  const TensorTypeNode& weight = expect_tensor(call.arg_types.at(1), "weight");
  const TensorTypeNode& out = expect_tensor(call.out_type, "output");
  BlockedShape s{};
  s.n = data.shape[0];
  s.cb = data.shape[1];
  s.h = data.shape[2];
  s.w = data.shape[3];
  s.ob = out.shape[1];
  s.kh = weight.shape[2];
  s.kw = weight.shape[3];
  s.oh = out.shape[2];
  s.ow = out.shape[3];
  s.x = blocks.in_block;
  s.y = blocks.out_block;
  s.groups = blocks.depthwise ? 1 : attrs.groups;
  s.group_in_blocks = blocks.depthwise ? 1 : weight.shape[1];
  s.group_out_blocks = s.ob / s.groups;
  const Window2D window = attrs.window();
  s.strides = window.strides;
  s.dilation = window.dilation;
  s.pad = window.padding;
  s.dtype = data.dtype;
  s.acc = accumulate_dtype(data.dtype);
  s.out_dtype = out.dtype;
  return s;
}

bool padded(const BlockedShape& s) { return s.pad.top || s.pad.left || s.pad.bottom || s.pad.right; }

// The data block that output block `ob` reads at step `ico` of its reduction over input blocks:
// ico itself without groups, else the first block of ob's group plus ico. The compute and the
// tile intrinsic's description share it, so that tensorize matches the grouped index.
PrimExpr input_block(const BlockedShape& s, const PrimExpr& ob, const PrimExpr& ico) {
  if (s.groups == 1) return ico;
  const PrimExpr group = s.group_out_blocks == 1 ? ob : tir::floordiv(ob, s.group_out_blocks);
  return group * s.group_in_blocks + ico;
}

std::string padded_name(const std::string& base) { return base + "_data"; }
std::string sum_name(const std::string& base) { return base + "_acc"; }
std::string wide_name(const std::string& base) { return base + "_wide"; }

// Output positions per register tile: a divisor of the output width up to `limit`.
int64_t positions_per_tile(int64_t ow, int64_t limit) {
  for (int64_t r = std::min(ow, limit); r > 1; --r)
    if (ow % r == 0) return r;
  return 1;
}

// The register tile along the output width, and the width the convolution computes: the
// output width, or that rounded up to a whole number of tiles when the width has no divisor
// that fills the registers (Inception's 17, 73, 149: one position per tile ran at 30% of peak).
// The extra columns read zeros of a wider padded copy and are dropped by the output stage.
struct WidthTiling {
  int64_t positions;
  int64_t width;
};

// 16-wide output blocks (AVX-512's vector; other instruction sets run the tile's loops) and blocks
// of the target's vector width (AVX2's 8).
bool block_tiles_apply(const BlockedShape& s, const ConvLayoutChoice& blocks, const Target& target) {
  return !blocks.depthwise && (s.y == 16 || s.y == target.vector_lanes) && s.dtype == DType::kFloat32 &&
         s.out_dtype == DType::kFloat32;
}

// Up to 14 positions where kiln_conv_nchwc_f32 runs with AVX-512 (as many as its registers hold
// beside the weights and a broadcast), up to kConv8TilePositions with AVX2; the generated tile 14
// with 16-wide blocks (AVX-512's 32 registers: measured 10% faster than 8 on ResNet-18), 8 with
// narrower ones.
WidthTiling width_tiling(const BlockedShape& s, const ConvLayoutChoice& blocks, const Target& target) {
  const bool tiles = block_tiles_apply(s, blocks, target);
  const int64_t limit = tiles && s.y < 16 ? kConv8TilePositions : tiles || s.y >= 16 ? KILN_CONV_TILE_MAX_ROWS : 8;
  const int64_t exact = positions_per_tile(s.ow, limit);
  if (blocks.depthwise || s.acc != s.out_dtype || s.ow <= limit || 2 * exact > limit) return {exact, s.ow};
  WidthTiling best{exact, s.ow};
  int64_t best_width = 0;
  for (int64_t r = limit; 2 * r > limit; --r) {
    const int64_t width = (s.ow + r - 1) / r * r;
    if (!best_width || width < best_width) best = {r, best_width = width};
  }
  return best;
}

// A strided depthwise convolution over planes larger than the L2 cache share of one block pads
// the kh rows each output row reads right before computing that row (in L1) instead of copying
// the whole padded data out to memory and reading it back: it is bound by memory traffic, and
// the whole copy of a plane 4x its output's doubled it (MobileNetV2's 112x112 -> 56x56: 8 -> 16
// GFLOP/s). With stride 1 each row would be padded kh times over: measured slower.
bool depthwise_pads_per_row(const BlockedShape& s, const ConvLayoutChoice& blocks) {
  constexpr int64_t kPlaneBytes = 128 * 1024;
  const int64_t plane = (s.h + s.pad.top + s.pad.bottom) * (s.w + s.pad.left + s.pad.right) * s.x * 4;
  return blocks.depthwise && s.strides.h > 1 && plane > kPlaneBytes;
}

// A float32 depthwise convolution runs kiln_dwconv_row_f32 (kiln/runtime/microkernels.h) per
// output row of a channel block: taps clamped to the data instead of a padded copy, a register
// tile of positions x one full vector of channels. Other dtypes, and operands computed by an op
// fused before the call (the kernel reads them from memory), keep the generic blocked path.
bool depthwise_rows(const ComputeInput& call, const BlockedShape& s, const ConvLayoutChoice& blocks) {
  return blocks.depthwise && s.dtype == DType::kFloat32 && s.acc == s.dtype && s.out_dtype == s.dtype && s.x == s.y &&
         call.args.at(0).op()->is_placeholder && call.args.at(1).op()->is_placeholder;
}

// Output (i[2], i[3]) at tap (r, q) reads data row i[2]*sh + r*dh - top, column i[3]*sw + q*dw -
// left, zero outside the data. `tile_relative` gives the load without the padding offsets (the
// intrinsic's description, whose indices count from the tile's first tap, at (-top, -left)).
PrimExpr depthwise_term(const BlockedShape& s, const te::Tensor& data, const te::Tensor& weight, const te::Indices& i,
                        const te::IterVar& r, const te::IterVar& q, bool tile_relative) {
  const PrimExpr row = i[2] * s.strides.h + PrimExpr(r) * s.dilation.h;
  const PrimExpr col = i[3] * s.strides.w + PrimExpr(q) * s.dilation.w;
  const PrimExpr y = row - s.pad.top, x = col - s.pad.left;
  PrimExpr value = tile_relative ? data(i[0], i[1], row, col, i[4]) : data(i[0], i[1], y, x, i[4]);
  if (padded(s)) {
    PrimExpr inside = tir::logical_and(tir::logical_and(tir::ge(y, 0), tir::lt(y, s.h)),
                                       tir::logical_and(tir::ge(x, 0), tir::lt(x, s.w)));
    value = tir::select(inside, value, tir::make_const(s.dtype, 0));
  }
  return value * weight(i[1], 0, r, q, 0, i[4]);
}

te::Tensor depthwise_rows_compute(const BlockedShape& s, const te::Tensor& data, const te::Tensor& weight,
                                  const std::vector<int64_t>& shape, const std::string& name, bool tile_relative) {
  te::IterVar r = te::reduce_axis(s.kh, "ry"), q = te::reduce_axis(s.kw, "rx");
  return te::compute(shape, name, [&](const te::Indices& i) {
    return te::sum(depthwise_term(s, data, weight, i, r, q, tile_relative), {r, q});
  });
}

// The arguments a register epilogue adds to a call: its activation (the hard swish, or a clamp
// unless both bounds are infinite) and the activation's two parameters.
std::vector<PrimExpr> epilogue_activation(const tir::RegisterEpilogue& e) {
  const auto f32 = [](double v) { return tir::make_const(DType::kFloat32, v); };
  if (e.hard_swish)
    return {PrimExpr(int64_t{KILN_ACT_HARD_SWISH}), f32(e.hard_swish->slope), f32(e.hard_swish->offset)};
  const bool clamps = !std::isinf(e.lo) || !std::isinf(e.hi);
  return {PrimExpr(int64_t{clamps ? KILN_ACT_CLAMP : KILN_ACT_NONE}), f32(e.lo), f32(e.hi)};
}

// kiln_dwconv_row_f32's arguments: the row's pointer is the last, lanes and ow the first two.
constexpr size_t kDepthwiseRowOutArg = 14;

tir::TileEpilogueCall depthwise_row_epilogue() {
  auto tile = [](const std::vector<PrimExpr>& args) -> std::optional<tir::TileShape> {
    if (!args.at(0).is_int_imm() || !args.at(1).is_int_imm()) return std::nullopt;
    return tir::TileShape{kDepthwiseRowOutArg, 1, args[1]->int_value, args[0]->int_value, 0};
  };
  auto with_epilogue = [](const std::vector<PrimExpr>& args, const tir::RegisterEpilogue& e) {
    std::vector<PrimExpr> a(args.begin(), args.begin() + kDepthwiseRowOutArg);
    a.push_back(e.out);
    a.push_back(e.bias);
    for (PrimExpr& x : epilogue_activation(e)) a.push_back(std::move(x));
    return tir::extern_call("kiln_dwconv_row_ep_f32", std::move(a));
  };
  return tir::TileEpilogueCall{"kiln_dwconv_row_f32", tile, with_epilogue, false};
}

// One output row of one channel block: the kernel reads the block's whole plane, from the row
// of the tile's first tap (the data slice's origin, which may lie above the plane).
te::TensorIntrin depthwise_row_intrin(const BlockedShape& s, const te::Tensor& data, const te::Tensor& weight) {
  te::Tensor data_tile = te::placeholder(data.shape(), s.dtype, "data_tile");
  te::Tensor weight_tile = te::placeholder(weight.shape(), s.dtype, "weight_tile");
  te::Tensor desc = depthwise_rows_compute(s, data_tile, weight_tile, {1, 1, 1, s.ow, s.y}, "row_tile", true);
  auto emit = [s](const std::vector<te::BufferSlice>& in, const te::BufferSlice& out) -> tir::Stmt {
    const te::BufferSlice& d = in.at(0);
    const te::BufferSlice& w = in.at(1);
    check_invariant(d.stride(3) == s.x && d.stride(4) == 1 && w.stride(3) == s.y && out.stride(3) == s.y,
                    "depthwise row kernel: the data, weight and output rows must be contiguous");
    const PrimExpr zero(int64_t{0});
    const PrimExpr plane = tir::address_of(d.buffer, {d.origin.at(0), d.origin.at(1), zero, zero, zero});
    return tir::Evaluate{tir::extern_call(
        "kiln_dwconv_row_f32", {PrimExpr(s.x), PrimExpr(s.ow), PrimExpr(s.kh), PrimExpr(s.kw), PrimExpr(s.strides.w),
                                PrimExpr(s.dilation.h), PrimExpr(s.dilation.w), plane, PrimExpr(s.h), PrimExpr(s.w),
                                PrimExpr(d.stride(2)), d.origin.at(2), d.origin.at(3), w.pointer(), out.pointer()})};
  };
  return te::TensorIntrin{cat("depthwise_row_", s.kh, "x", s.kw), desc, emit, depthwise_row_epilogue()};
}

// Rows (n, channel block, output row) in parallel; the element-wise tail, when there is one,
// reads each row from a local buffer the kernel fills.
void depthwise_rows_schedule(const ScheduleInput& in, const BlockedShape& s) {
  const te::Tensor& out = in.anchor.at(0);
  te::Tensor final_out = single_output_like(in, out);
  te::Tensor tile_out = final_out.defined() ? final_out : out;
  for (const te::Tensor& o : in.outputs)
    if (!o.same_as(tile_out) && !o.same_as(out)) schedule_injective_stage(in.schedule[o], in.target);
  te::Stage& t = in.schedule[tile_out];
  t.vectorize(t.axis(4));
  te::IterVar rows = fuse_all(t, {t.axis(0), t.axis(1), t.axis(2)});
  if (s.n * s.ob * s.y * s.oh * s.ow * s.kh * s.kw * kDepthwiseCostPerMac >= kMinParallelWork) t.parallel(rows);
  te::Stage& conv = in.schedule[out];
  if (!tile_out.same_as(out)) conv.compute_at(t, rows);
  const te::Operation& op = out.op();
  conv.tensorize(conv.axis(3), depthwise_row_intrin(s, op->inputs.at(0), op->inputs.at(1)));
}

// A tile of kiln_conv_nchwc_f32 (conv_register_tile); blocks == 0: not a convolution the tile
// computes. Its output blocks are of one group: the blocks of one call read the same input blocks.
using BlockTile = ConvRegisterTile;

BlockTile block_tile(const BlockedShape& s, const ConvLayoutChoice& blocks, int64_t width, const Target& target) {
  if (!block_tiles_apply(s, blocks, target)) return {};
  return conv_register_tile(width, s.group_out_blocks, s.y);
}

// kiln_conv_nchwc_f32's arguments: rows and blocks first, the tile's pointer and block stride last.
constexpr size_t kConvTileOutArg = 17;
constexpr size_t kConvTileLanesArg = 5;

tir::TileEpilogueCall conv_tile_epilogue() {
  auto tile = [](const std::vector<PrimExpr>& args) -> std::optional<tir::TileShape> {
    const PrimExpr& rows = args.at(0);
    const PrimExpr& blocks = args.at(1);
    const PrimExpr& lanes = args.at(kConvTileLanesArg);
    const PrimExpr& block_stride = args.at(kConvTileOutArg + 1);
    if (!rows.is_int_imm() || !blocks.is_int_imm() || !lanes.is_int_imm() || !block_stride.is_int_imm())
      return std::nullopt;
    return tir::TileShape{kConvTileOutArg, blocks->int_value, rows->int_value, lanes->int_value,
                          block_stride->int_value};
  };
  auto with_epilogue = [](const std::vector<PrimExpr>& args, const tir::RegisterEpilogue& e) {
    std::vector<PrimExpr> a(args.begin(), args.begin() + kConvTileOutArg);
    a.push_back(e.out);
    a.push_back(e.out_block_stride);
    a.push_back(e.bias);
    a.push_back(e.residual.defined() ? e.residual : PrimExpr(int64_t{0}));
    for (PrimExpr& x : epilogue_activation(e)) a.push_back(std::move(x));
    a.push_back(PrimExpr(int64_t{0}));  // no twin store
    return tir::extern_call("kiln_conv_nchwc_ep_f32", std::move(a));
  };
  return tir::TileEpilogueCall{"kiln_conv_nchwc_f32", tile, with_epilogue, true};
}

// The accumulation of one tile as a call of kiln_conv_nchwc_f32; `desc` repeats the
// compute's sum for one tile (positions, blocks) so tensorize can match it. In a grouped
// convolution the data slice's origin is the tile's group's first input block (the load at the
// tile's first output block and ico = 0), and the call sums that group's blocks only.
te::TensorIntrin block_tile_intrin(const BlockedShape& s, const BlockTile& tile, const te::Tensor& src,
                                   const te::Tensor& weight) {
  te::Tensor src_tile = te::placeholder(src.shape(), s.dtype, "D_tile");
  te::Tensor weight_tile = te::placeholder(weight.shape(), s.dtype, "W_tile");
  te::IterVar ico = te::reduce_axis(s.group_in_blocks, "ico"), r = te::reduce_axis(s.kh, "ry"),
              q = te::reduce_axis(s.kw, "rx"), ici = te::reduce_axis(s.x, "ici");
  te::Tensor desc = te::compute({1, tile.blocks, 1, tile.positions, s.y}, "C_tile", [&](const te::Indices& i) {
    PrimExpr y = i[2] * s.strides.h + PrimExpr(r) * s.dilation.h, x = i[3] * s.strides.w + PrimExpr(q) * s.dilation.w;
    return te::sum(src_tile(i[0], input_block(s, i[1], ico), y, x, ici) * weight_tile(i[1], ico, r, q, ici, i[4]),
                   {ico, r, q, ici});
  });
  // The description matches a tile that straddles two groups too, but the call would read the
  // first group's blocks for all of them.
  check_invariant(s.group_out_blocks % tile.blocks == 0, "kiln_conv_nchwc_f32: a tile's output blocks span two groups");
  auto emit = [tile, s](const std::vector<te::BufferSlice>& in, const te::BufferSlice& out) -> tir::Stmt {
    const te::BufferSlice& data = in.at(0);
    const te::BufferSlice& w = in.at(1);
    // The kernel's contract: one channel block per position, y output channels per weight row.
    check_invariant(data.stride(3) == s.x && w.stride(4) == s.y && out.stride(3) == s.y,
                    "kiln_conv_nchwc_f32: the tile's buffers are not packed by positions of their channel blocks");
    const std::vector<PrimExpr> args = {tile.positions,
                                        tile.blocks,
                                        s.strides.w,
                                        s.group_in_blocks,
                                        s.x,
                                        s.y,
                                        s.kh,
                                        s.kw,
                                        data.pointer(),
                                        data.stride(1),
                                        s.dilation.h * data.stride(2),
                                        s.dilation.w * data.stride(3),
                                        w.pointer(),
                                        w.stride(1),
                                        w.stride(0),
                                        w.stride(2),
                                        w.stride(3),
                                        out.pointer(),
                                        out.stride(1)};
    return tir::Evaluate{tir::extern_call("kiln_conv_nchwc_f32", args)};
  };
  return te::TensorIntrin{cat("conv_tile_", s.kh, "x", s.kw, "_", tile.positions, "x", tile.blocks), desc, emit,
                          conv_tile_epilogue()};
}

// Tiles of `tile.positions` x `tile.blocks` of the written stage, tasks over (n, block group,
// output row), each tile's accumulators computed by one call before the stage's element-wise
// tail reads them.
void schedule_block_tiles(const ScheduleInput& in, const BlockedShape& s, const BlockTile& tile,
                          const te::Tensor& tile_out, const te::Tensor& acc, const te::Tensor& src, int64_t work) {
  te::Stage& t = in.schedule[tile_out];
  auto [bo, bi] = t.split(t.axis(1), tile.blocks);
  auto [wo, wi] = t.split(t.axis(3), tile.positions);
  t.reorder({t.axis(0), bo, t.axis(2), wo, bi, wi, t.axis(4)});
  t.vectorize(t.axis(4));
  te::IterVar rows = fuse_all(t, {t.axis(0), bo, t.axis(2)});
  if (work >= kMinParallelWork) t.parallel(rows);

  te::Stage& a = in.schedule[acc];
  a.compute_at(t, wo);
  std::vector<te::IterVar> order = a.op()->axis;
  order.insert(order.end(), a.op()->reduce_axis.begin(), a.op()->reduce_axis.end());
  a.reorder(order);
  a.tensorize(order.front(), block_tile_intrin(s, tile, src, in.call.args.at(1)));
}

}  // namespace

// The tile whose accumulators fit the vector registers and read the least per multiply-add.
// AVX-512 (16 lanes): 28 of the 32 registers, the multiply-adds broadcasting the inputs from
// memory; each step loads positions + blocks vectors for positions x blocks multiply-adds, the
// fewest per multiply-add wins, the larger tile on a tie (measured cache-resident: 7x4, 8x3, 7x3
// at 92-95% of peak, 14x2 at 88-91%, 14x1 at 78-86%). AVX2 (8 lanes): the kernel walks the tile
// in register sub-tiles of up to 12 accumulators over chunks of input blocks whose weights stay in
// L1, so the tile is as wide as the kernel's positions allow and has as many blocks (up to 4) as
// divide the group: the chunk's weights then serve more positions and the input fewer block groups
// (ResNet-50 on Zen 3: the 14 x 1 tile that kept all its accumulators in registers ran its 1x1
// layers at 45-70% of peak).
ConvRegisterTile conv_register_tile(int64_t width, int64_t group_blocks, int64_t lanes) {
  ConvRegisterTile best;
  if (lanes < 16) {
    for (int64_t b = KILN_CONV_TILE_MAX_BLOCKS; b >= 1 && !best.blocks; --b)
      if (group_blocks % b == 0) best.blocks = b;
    best.positions = positions_per_tile(width, kConv8TilePositions);
    return best;
  }
  auto loads_per_fma = [](int64_t r, int64_t b) { return static_cast<double>(r + b) / static_cast<double>(r * b); };
  auto better = [&](int64_t r, int64_t b) {
    if (!best.blocks) return true;
    const double loads = loads_per_fma(r, b), best_loads = loads_per_fma(best.positions, best.blocks);
    return loads < best_loads || (loads == best_loads && r * b > best.positions * best.blocks);
  };
  for (int64_t b = 1; b <= KILN_CONV_TILE_MAX_BLOCKS; ++b) {
    if (group_blocks % b) continue;
    for (int64_t r = std::min<int64_t>(width, KILN_CONV_TILE_MAX_ROWS); r >= 1; --r) {
      if (width % r || r * b > 28) continue;
      if (better(r, b)) best = {r, b};
      break;
    }
  }
  return best;
}

Type blocked_conv2d_relation(const std::vector<Type>& args, const Conv2DAttrs& attrs, const ConvLayoutChoice& blocks) {
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", 5, attrs.data_layout);
  const TensorTypeNode& weight = arg_tensor_of_rank(args, 1, "weight", 6, attrs.kernel_layout);
  check_numeric_arg(data, "data");
  if (weight.dtype != data.dtype)
    throw std::move(Error(cat("dtypes of 'data' ", type_str(args[0]), " and 'weight' ", type_str(args[1]), " differ"))
                        .expected(std::string(dtype_name(data.dtype)), std::string(dtype_name(weight.dtype))));
  const Shape& x = data.shape;
  const Shape& w = weight.shape;
  check_block(x[4], blocks.in_block, "data", x, attrs.data_layout);
  check_block(w[4], blocks.depthwise ? 1 : blocks.in_block, "weight", w, attrs.kernel_layout);
  check_block(w[5], blocks.out_block, "weight", w, attrs.kernel_layout);
  const int64_t out_channels = w[0] < 0 ? kAnyDim : w[0] * blocks.out_block;
  if (blocks.depthwise) {
    // One input channel per group and one output channel per input channel.
    const int64_t channels = x[1] < 0 ? kAnyDim : x[1] * blocks.in_block;
    if (channels >= 0 && attrs.groups != channels)
      throw std::move(Error(cat("a depthwise blocked convolution of 'data' ", shape_str(x), " needs groups=", channels))
                          .expected(cat("groups=", channels), cat("groups=", attrs.groups)));
    check_same_extent(channels, out_channels, "channels (weight axis 0 times its block)", "data", x, "weight", w);
    check_block(w[1], 1, "weight", w, attrs.kernel_layout);
  } else {
    check_block_groups(x, w, attrs);
  }
  if (attrs.channels && out_channels >= 0 && *attrs.channels != out_channels)
    throw std::move(Error(cat("attribute 'channels' disagrees with 'weight' ", shape_str(w)))
                        .expected(cat(out_channels), cat(*attrs.channels)));
  const Window2D win = attrs.window();
  const int64_t out_h =
      window_extent("height", x, x[2], w[2], win.strides.h, win.dilation.h, win.padding.top, win.padding.bottom);
  const int64_t out_w =
      window_extent("width", x, x[3], w[3], win.strides.w, win.dilation.w, win.padding.left, win.padding.right);
  return tensor_type({x[0], w[0], out_h, out_w, blocks.out_block}, out_dtype_of(attrs.out_dtype, data.dtype));
}

te::Tensor blocked_conv2d_compute(const ComputeInput& call, const Conv2DAttrs& attrs, const ConvLayoutChoice& blocks) {
  const BlockedShape s = blocked_shape(call, attrs, blocks);
  const te::Tensor& data = call.args.at(0);
  const te::Tensor& weight = call.args.at(1);
  if (depthwise_rows(call, s, blocks))
    return depthwise_rows_compute(s, data, weight, {s.n, s.ob, s.oh, s.ow, s.y}, call.name, false);
  const int64_t width = width_tiling(s, blocks, call.target).width;
  te::Tensor src = data;
  if (padded(s) || width > s.ow) {
    const int64_t hp = s.h + s.pad.top + s.pad.bottom;
    const int64_t wp =
        std::max(s.w + s.pad.left + s.pad.right, (width - 1) * s.strides.w + (s.kw - 1) * s.dilation.w + 1);
    src = te::compute({s.n, s.cb, hp, wp, s.x}, padded_name(call.name), [&](const te::Indices& i) {
      PrimExpr y = i[2] - s.pad.top, z = i[3] - s.pad.left;
      PrimExpr inside = tir::logical_and(tir::logical_and(tir::ge(y, 0), tir::lt(y, s.h)),
                                         tir::logical_and(tir::ge(z, 0), tir::lt(z, s.w)));
      return tir::select(inside, data(i[0], i[1], y, z, i[4]), tir::make_const(s.dtype, 0));
    });
  }
  te::IterVar r = te::reduce_axis(s.kh, "ry"), q = te::reduce_axis(s.kw, "rx");
  const bool cast_out = s.acc != s.out_dtype;
  const std::vector<int64_t> shape = {s.n, s.ob, s.oh, width, s.y};
  auto multiply = [&](const PrimExpr& v, const PrimExpr& k) {
    return s.acc == s.dtype ? v * k : tir::cast(s.acc, v) * tir::cast(s.acc, k);
  };
  auto row = [&](const te::Indices& i) { return i[2] * s.strides.h + PrimExpr(r) * s.dilation.h; };
  auto col = [&](const te::Indices& i) { return i[3] * s.strides.w + PrimExpr(q) * s.dilation.w; };
  te::Tensor sum;
  const std::string sum_tensor = width > s.ow ? wide_name(call.name) : cast_out ? sum_name(call.name) : call.name;
  if (blocks.depthwise) {
    // Output channel c of block b reads only input channel c of block b.
    sum = te::compute(shape, sum_tensor, [&](const te::Indices& i) {
      return te::sum(multiply(src(i[0], i[1], row(i), col(i), i[4]), weight(i[1], 0, r, q, 0, i[4])), {r, q});
    });
  } else {
    te::IterVar ico = te::reduce_axis(s.group_in_blocks, "ico"), ici = te::reduce_axis(s.x, "ici");
    sum = te::compute(shape, sum_tensor, [&](const te::Indices& i) {
      return te::sum(
          multiply(src(i[0], input_block(s, i[1], ico), row(i), col(i), ici), weight(i[1], ico, r, q, ici, i[4])),
          {ico, r, q, ici});
    });
  }
  if (width > s.ow)
    return te::compute({s.n, s.ob, s.oh, s.ow, s.y}, call.name,
                       [&](const te::Indices& i) { return sum(i[0], i[1], i[2], i[3], i[4]); });
  if (!cast_out) return sum;
  return te::compute(shape, call.name, [&](const te::Indices& i) {
    return to_out_dtype(sum(i[0], i[1], i[2], i[3], i[4]), s.out_dtype);
  });
}

void blocked_conv2d_schedule(const ScheduleInput& in, const Conv2DAttrs& attrs, const ConvLayoutChoice& blocks) {
  const BlockedShape s = blocked_shape(in.call, attrs, blocks);
  if (depthwise_rows(in.call, s, blocks)) {
    depthwise_rows_schedule(in, s);
    return;
  }
  const te::Tensor& out = in.anchor.at(0);
  const te::Tensor wide = find_tensor(out, wide_name(in.call.name));
  const te::Tensor& conv = wide.defined() ? wide : out;
  if (s.acc != s.out_dtype || !conv.op()->reduce) {
    schedule_reduce(in);
    return;
  }
  te::Tensor src = find_tensor(out, padded_name(in.call.name));
  const bool pad_per_row = src.defined() && depthwise_pads_per_row(s, blocks);
  if (src.defined() && !pad_per_row) {
    // Rows of the padded copy in parallel, the channel block vectorised: no index division. A
    // copy left on one thread would also read the half of its input the other cores wrote.
    te::Stage& pad = in.schedule[src];
    te::IterVar rows = fuse_all(pad, {pad.axis(0), pad.axis(1), pad.axis(2)});
    pad.vectorize(pad.axis(4));
    if (product(src.shape()) >= kMinParallelElements) pad.parallel(rows);
  }
  // The stage written tile by tile: the group's element-wise tail when it has one, else the
  // convolution itself, computed into a local tile (cache_write). A convolution computed wider
  // than its output fills the tile from the wide stage, and the tail reads that directly.
  te::Tensor final_out = single_output_like(in, out);
  te::Tensor tile_out = final_out.defined() ? final_out : out;
  te::Tensor acc = conv;
  if (wide.defined() && !tile_out.same_as(out))
    in.schedule[out].compute_inline();
  else if (!wide.defined() && tile_out.same_as(out))
    acc = in.schedule.cache_write(out);
  for (const te::Tensor& o : in.outputs)
    if (!o.same_as(tile_out) && !o.same_as(out)) schedule_injective_stage(in.schedule[o], in.target);

  const int64_t work = s.n * s.ob * s.y * s.oh * s.ow * (blocks.depthwise ? 1 : s.group_in_blocks * s.x) * s.kh * s.kw;
  const WidthTiling tiling = width_tiling(s, blocks, in.target);
  if (const BlockTile tile = block_tile(s, blocks, tiling.width, in.target); tile.blocks > 0) {
    schedule_block_tiles(in, s, tile, tile_out, acc, src.defined() ? src : in.call.args.at(0), work);
    return;
  }
  te::Stage& t = in.schedule[tile_out];
  const int64_t reg = tiling.positions;
  auto [wo, wi] = t.split(t.axis(3), reg);
  t.reorder({t.axis(0), t.axis(1), t.axis(2), wo, wi, t.axis(4)});
  t.vectorize(t.axis(4));
  te::IterVar rows = fuse_all(t, {t.axis(0), t.axis(1), t.axis(2)});
  if (work >= kMinParallelWork) t.parallel(rows);

  te::Stage& a = in.schedule[acc];
  const auto& axes = a.op()->axis;
  const auto& reduce = a.op()->reduce_axis;
  std::vector<te::IterVar> order = {axes[0], axes[1], axes[2]};
  te::IterVar positions = axes[3];
  if (pad_per_row) {
    // The accumulators of a whole output row, register tile by register tile, after the rows
    // of padded data that row reads.
    a.compute_at(t, rows);
    auto [row_tile, tile_positions] = a.split(axes[3], reg);
    order.push_back(row_tile);
    positions = tile_positions;
  } else {
    a.compute_at(t, wo);
  }
  order.insert(order.end(), reduce.begin(), reduce.end());
  order.push_back(positions);
  order.push_back(axes[4]);
  a.reorder(order);
  a.unroll(positions);
  a.vectorize(axes[4]);
  if (pad_per_row) {
    te::Stage& pad = in.schedule[src];
    pad.compute_at(a, axes[2]);
    pad.vectorize(pad.axis(4));
  }
}

}  // namespace kiln::nn
