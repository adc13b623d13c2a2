// nn.conv2d in blocked layouts (TVM's NCHWc, chosen by AlterOpLayout): data NCHW{x}c
// (N, C/x, H, W, x), weight OIHW{x}i{y}o (O/y, C/x, KH, KW, x, y), output NCHW{y}c. Every output
// element is a reduction over input channel blocks, taps and the channels of a block (for a
// depthwise convolution, weight OIHW1i{x}o, over the taps alone); the
// schedule keeps a tile of output positions x one channel block of accumulators in registers
// and runs the innermost loop over the output channel block, y contiguous floats of weight and
// output, so the C compiler turns it into one vector multiply and add per position.
#include <algorithm>

#include "kiln/attrs/layout.h"
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

struct BlockedShape {
  int64_t n, cb, h, w, ob, kh, kw, oh, ow, x, y;
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

std::string padded_name(const std::string& base) { return base + "_data"; }
std::string sum_name(const std::string& base) { return base + "_acc"; }
std::string wide_name(const std::string& base) { return base + "_wide"; }

// Output positions per register tile: a divisor of the output width, as many as the vector
// registers hold beside the weight vector and a broadcast input. 16-wide blocks are chosen for
// AVX-512 (32 registers: 14 positions, measured 10% faster than 8 on ResNet-18), narrower ones
// for AVX2 (16 registers: 8 positions).
int64_t positions_per_tile(int64_t ow, int64_t out_block) {
  const int64_t limit = out_block >= 16 ? 14 : 8;
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

WidthTiling width_tiling(const BlockedShape& s, const ConvLayoutChoice& blocks) {
  const int64_t exact = positions_per_tile(s.ow, s.y);
  const int64_t limit = s.y >= 16 ? 14 : 8;
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

}  // namespace

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
    check_same_extent(x[1], w[1], "input channel blocks (weight axis 1)", "data", x, "weight", w);
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
  const int64_t width = width_tiling(s, blocks).width;
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
    te::IterVar ico = te::reduce_axis(s.cb, "ico"), ici = te::reduce_axis(s.x, "ici");
    sum = te::compute(shape, sum_tensor, [&](const te::Indices& i) {
      return te::sum(multiply(src(i[0], ico, row(i), col(i), ici), weight(i[1], ico, r, q, ici, i[4])),
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
    // Rows of the padded copy in parallel, the channel block vectorised: no index division.
    te::Stage& pad = in.schedule[src];
    te::IterVar rows = fuse_all(pad, {pad.axis(0), pad.axis(1), pad.axis(2)});
    pad.vectorize(pad.axis(4));
    if (product(src.shape()) >= kMinParallelWork) pad.parallel(rows);
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

  te::Stage& t = in.schedule[tile_out];
  const int64_t reg = width_tiling(s, blocks).positions;
  auto [wo, wi] = t.split(t.axis(3), reg);
  t.reorder({t.axis(0), t.axis(1), t.axis(2), wo, wi, t.axis(4)});
  t.vectorize(t.axis(4));
  te::IterVar rows = fuse_all(t, {t.axis(0), t.axis(1), t.axis(2)});
  const int64_t work = s.n * s.ob * s.y * s.oh * s.ow * (blocks.depthwise ? 1 : s.cb * s.x) * s.kh * s.kw;
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
