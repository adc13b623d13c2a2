// Ops: nn.conv2d, nn.conv2d_transpose (NCHW data; OIHW and IOHW weights, as Relay and ONNX),
// nn.conv3d, nn.conv3d_transpose (NCDHW data; OIDHW and IODHW weights).
//
// Computes and schedules (nn.conv2d, nn.conv2d_transpose): float32 convolutions are register-tiled
// products computed by the NN micro-kernel (kiln/runtime/microkernels.h) over a "core" tensor
// (batch, out channel, flattened output position):
// - direct: 1x1, stride 1, unpadded: the positions of the data are those of the output, the
//   micro-kernel reads the data itself; the core is computed tile by tile inside the output's
//   loops, so the fused element-wise tail runs on tiles in cache;
// - padded rows (stride 1): the data is copied once into zero-padded rows of pitch Wp, and the
//   core is computed over positions y * Wp + x: every window tap is then a fixed offset, and the
//   columns x >= OW of each row are computed and dropped;
// - im2col (strides): the taps of each tile of output positions are gathered into a small
//   buffer inside the output's loops, then multiplied as in "direct".
// Depthwise convolutions (one input channel per group) are direct loops vectorised along the
// output row; other dtypes use a plain reduction that converts like the reference kernel.
// Integer operands with an int32 output sum in wrapping int32 as the reference kernel defines
// (int16 ones take the integer micro-kernel: QnnLegalize's form of qnn.conv2d).
//
// The same paths serve qnn.conv2d (src/op/qnn/conv2d.cc), whose operands are int16 tensors
// already shifted by their zero points and whose int32 accumulator is exact (wrapping like the
// reference kernel): its tiles call the integer micro-kernel kiln_igemm_nn_s16_*.
#include <numeric>

#include "kiln/attrs/nn.h"
#include "op/nn/conv2d_compute.h"
#include "op/nn/nn_compute.h"
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

void check_conv_dtypes(const std::vector<Type>& args, const TensorTypeNode& data, const TensorTypeNode& weight) {
  check_numeric_arg(data, "data");
  if (weight.dtype != data.dtype)
    throw std::move(Error(cat("dtypes of 'data' ", type_str(args[0]), " and 'weight' ", type_str(args[1]), " differ"))
                        .expected(std::string(dtype_name(data.dtype)), std::string(dtype_name(weight.dtype))));
}

struct ConvArgs {
  const TensorTypeNode& data;
  const TensorTypeNode& weight;
  Window2D window;
};

ConvArgs conv_args(const std::vector<Type>& args, const Conv2DAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", 4, "NCHW");
  const TensorTypeNode& weight = arg_tensor_of_rank(args, 1, "weight", 4, attrs.kernel_layout);
  check_conv_dtypes(args, data, weight);
  return {data, weight, attrs.window()};
}

// Both known and a not divisible by b.
bool known_indivisible(int64_t a, int64_t b) { return a >= 0 && a % b != 0; }

void check_divisible_by_groups(int64_t extent, int64_t groups, const std::string& what, const std::string& arg_name,
                               const Shape& shape) {
  if (known_indivisible(extent, groups))
    throw std::move(Error(cat(what, " of '", arg_name, "' ", shape_str(shape), " is not divisible by groups=", groups))
                        .expected(cat("a multiple of ", groups), cat(extent)));
}

// The optional 'channels' and 'kernel_size' attributes must agree with the weight, whose
// spatial extents follow its two channel axes.
template <class A>
void check_weight_attrs(const A& attrs, int64_t out_channels, const TensorTypeNode& weight) {
  if (attrs.channels && out_channels >= 0 && *attrs.channels != out_channels)
    throw std::move(Error(cat("attribute 'channels' disagrees with 'weight' ", shape_str(weight.shape)))
                        .expected(cat(out_channels), cat(*attrs.channels)));
  if (!attrs.kernel_size) return;
  Shape taps(weight.shape.begin() + 2, weight.shape.end());
  std::vector<int64_t> kernel = spatial_values(*attrs.kernel_size, taps.size());
  for (size_t i = 0; i < taps.size(); ++i)
    if (taps[i] >= 0 && taps[i] != kernel[i])
      throw std::move(Error(cat("attribute 'kernel_size' disagrees with 'weight' ", shape_str(weight.shape)))
                          .expected(shape_str(taps), shape_str(kernel)));
}

Type conv2d_relation(const std::vector<Type>& args, const Conv2DAttrs& attrs) {
  if (auto blocks = conv2d_blocks(attrs.data_layout, attrs.kernel_layout, attrs.out_layout))
    return nn::blocked_conv2d_relation(args, attrs, *blocks);
  ConvArgs a = conv_args(args, attrs);
  const Shape& x = a.data.shape;
  const Shape& w = a.weight.shape;
  const Window2D& win = a.window;
  check_divisible_by_groups(x[1], attrs.groups, "input channels", "data", x);
  check_divisible_by_groups(w[0], attrs.groups, "output channels", "weight", w);
  int64_t weight_in_channels = w[1] < 0 ? kAnyDim : w[1] * attrs.groups;
  check_same_extent(x[1], weight_in_channels, "input channels (weight axis 1 times groups)", "data", x, "weight", w);
  check_weight_attrs(attrs, w[0], a.weight);
  int64_t out_h =
      window_extent("height", x, x[2], w[2], win.strides.h, win.dilation.h, win.padding.top, win.padding.bottom);
  int64_t out_w =
      window_extent("width", x, x[3], w[3], win.strides.w, win.dilation.w, win.padding.left, win.padding.right);
  return tensor_type({x[0], w[0], out_h, out_w}, out_dtype_of(attrs.out_dtype, a.data.dtype));
}

// Extent of a transposed convolution's output along one axis.
int64_t transposed_extent(const std::string& axis_name, const Shape& data_shape, int64_t in, int64_t kernel,
                          int64_t stride, int64_t dilation, int64_t pad_before, int64_t pad_after,
                          int64_t output_padding) {
  if (in < 0 || kernel < 0) return kAnyDim;
  int64_t out = (in - 1) * stride - pad_before - pad_after + dilation * (kernel - 1) + output_padding + 1;
  if (out <= 0)
    throw std::move(Error(cat(axis_name, " of argument 'data' ", shape_str(data_shape),
                              ": padding leaves no output of the transposed convolution"))
                        .expected("a positive extent", cat(out)));
  return out;
}

Type conv2d_transpose_relation(const std::vector<Type>& args, const Conv2DTransposeAttrs& attrs) {
  ConvArgs a = conv_args(args, attrs);
  const Shape& x = a.data.shape;
  const Shape& w = a.weight.shape;
  const Window2D& win = a.window;
  check_divisible_by_groups(x[1], attrs.groups, "input channels", "data", x);
  check_same_extent(x[1], w[0], "input channels (weight axis 0)", "data", x, "weight", w);
  int64_t out_channels = w[1] < 0 ? kAnyDim : w[1] * attrs.groups;
  check_weight_attrs(attrs, out_channels, a.weight);
  Pair2D output_padding = pair_2d(attrs.output_padding);
  int64_t out_h = transposed_extent("height", x, x[2], w[2], win.strides.h, win.dilation.h, win.padding.top,
                                    win.padding.bottom, output_padding.h);
  int64_t out_w = transposed_extent("width", x, x[3], w[3], win.strides.w, win.dilation.w, win.padding.left,
                                    win.padding.right, output_padding.w);
  return tensor_type({x[0], out_channels, out_h, out_w}, out_dtype_of(attrs.out_dtype, a.data.dtype));
}

// The 3-D ops, written for any number of spatial axes (NC + spatial data layouts).
struct ConvNdArgs {
  const TensorTypeNode& data;
  const TensorTypeNode& weight;
  WindowGeometry window;
};

const char* const kSpatialAxisNames[] = {"depth", "height", "width"};

ConvNdArgs conv_nd_args(const std::vector<Type>& args, const Conv3DAttrs& attrs, size_t rank) {
  const auto dims = static_cast<int64_t>(rank + 2);
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", dims, attrs.data_layout);
  const TensorTypeNode& weight = arg_tensor_of_rank(args, 1, "weight", dims, attrs.kernel_layout);
  check_conv_dtypes(args, data, weight);
  return {data, weight, attrs.window()};
}

const char* axis_name(size_t rank, size_t i) { return kSpatialAxisNames[3 - rank + i]; }

Type conv3d_relation(const std::vector<Type>& args, const Conv3DAttrs& attrs) {
  const size_t rank = 3;
  ConvNdArgs a = conv_nd_args(args, attrs, rank);
  const Shape& x = a.data.shape;
  const Shape& w = a.weight.shape;
  const WindowGeometry& g = a.window;
  check_divisible_by_groups(x[1], attrs.groups, "input channels", "data", x);
  check_divisible_by_groups(w[0], attrs.groups, "output channels", "weight", w);
  int64_t weight_in_channels = w[1] < 0 ? kAnyDim : w[1] * attrs.groups;
  check_same_extent(x[1], weight_in_channels, "input channels (weight axis 1 times groups)", "data", x, "weight", w);
  check_weight_attrs(attrs, w[0], a.weight);
  Shape out{x[0], w[0]};
  for (size_t i = 0; i < rank; ++i)
    out.push_back(window_extent(axis_name(rank, i), x, x[i + 2], w[i + 2], g.strides[i], g.dilation[i], g.pad_before[i],
                                g.pad_after[i]));
  return tensor_type(out, out_dtype_of(attrs.out_dtype, a.data.dtype));
}

Type conv3d_transpose_relation(const std::vector<Type>& args, const Conv3DTransposeAttrs& attrs) {
  const size_t rank = 3;
  ConvNdArgs a = conv_nd_args(args, attrs, rank);
  const Shape& x = a.data.shape;
  const Shape& w = a.weight.shape;
  const WindowGeometry& g = a.window;
  check_divisible_by_groups(x[1], attrs.groups, "input channels", "data", x);
  check_same_extent(x[1], w[0], "input channels (weight axis 0)", "data", x, "weight", w);
  int64_t out_channels = w[1] < 0 ? kAnyDim : w[1] * attrs.groups;
  check_weight_attrs(attrs, out_channels, a.weight);
  std::vector<int64_t> output_padding = spatial_values(attrs.output_padding, rank);
  Shape out{x[0], out_channels};
  for (size_t i = 0; i < rank; ++i)
    out.push_back(transposed_extent(axis_name(rank, i), x, x[i + 2], w[i + 2], g.strides[i], g.dilation[i],
                                    g.pad_before[i], g.pad_after[i], output_padding[i]));
  return tensor_type(out, out_dtype_of(attrs.out_dtype, a.data.dtype));
}

// ----- compute and schedules of nn.conv2d -----

using tir::PrimExpr;

struct Conv2dShape {
  int64_t n, ic, h, w, oc, kh, kw, oh, ow;
  Pair2D strides, dilation;
  Padding2D pad;
  int64_t groups, icg, ocg;
  DType dtype, acc, out_dtype;  // operands, accumulator, output

  bool padded() const { return pad.top || pad.left || pad.bottom || pad.right; }
  // int16 operands into an int32 accumulator: the integer micro-kernel's contract.
  bool integer_tiles() const { return dtype == DType::kInt16 && acc == DType::kInt32 && out_dtype == DType::kInt32; }
  bool float_tiles() const { return dtype == DType::kFloat32 && out_dtype == DType::kFloat32; }
};

Conv2dShape conv2d_shape(const ComputeInput& call, const Conv2DAttrs& attrs, const nn::ConvOperandTypes& operands) {
  const TensorTypeNode& x = expect_tensor(call.arg_types.at(0), "data");
  const TensorTypeNode& wt = expect_tensor(call.arg_types.at(1), "weight");
  const TensorTypeNode& out = expect_tensor(call.out_type, "output");
  Conv2dShape s{};
  s.n = x.shape[0];
  s.ic = x.shape[1];
  s.h = x.shape[2];
  s.w = x.shape[3];
  s.oc = out.shape[1];
  s.kh = wt.shape[2];
  s.kw = wt.shape[3];
  s.oh = out.shape[2];
  s.ow = out.shape[3];
  const Window2D window = attrs.window();
  s.strides = window.strides;
  s.dilation = window.dilation;
  s.pad = window.padding;
  s.groups = attrs.groups;
  s.icg = s.ic / s.groups;
  s.ocg = s.oc / s.groups;
  s.dtype = operands.dtype.value_or(x.dtype);
  s.out_dtype = out.dtype;
  // Integers into int32 wrap in the reference kernel: an int32 sum in any order is exact.
  const bool wrapping = is_int(s.dtype) && s.out_dtype == DType::kInt32;
  s.acc = operands.acc.value_or(wrapping ? DType::kInt32 : nn::accumulate_dtype(s.dtype));
  return s;
}

enum class ConvPath : uint8_t { kGeneric, kDepthwise, kDirect, kPaddedRows, kIm2col, kOnePosition };

struct ConvPlan {
  ConvPath path = ConvPath::kGeneric;
  int64_t mr = 0, nr = 0;       // micro-kernel tile: out channels x positions
  int64_t oc_core = 0;          // out channels of the core, whole tiles (the last may reach past oc)
  int64_t ocb = 0, pb = 0;      // fused paths: output tile of ocb channels x pb positions
  int64_t core_p = 0;           // positions of the core, whole tiles
  int64_t pitch = 0;            // padded rows: row pitch (padded width) of the copied data
  int64_t rows = 0;             // padded rows: rows of the copied data
  int64_t lanes = 0;            // one position: partial sums per output channel
  bool gather_at_root = false;  // im2col: taps gathered once for all tiles, not per tile
};

// The largest multiple of the tile rows that divides the core's channels and is at most
// `limit` (the tile rows themselves when none is larger): output tiles of that many channels
// split the core evenly, so that none lies wholly past the output's channels.
int64_t largest_channel_tile(const ConvPlan& plan, int64_t limit) {
  int64_t best = plan.mr;
  for (int64_t b = plan.mr; b <= std::min(plan.oc_core, limit); b += plan.mr)
    if (plan.oc_core % b == 0) best = b;
  return best;
}

// Output channels per output tile: the core tile (ocb x pb floats) stays well inside L1.
int64_t channel_block(const ConvPlan& plan) { return largest_channel_tile(plan, 4096 / plan.pb); }

// Channels per output tile when an im2col layer's positions fit one tile: enough rows per task
// that each amortises its hand-off, few enough that a 2-core host gets several tasks.
constexpr int64_t kSingleTileChannels = 64;

// An im2col layer whose positions fit one tile (a strided layer down to 14x14 or 7x7: ConvNeXt's
// downsampling, RegNet's stride-2 blocks) would be one task: its taps are gathered once at the
// root, in parallel, and the output is split into channel tiles of about kSingleTileChannels
// that divide the core's channels. Gathering per channel tile instead repeats the strided
// gather, which costs far more per element than a multiply-add.
void split_single_tile(ConvPlan& plan) {
  const int64_t tile = largest_channel_tile(plan, kSingleTileChannels);
  if (tile == plan.oc_core) return;
  plan.ocb = tile;
  plan.gather_at_root = true;
}

// Rows of the micro-kernel tile. Float convolutions without groups take whole tiles and one
// shorter tile for the channels left: 8 rows, or 12 when 8 does not divide the channels
// (ShuffleNet's 116: 9 tiles of 12 and one of 8, not 29 tiles of 4 with half the multiply-adds
// per load; 12 rows measured 3-5% faster than 8 on its 58- and 116-channel layers), and always 12
// with 8-lane vectors: AVX2's tile runs in groups of up to six rows over each 16 columns, and 8
// rows (two groups of four) read B twice as often per multiply-add (ShuffleNetV2's 7x7 layers
// 35% -> 52% of the peak on Zen 3). Grouped tiles must not cross a group, whose rows read other
// data channels: they take a divisor of the group's channels, as the integer tiles do.
int64_t channel_tile_rows(const Conv2dShape& s, const Target& target) {
  if (s.float_tiles() && s.groups == 1) return s.oc % 8 == 0 && target.vector_lanes != 8 ? 8 : 12;
  return nn::first_divisor(s.ocg, {8, 4, 2, 1});
}

ConvPlan plan_conv2d(const Conv2dShape& s, const Target& target) {
  ConvPlan plan;
  if (!s.float_tiles() && !s.integer_tiles()) return plan;
  if (s.icg == 1 && s.groups > 1) {
    plan.path = ConvPath::kDepthwise;
    return plan;
  }
  const int64_t positions = s.oh * s.ow;
  // One output position (squeeze-excite blocks) is a matrix-vector product, which the tiled
  // paths cannot bound when the position is read twice. A float 1x1 window on unpadded data
  // sums each output channel in `lanes` partial sums over contiguous data and weights, so that
  // it vectorizes (one running float sum cannot: four cycles per term); anything else takes the
  // generic reduction.
  if (positions == 1) {
    plan.lanes = nn::first_divisor(s.icg, {16, 8, 4, 2});
    if (s.float_tiles() && s.kh == 1 && s.kw == 1 && !s.padded() && plan.lanes > 0) plan.path = ConvPath::kOnePosition;
    return plan;
  }
  plan.mr = channel_tile_rows(s, target);
  plan.oc_core = nn::round_up(s.oc, plan.mr);
  // Wide tiles (two vectors of positions per tile row): each broadcast weight feeds two
  // multiply-adds, so the tile is bound by arithmetic rather than loads (measured on ResNet-18:
  // a quarter faster than 16-wide tiles, and no slower on the small planes of MobileNet).
  plan.nr = 32;
  const bool unit_stride = s.strides.h == 1 && s.strides.w == 1;
  if (unit_stride && s.kh == 1 && s.kw == 1 && !s.padded()) {
    plan.path = ConvPath::kDirect;
  } else if (unit_stride) {
    plan.path = ConvPath::kPaddedRows;
    plan.pitch = s.w + s.pad.left + s.pad.right;
    plan.core_p = nn::round_up(s.oh * plan.pitch, plan.nr);
    const int64_t last = plan.core_p + (s.kh - 1) * s.dilation.h * plan.pitch + (s.kw - 1) * s.dilation.w;
    plan.rows = (last + plan.pitch - 1) / plan.pitch;
    return plan;
  } else {
    plan.path = ConvPath::kIm2col;
  }
  plan.pb = positions >= 64 ? 64 : nn::round_up(positions, plan.nr);
  // Every tile of the direct path costs whole micro-kernel calls, however few of its positions
  // are real: a 14x14 plane in tiles of 64 is 8 calls of 32 per channel tile, in tiles of 32 only 7.
  // Such tiles are one call each, the tail reading the core the call just wrote (measured on
  // ShuffleNetV2's 14x14 116-channel layers: a few percent faster than blocks of 120 channels).
  const bool call_tiles =
      plan.path == ConvPath::kDirect && nn::round_up(positions, plan.nr) < nn::round_up(positions, plan.pb);
  if (call_tiles) plan.pb = plan.nr;
  if (plan.path == ConvPath::kIm2col) {
    // Tiles of whole output rows gather without dividing positions into rows.
    const int64_t rows_tile = std::lcm(s.ow, plan.nr);
    if (rows_tile <= 256 && rows_tile < 2 * positions) plan.pb = rows_tile;
    plan.ocb = plan.oc_core;  // all channels: the gathered taps of a tile serve every channel
  } else {
    plan.ocb = call_tiles ? plan.mr : channel_block(plan);
  }
  plan.core_p = nn::round_up(positions, plan.pb);
  if (plan.path == ConvPath::kIm2col && s.n == 1 && plan.core_p == plan.pb) split_single_tile(plan);
  return plan;
}

std::string core_name(const std::string& base) { return base + "_core"; }
std::string data_name(const std::string& base) { return base + "_data"; }
std::string padded_name(const std::string& base) { return base + "_padded"; }

// a * b in the accumulator's dtype (no conversion for float32).
PrimExpr product(const Conv2dShape& s, const PrimExpr& a, const PrimExpr& b) {
  if (s.acc == s.dtype) return a * b;
  return tir::cast(s.acc, a) * tir::cast(s.acc, b);
}

// The data channel read by output channel `oc` for its in-group channel `icg`.
PrimExpr data_channel(const Conv2dShape& s, const PrimExpr& oc, const PrimExpr& icg) {
  if (s.groups == 1) return icg;
  return tir::floordiv(oc, s.ocg) * s.icg + icg;
}

// The core over (batch, out channel, position) for a path, reading `src` (the data, or its
// padded / gathered copy) and `weight`. Also builds the micro-kernel's description from tiles.
te::Tensor conv_core(const Conv2dShape& s, const ConvPlan& plan, const te::Tensor& src, const te::Tensor& weight,
                     std::vector<int64_t> shape, const std::string& name) {
  te::IterVar c = te::reduce_axis(s.icg, "rc");
  if (plan.path == ConvPath::kDirect) {
    return te::compute(shape, name, [&](const te::Indices& i) {
      PrimExpr ch = data_channel(s, i[1], c);
      return te::sum(
          product(s, weight(i[1], c, 0, 0), src(i[0], ch, tir::floordiv(i[2], s.w), tir::floormod(i[2], s.w))), {c});
    });
  }
  te::IterVar r = te::reduce_axis(s.kh, "ry"), q = te::reduce_axis(s.kw, "rx");
  if (plan.path == ConvPath::kPaddedRows) {
    const int64_t row_step = s.dilation.h * plan.pitch, col_step = s.dilation.w;
    return te::compute(shape, name, [&](const te::Indices& i) {
      PrimExpr ch = data_channel(s, i[1], c);
      return te::sum(
          product(s, weight(i[1], c, r, q), src(i[0], ch, i[2] + PrimExpr(r) * row_step + PrimExpr(q) * col_step)),
          {c, r, q});
    });
  }
  return te::compute(shape, name, [&](const te::Indices& i) {
    PrimExpr ch = data_channel(s, i[1], c);
    return te::sum(product(s, weight(i[1], c, r, q), src(i[0], ch, r, q, i[2])), {c, r, q});
  });
}

tir::Stmt tile_call(const Conv2dShape& s, const nn::NNTileCall& t) {
  return s.integer_tiles() ? nn::igemm_nn_call(t) : nn::sgemm_nn_call(t);
}

te::BufferSlice shifted(te::BufferSlice slice, size_t dim, int64_t by) {
  slice.origin.at(dim) = slice.origin.at(dim) + by;
  return slice;
}

// The last channel tile when it reaches past the output's channels: its oc % mr real rows (mr is
// 12 then) in tiles of 8, 4, 2 and 1 rows (the weights end there; the core's rows past them are
// never read).
tir::Stmt last_channel_tile(const Conv2dShape& s, const ConvPlan& plan, const nn::NNTileCall& full,
                            const te::BufferSlice& weight, const te::BufferSlice& out) {
  std::vector<tir::Stmt> calls;
  int64_t first = 0;
  for (int64_t rows = 8; rows >= 1; rows /= 2) {
    if (((s.oc % plan.mr) & rows) == 0) continue;
    nn::NNTileCall part = full;
    part.mr = rows;
    part.a = shifted(weight, 0, first).pointer();
    part.c = shifted(out, 1, first).pointer();
    calls.push_back(tile_call(s, part));
    first += rows;
  }
  return tir::seq(std::move(calls));
}

// The micro-kernel as a tensor intrinsic for an mr x nr tile of the core.
te::TensorIntrin conv_tile_intrin(const Conv2dShape& s, const ConvPlan& plan, const te::Tensor& src) {
  std::vector<int64_t> src_shape = src.shape();
  te::Tensor src_tile = te::placeholder(src_shape, s.dtype, "B_tile");
  te::Tensor weight_tile = te::placeholder({plan.mr, s.icg, s.kh, s.kw}, s.dtype, "A_tile");
  te::Tensor desc = conv_core(s, plan, src_tile, weight_tile, {1, plan.mr, plan.nr}, "C_tile");
  const int64_t positions = s.oh * s.ow;
  auto emit = [s, plan, positions](const std::vector<te::BufferSlice>& in, const te::BufferSlice& out) -> tir::Stmt {
    const te::BufferSlice& a = in.at(0);
    const te::BufferSlice& b = in.at(1);
    nn::NNTileCall t;
    t.mr = plan.mr;
    t.nr = plan.nr;
    t.k = PrimExpr(s.icg);
    t.a = a.pointer();
    t.a_row = PrimExpr(a.stride(0));
    t.a_k = PrimExpr(a.stride(1));
    t.a_th = PrimExpr(a.stride(2));
    t.a_tw = PrimExpr(a.stride(3));
    t.b = b.pointer();
    t.b_k = PrimExpr(b.stride(1));
    t.c = out.pointer();
    t.c_row = PrimExpr(out.stride(1));
    t.n = PrimExpr(plan.nr);
    t.taps_h = PrimExpr(1);
    t.taps_w = PrimExpr(1);
    t.b_th = t.b_tw = PrimExpr(0);
    if (plan.path == ConvPath::kDirect) {
      // The last tile hangs over the end of the data: only its first columns are real.
      PrimExpr first = b.origin[2] * s.w + b.origin[3];
      t.n = tir::min(PrimExpr(plan.nr), PrimExpr(positions) - first);
    } else {
      t.taps_h = PrimExpr(s.kh);
      t.taps_w = PrimExpr(s.kw);
      if (plan.path == ConvPath::kPaddedRows) {
        t.b_th = PrimExpr(s.dilation.h * plan.pitch);
        t.b_tw = PrimExpr(s.dilation.w);
      } else {
        // The gathered taps are (channel, tap row, tap column) rows of one stride, like the
        // weights' (in channel, kh, kw): one flat reduction.
        t.k = PrimExpr(s.icg * s.kh * s.kw);
        t.taps_h = t.taps_w = PrimExpr(1);
        t.a_k = PrimExpr(a.stride(3));
        t.b_k = PrimExpr(b.stride(3));
      }
    }
    if (plan.oc_core == s.oc) return tile_call(s, t);
    PrimExpr whole = tir::le(a.origin[0] + plan.mr, PrimExpr(s.oc));
    return tir::IfThenElse{whole, tile_call(s, t), last_channel_tile(s, plan, t, a, out)};
  };
  return te::TensorIntrin{cat("conv_tile_", plan.mr, "x", plan.nr), desc, emit};
}

// Any dtype: a plain reduction over zero-padded windows in the reference kernel's arithmetic.
te::Tensor conv2d_generic(const Conv2dShape& s, const te::Tensor& x, const te::Tensor& w, const std::string& name) {
  const DType acc = s.acc;
  te::IterVar c = te::reduce_axis(s.icg, "rc"), r = te::reduce_axis(s.kh, "ry"), q = te::reduce_axis(s.kw, "rx");
  te::Tensor sum =
      te::compute({s.n, s.oc, s.oh, s.ow}, name + (acc == s.out_dtype ? "" : "_acc"), [&](const te::Indices& i) {
        PrimExpr y = i[2] * s.strides.h + PrimExpr(r) * s.dilation.h - s.pad.top;
        PrimExpr z = i[3] * s.strides.w + PrimExpr(q) * s.dilation.w - s.pad.left;
        PrimExpr v = tir::cast(acc, x(i[0], data_channel(s, i[1], c), y, z));
        if (s.padded()) {
          PrimExpr inside = tir::logical_and(tir::logical_and(tir::ge(y, 0), tir::lt(y, s.h)),
                                             tir::logical_and(tir::ge(z, 0), tir::lt(z, s.w)));
          v = tir::select(inside, v, tir::make_const(acc, 0));
        }
        return te::sum(v * tir::cast(acc, w(i[1], c, r, q)), {c, r, q});
      });
  if (acc == s.out_dtype) return sum;
  return te::compute(sum.shape(), name,
                     [&](const te::Indices& i) { return nn::to_out_dtype(sum(i[0], i[1], i[2], i[3]), s.out_dtype); });
}

PrimExpr inside_window(const PrimExpr& y, const PrimExpr& x, int64_t h, int64_t w) {
  return tir::logical_and(tir::logical_and(tir::ge(y, 0), tir::lt(y, h)),
                          tir::logical_and(tir::ge(x, 0), tir::lt(x, w)));
}

// Depthwise windows over flat planes: the padded plane is copied as rows of one pitch (the
// padded width), with zero rows after it, and output position (y, x) is core element p = y *
// pitch + x, whose window starts at stride * p. Every tap is then one pass over a contiguous
// run of (oh - 1) * pitch + ow core elements and input values (stride 2: every other value),
// so the vector loop spans the whole plane instead of one short row (7 or 14 positions on
// MobileNet's small planes, which GCC turned into shuffles); the columns between rows
// (pitch - ow per row) are computed and dropped. With stride 2 those are half the plane, so
// rows of a vector or more keep the row path (measured on MobileNetV3's 112 -> 56 and 56 -> 28
// layers: the flat plane took 1.3-1.5x as long).
bool depthwise_flat(const Conv2dShape& s) {
  if (s.strides.h != s.strides.w) return false;
  return s.strides.h == 1 || (s.strides.h == 2 && s.ow < 16);
}

int64_t depthwise_pitch(const Conv2dShape& s) { return s.w + s.pad.left + s.pad.right; }

te::Tensor conv2d_depthwise_flat(const Conv2dShape& s, const te::Tensor& x, const te::Tensor& w,
                                 const std::string& name) {
  const int64_t stride = s.strides.h, pitch = depthwise_pitch(s);
  const int64_t core_p = (s.oh - 1) * pitch + s.ow;
  const int64_t last = stride * (core_p - 1) + (s.kh - 1) * s.dilation.h * pitch + (s.kw - 1) * s.dilation.w;
  const int64_t rows = last / pitch + 1;
  te::Tensor src = te::compute({s.n, s.ic, rows * pitch}, data_name(name), [&](const te::Indices& i) {
    PrimExpr y = tir::floordiv(i[2], pitch) - s.pad.top, z = tir::floormod(i[2], pitch) - s.pad.left;
    return tir::select(inside_window(y, z, s.h, s.w), x(i[0], i[1], y, z), tir::make_const(s.dtype, 0));
  });
  te::IterVar r = te::reduce_axis(s.kh, "ry"), q = te::reduce_axis(s.kw, "rx");
  te::Tensor core = te::compute({s.n, s.oc, core_p}, core_name(name), [&](const te::Indices& i) {
    PrimExpr ch = s.ocg == 1 ? PrimExpr(i[1]) : tir::floordiv(i[1], s.ocg);
    PrimExpr at = i[2] * stride + PrimExpr(r) * (s.dilation.h * pitch) + PrimExpr(q) * s.dilation.w;
    return te::sum(product(s, src(i[0], ch, at), w(i[1], 0, r, q)), {r, q});
  });
  return te::compute({s.n, s.oc, s.oh, s.ow}, name,
                     [&](const te::Indices& i) { return core(i[0], i[1], i[2] * pitch + i[3]); });
}

te::Tensor conv2d_depthwise(const Conv2dShape& s, const te::Tensor& x, const te::Tensor& w, const std::string& name) {
  if (depthwise_flat(s)) return conv2d_depthwise_flat(s, x, w, name);
  te::Tensor src = x;
  if (s.padded()) {
    const int64_t hp = s.h + s.pad.top + s.pad.bottom, wp = s.w + s.pad.left + s.pad.right;
    src = te::compute({s.n, s.ic, hp, wp}, data_name(name), [&](const te::Indices& i) {
      PrimExpr y = i[2] - s.pad.top, z = i[3] - s.pad.left;
      return tir::select(inside_window(y, z, s.h, s.w), x(i[0], i[1], y, z), tir::make_const(s.dtype, 0));
    });
  }
  te::IterVar r = te::reduce_axis(s.kh, "ry"), q = te::reduce_axis(s.kw, "rx");
  return te::compute({s.n, s.oc, s.oh, s.ow}, name, [&](const te::Indices& i) {
    PrimExpr ch = s.ocg == 1 ? PrimExpr(i[1]) : tir::floordiv(i[1], s.ocg);
    PrimExpr data =
        src(i[0], ch, i[2] * s.strides.h + PrimExpr(r) * s.dilation.h, i[3] * s.strides.w + PrimExpr(q) * s.dilation.w);
    return te::sum(product(s, data, w(i[1], 0, r, q)), {r, q});
  });
}

std::string lanes_name(const std::string& base) { return base + "_lanes"; }

// One output position of a 1x1 window: lane l of output channel oc sums the input channels
// l, l + lanes, ...; the output adds the lanes.
te::Tensor conv2d_one_position(const Conv2dShape& s, const ConvPlan& plan, const te::Tensor& x, const te::Tensor& w,
                               const std::string& name) {
  te::IterVar j = te::reduce_axis(s.icg / plan.lanes, "rj");
  te::Tensor lanes = te::compute({s.n, s.oc, plan.lanes}, lanes_name(name), [&](const te::Indices& i) {
    PrimExpr c = PrimExpr(j) * plan.lanes + i[2];
    return te::sum(product(s, w(i[1], c, 0, 0), x(i[0], data_channel(s, i[1], c), 0, 0)), {j});
  });
  te::IterVar l = te::reduce_axis(plan.lanes, "rl");
  return te::compute({s.n, s.oc, 1, 1}, name, [&](const te::Indices& i) { return te::sum(lanes(i[0], i[1], l), {l}); });
}

// The taps of every output position (im2col), zero outside the data.
te::Tensor gather_taps(const Conv2dShape& s, const ConvPlan& plan, const te::Tensor& x, const std::string& name) {
  const int64_t positions = s.oh * s.ow;
  return te::compute({s.n, s.ic, s.kh, s.kw, plan.core_p}, data_name(name), [&](const te::Indices& i) {
    PrimExpr y = tir::floordiv(i[4], s.ow) * s.strides.h + i[2] * s.dilation.h - s.pad.top;
    PrimExpr z = tir::floormod(i[4], s.ow) * s.strides.w + i[3] * s.dilation.w - s.pad.left;
    PrimExpr inside = tir::logical_and(tir::lt(i[4], positions), inside_window(y, z, s.h, s.w));
    return tir::select(inside, x(i[0], i[1], y, z), tir::make_const(s.dtype, 0));
  });
}

// A padded image stem (a few channels, groups=1): the whole padded image is small, and the
// taps' few channels make the gather as costly as the products.
bool stem_image(const Conv2dShape& s) { return s.padded() && s.groups == 1 && s.ic <= 4; }

// The same taps read from a zero-padded copy with no condition, so that the gather vectorizes
// (a conditional strided load stays scalar: most of MobileNetV3's stem time); positions past
// the last one (the last tile's overhang) repeat it and are never output. Only for stems: on
// large grouped inputs (RegNet) the copy is a pass over memory of its own.
te::Tensor gather_from_padded_copy(const Conv2dShape& s, const ConvPlan& plan, const te::Tensor& x,
                                   const std::string& name) {
  te::Tensor padded =
      te::compute({s.n, s.ic, s.h + s.pad.top + s.pad.bottom, s.w + s.pad.left + s.pad.right}, padded_name(name),
                  [&](const te::Indices& i) {
                    PrimExpr y = i[2] - s.pad.top, z = i[3] - s.pad.left;
                    return tir::select(inside_window(y, z, s.h, s.w), x(i[0], i[1], y, z), tir::make_const(s.dtype, 0));
                  });
  const int64_t last = s.oh * s.ow - 1;
  return te::compute({s.n, s.ic, s.kh, s.kw, plan.core_p}, data_name(name), [&](const te::Indices& i) {
    PrimExpr p = plan.core_p - 1 > last ? tir::min(i[4], PrimExpr(last)) : PrimExpr(i[4]);
    PrimExpr y = tir::floordiv(p, s.ow) * s.strides.h + i[2] * s.dilation.h;
    PrimExpr z = tir::floormod(p, s.ow) * s.strides.w + i[3] * s.dilation.w;
    return padded(i[0], i[1], y, z);
  });
}

te::Tensor conv2d_tensor(const ComputeInput& call, const Conv2DAttrs& attrs, const te::Tensor& x, const te::Tensor& w,
                         const nn::ConvOperandTypes& types) {
  const Conv2dShape s = conv2d_shape(call, attrs, types);
  const ConvPlan plan = plan_conv2d(s, call.target);
  const std::string& name = call.name;
  switch (plan.path) {
    case ConvPath::kGeneric: return conv2d_generic(s, x, w, name);
    case ConvPath::kDepthwise: return conv2d_depthwise(s, x, w, name);
    case ConvPath::kOnePosition: return conv2d_one_position(s, plan, x, w, name);
    default: break;
  }
  te::Tensor src = x;
  if (plan.path == ConvPath::kPaddedRows) {
    const int64_t pitch = plan.pitch;
    src = te::compute({s.n, s.ic, plan.rows * pitch}, data_name(name), [&](const te::Indices& i) {
      PrimExpr y = tir::floordiv(i[2], pitch) - s.pad.top, z = tir::floormod(i[2], pitch) - s.pad.left;
      return tir::select(inside_window(y, z, s.h, s.w), x(i[0], i[1], y, z), tir::make_const(s.dtype, 0));
    });
  } else if (plan.path == ConvPath::kIm2col) {
    src = stem_image(s) ? gather_from_padded_copy(s, plan, x, name) : gather_taps(s, plan, x, name);
  }
  te::Tensor core = conv_core(s, plan, src, w, {s.n, plan.oc_core, plan.core_p}, core_name(name));
  const int64_t pitch = plan.path == ConvPath::kPaddedRows ? plan.pitch : s.ow;
  return te::compute({s.n, s.oc, s.oh, s.ow}, name,
                     [&](const te::Indices& i) { return core(i[0], i[1], i[2] * pitch + i[3]); });
}

std::vector<te::Tensor> conv2d_compute(const ComputeInput& call, const Conv2DAttrs& attrs) {
  if (auto blocks = conv2d_blocks(attrs.data_layout, attrs.kernel_layout, attrs.out_layout))
    return {nn::blocked_conv2d_compute(call, attrs, *blocks)};
  return {conv2d_tensor(call, attrs, call.args.at(0), call.args.at(1), {})};
}

// nn.conv2d_transpose: output position y gathers the data rows iy with iy * stride + tap * dilation
// - pad = y. A plain reduction (the op is rare in the models kiln targets).
std::vector<te::Tensor> conv2d_transpose_compute(const ComputeInput& call, const Conv2DTransposeAttrs& attrs) {
  const te::Tensor& x = call.args.at(0);
  const te::Tensor& w = call.args.at(1);
  const TensorTypeNode& out = expect_tensor(call.out_type, "output");
  const std::vector<int64_t>& xs = x.shape();
  const int64_t groups = attrs.groups, icg = xs[1] / groups, ocg = out.shape[1] / groups;
  const int64_t kh = w.shape()[2], kw = w.shape()[3];
  const Window2D window = attrs.window();
  const Pair2D st = window.strides, dil = window.dilation;
  const Padding2D pad = window.padding;
  const DType acc = nn::accumulate_dtype(x.dtype());
  te::IterVar c = te::reduce_axis(icg, "rc"), r = te::reduce_axis(kh, "ry"), q = te::reduce_axis(kw, "rx");
  auto source = [&](const PrimExpr& o, const PrimExpr& tap, int64_t stride, int64_t dilation, int64_t before,
                    int64_t extent, PrimExpr* index) {
    PrimExpr t = o + before - tap * dilation;
    *index = tir::floordiv(t, stride);
    PrimExpr ok = tir::logical_and(tir::ge(t, 0), tir::lt(*index, extent));
    return stride == 1 ? ok : tir::logical_and(ok, tir::eq(tir::floormod(t, stride), 0));
  };
  te::Tensor sum = te::compute(out.shape, call.name + (acc == out.dtype ? "" : "_acc"), [&](const te::Indices& i) {
    PrimExpr iy, ix;
    PrimExpr ok = tir::logical_and(source(i[2], r, st.h, dil.h, pad.top, xs[2], &iy),
                                   source(i[3], q, st.w, dil.w, pad.left, xs[3], &ix));
    PrimExpr ch = groups == 1 ? PrimExpr(c) : tir::floordiv(i[1], ocg) * icg + c;
    PrimExpr oc = groups == 1 ? PrimExpr(i[1]) : tir::floormod(i[1], ocg);
    PrimExpr v = tir::select(ok, tir::cast(acc, x(i[0], ch, iy, ix)), tir::make_const(acc, 0));
    return te::sum(v * tir::cast(acc, w(ch, oc, r, q)), {c, r, q});
  });
  if (acc == out.dtype) return {sum};
  return {te::compute(out.shape, call.name,
                      [&](const te::Indices& i) { return nn::to_out_dtype(sum(i[0], i[1], i[2], i[3]), out.dtype); })};
}

// ----- schedules -----

bool is_group_output(const ScheduleInput& in, const te::Tensor& t) {
  return std::any_of(in.outputs.begin(), in.outputs.end(), [&](const te::Tensor& o) { return o.same_as(t); });
}

// An NCHW output stage at the root: rows vectorised, outer loops parallel when worth it.
void schedule_nchw_rows(te::Stage& stage, int64_t work) {
  const auto leaves = stage.leaf_iter_vars();
  if (leaves.size() != 4) return;
  stage.vectorize(leaves[3]);
  te::IterVar outer = nn::fuse_all(stage, {leaves[0], leaves[1], leaves[2]});
  if (work >= nn::kMinParallelWork) stage.parallel(outer);
}

void schedule_outputs_as_rows(const ScheduleInput& in, const te::Tensor& anchor_out, int64_t work) {
  if (!is_group_output(in, anchor_out)) in.schedule[anchor_out].compute_inline();
  for (const te::Tensor& o : in.outputs) {
    te::Stage& stage = in.schedule[o];
    if (stage.attach() != te::Stage::Attach::kRoot || stage.op()->reduce) continue;
    if (o.ndim() == 4)
      schedule_nchw_rows(stage, work);
    else
      schedule_injective_stage(stage, in.target);
  }
}

// Splits the core's (out channel, position) loops into micro-kernel tiles and tensorizes them.
// Returns the outermost loop.
// Weights larger than the data they meet: channel tiles outside, so that each tile's weights are
// read once while the (smaller) data stays in cache.
te::IterVar tile_core(te::Stage& core, const te::TensorIntrin& intrin, const ConvPlan& plan, bool channels_outer) {
  auto [co, ci] = core.split(core.axis(1), plan.mr);
  auto [po, pi] = core.split(core.axis(2), plan.nr);
  std::vector<te::IterVar> order = {core.axis(0), po, co, ci, pi};
  if (channels_outer) std::swap(order[1], order[2]);
  for (const auto& r : core.op()->reduce_axis) order.push_back(r);
  core.reorder(order);
  core.tensorize(ci, intrin);
  return core.axis(0);
}

// The data the core reads: its padded or gathered copy, a caller's operand, or the argument.
te::Tensor core_source(const ScheduleInput& in, const te::Tensor& out) {
  for (const std::string& name : {data_name(in.call.name), nn::conv_operand_name(in.call.name, "data")})
    if (te::Tensor t = nn::find_tensor(out, name); t.defined()) return t;
  return in.call.args.at(0);
}

void schedule_conv_rows(const ScheduleInput& in, const Conv2dShape& s, const ConvPlan& plan, int64_t work) {
  const te::Tensor& out = in.anchor.at(0);
  te::Tensor core = nn::find_tensor(out, core_name(in.call.name));
  te::Tensor src = nn::find_tensor(out, data_name(in.call.name));
  te::Stage& core_stage = in.schedule[core];
  const int64_t weight_size = s.oc * s.icg * s.kh * s.kw, data_size = s.ic * plan.core_p;
  tile_core(core_stage, conv_tile_intrin(s, plan, core_source(in, out)), plan, weight_size > data_size);
  const auto& leaves = core_stage.leaf_iter_vars();
  te::IterVar outer = nn::fuse_all(core_stage, {leaves[0], leaves[1], leaves[2]});
  if (work >= nn::kMinParallelWork) core_stage.parallel(outer);
  if (src.defined()) {
    te::Stage& src_stage = in.schedule[src];
    const auto src_leaves = src_stage.leaf_iter_vars();
    if (plan.path == ConvPath::kPaddedRows) {
      auto [row, col] = src_stage.split(src_leaves[2], plan.pitch);
      (void)row;
      src_stage.vectorize(col);
    }
    te::IterVar planes = src_stage.fuse(src_leaves[0], src_leaves[1]);
    if (work >= nn::kMinParallelWork) src_stage.parallel(planes);
  }
  schedule_outputs_as_rows(in, out, work);
}

// The output computed in tiles of ocb channels x pb positions; each tile's core (and gathered
// data) is computed right before the tile's element-wise tail.
void schedule_conv_fused(const ScheduleInput& in, const te::Tensor& final_out, const Conv2dShape& s,
                         const ConvPlan& plan, int64_t work) {
  const te::Tensor& out = in.anchor.at(0);
  te::Tensor core = nn::find_tensor(out, core_name(in.call.name));
  te::Tensor src = nn::find_tensor(out, data_name(in.call.name));
  if (!out.same_as(final_out)) in.schedule[out].compute_inline();
  te::Stage& t = in.schedule[final_out];
  te::IterVar pos = t.fuse(t.axis(2), t.axis(3));
  auto [co, ci] = t.split(t.axis(1), plan.ocb);
  auto [po, pi] = t.split(pos, plan.pb);
  t.reorder({t.axis(0), po, co, ci, pi});
  t.vectorize(pi);
  te::IterVar tile = nn::fuse_all(t, {t.axis(0), po, co});
  if (work >= nn::kMinParallelWork) t.parallel(tile);
  te::Stage& core_stage = in.schedule[core];
  core_stage.compute_at(t, tile);
  te::IterVar core_root = tile_core(core_stage, conv_tile_intrin(s, plan, core_source(in, out)), plan, false);
  if (src.defined()) {
    te::Stage& src_stage = in.schedule[src];
    if (plan.gather_at_root) {
      const auto leaves = src_stage.leaf_iter_vars();
      te::IterVar planes = src_stage.fuse(leaves[0], leaves[1]);
      if (work >= nn::kMinParallelWork) src_stage.parallel(planes);
    } else {
      src_stage.compute_at(core_stage, core_root);
    }
    te::IterVar col = src_stage.leaf_iter_vars().back();
    if (plan.pb % s.ow == 0) col = src_stage.split(col, s.ow).second;
    src_stage.vectorize(col);
  }
}

// Flat planes (conv2d_depthwise_flat): the output (or its element-wise tail) plane by plane in
// parallel; per plane the padded copy, split into rows so that no element divides, then the
// core with the taps outside and the flat plane as the vector loop.
void schedule_depthwise_flat(const ScheduleInput& in, const Conv2dShape& s, int64_t work) {
  const te::Tensor& out = in.anchor.at(0);
  te::Tensor core = nn::find_tensor(out, core_name(in.call.name));
  te::Tensor src = nn::find_tensor(out, data_name(in.call.name));
  te::Tensor final_out = nn::single_output_like(in, out);
  te::Tensor tail = final_out.defined() ? final_out : out;
  if (!tail.same_as(out)) {
    in.schedule[out].compute_inline();
  } else {
    for (const te::Tensor& o : in.outputs)
      if (!o.same_as(out)) schedule_injective_stage(in.schedule[o], in.target);
  }
  te::Stage& t = in.schedule[tail];
  te::IterVar planes = t.fuse(t.axis(0), t.axis(1));
  if (work >= nn::kMinParallelWork) t.parallel(planes);
  t.vectorize(t.axis(3));
  te::Stage& core_stage = in.schedule[core];
  core_stage.compute_at(t, planes);
  const auto leaves = core_stage.leaf_iter_vars();
  core_stage.reorder({leaves[0], leaves[1], leaves[3], leaves[4], leaves[2]});
  core_stage.vectorize(leaves[2]);
  te::Stage& pad = in.schedule[src];
  pad.compute_at(core_stage, leaves[1]);
  auto [row, col] = pad.split(pad.leaf_iter_vars().back(), depthwise_pitch(s));
  (void)row;
  pad.vectorize(col);
}

void schedule_depthwise(const ScheduleInput& in, const Conv2dShape& s, int64_t work) {
  if (depthwise_flat(s)) return schedule_depthwise_flat(in, s, work);
  const te::Tensor& out = in.anchor.at(0);
  te::Tensor src = nn::find_tensor(out, data_name(in.call.name));
  te::Tensor final_out = nn::single_output_like(in, out);
  te::Stage& dw = in.schedule[out];
  if (final_out.defined() && !final_out.same_as(out)) {
    te::Stage& t = in.schedule[final_out];
    te::IterVar planes = t.fuse(t.axis(0), t.axis(1));
    if (work >= nn::kMinParallelWork) t.parallel(planes);
    t.vectorize(t.axis(3));
    dw.compute_at(t, planes);  // the whole plane: each padded input row is copied once
  } else {
    for (const te::Tensor& o : in.outputs)
      if (!o.same_as(out)) schedule_injective_stage(in.schedule[o], in.target);
  }
  // Window taps outside, the output row inside: every tap is one vector pass over the row.
  const auto leaves = dw.leaf_iter_vars();
  te::IterVar row = leaves[3];
  dw.reorder({leaves[0], leaves[1], leaves[2], leaves[4], leaves[5], row});
  dw.vectorize(row);
  if (dw.attach() == te::Stage::Attach::kRoot) {
    te::IterVar planes = dw.fuse(leaves[0], leaves[1]);
    if (work >= nn::kMinParallelWork) dw.parallel(planes);
  }
  if (src.defined()) {
    te::Stage& pad = in.schedule[src];
    pad.compute_at(dw, dw.leaf_iter_vars()[0]);
    pad.vectorize(pad.leaf_iter_vars().back());
  }
}

// The partial sums with the reduction outside and the lanes vectorised inside; the sum of the
// lanes and the element-wise tail as they come.
void schedule_one_position(const ScheduleInput& in, int64_t work) {
  te::Stage& lanes = in.schedule[nn::find_tensor(in.anchor.at(0), lanes_name(in.call.name))];
  const auto leaves = lanes.leaf_iter_vars();  // batch, channel, lane, reduction
  lanes.reorder({leaves[0], leaves[1], leaves[3], leaves[2]});
  lanes.vectorize(leaves[2]);
  te::IterVar rows = lanes.fuse(leaves[0], leaves[1]);
  if (work >= nn::kMinParallelWork) lanes.parallel(rows);
  for (const te::Tensor& o : in.outputs) {
    te::Stage& stage = in.schedule[o];
    if (stage.attach() == te::Stage::Attach::kRoot && !stage.op()->reduce) schedule_injective_stage(stage, in.target);
  }
}

// The im2col path's zero-padded copy of the data: at the root, rows in parallel.
void schedule_padded_copy(const ScheduleInput& in) {
  te::Tensor padded = nn::find_tensor(in.anchor.at(0), padded_name(in.call.name));
  if (padded.defined()) schedule_injective_stage(in.schedule[padded], in.target);
}

// Operands a caller computed (conv_operand_name): the data is inlined into whatever reads it
// (its padded or gathered copy, or the window expression) unless the micro-kernel reads it
// directly; the weight is computed once per run at root, vectorised.
void schedule_operands(const ScheduleInput& in, const ConvPlan& plan) {
  const te::Tensor& out = in.anchor.at(0);
  te::Tensor data = nn::find_tensor(out, nn::conv_operand_name(in.call.name, "data"));
  te::Tensor weight = nn::find_tensor(out, nn::conv_operand_name(in.call.name, "weight"));
  if (data.defined()) {
    if (plan.path == ConvPath::kDirect)
      schedule_injective_stage(in.schedule[data], in.target);
    else
      in.schedule[data].compute_inline();
  }
  if (weight.defined()) schedule_injective_stage(in.schedule[weight], in.target);
}

void conv2d_schedule_with(const ScheduleInput& in, const Conv2DAttrs& attrs, const nn::ConvOperandTypes& types) {
  const Conv2dShape s = conv2d_shape(in.call, attrs, types);
  const ConvPlan plan = plan_conv2d(s, in.call.target);
  schedule_operands(in, plan);
  const te::Tensor& out = in.anchor.at(0);
  const int64_t work = s.n * s.oc * s.oh * s.ow * s.icg * s.kh * s.kw;
  switch (plan.path) {
    case ConvPath::kGeneric: schedule_reduce(in); return;
    case ConvPath::kDepthwise: schedule_depthwise(in, s, work * nn::kDepthwiseCostPerMac); return;
    case ConvPath::kOnePosition: schedule_one_position(in, work); return;
    case ConvPath::kPaddedRows: schedule_conv_rows(in, s, plan, work); return;
    case ConvPath::kDirect:
    case ConvPath::kIm2col: {
      schedule_padded_copy(in);
      te::Tensor final_out = nn::single_output_like(in, out);
      if (final_out.defined())
        schedule_conv_fused(in, final_out, s, plan, work);
      else
        schedule_conv_rows(in, s, plan, work);
      return;
    }
  }
}

void conv2d_schedule(const ScheduleInput& in, const Conv2DAttrs& attrs) {
  if (auto blocks = conv2d_blocks(attrs.data_layout, attrs.kernel_layout, attrs.out_layout))
    return nn::blocked_conv2d_schedule(in, attrs, *blocks);
  conv2d_schedule_with(in, attrs, {});
}

}  // namespace

namespace nn {

std::string conv_operand_name(const std::string& base, const std::string& which) {
  return base + "_" + which + "_operand";
}

te::Tensor conv2d_operands_compute(const ComputeInput& call, const Conv2DAttrs& attrs, const te::Tensor& data,
                                   const te::Tensor& weight, const ConvOperandTypes& types) {
  return conv2d_tensor(call, attrs, data, weight, types);
}

void conv2d_operands_schedule(const ScheduleInput& in, const Conv2DAttrs& attrs, const ConvOperandTypes& types) {
  conv2d_schedule_with(in, attrs, types);
}

}  // namespace nn

// 2 * output elements * the weight elements one output channel reads, in any layout (blocked
// ones too: the output's channels are its C axis times its c block).
double conv2d_flops(const std::vector<Type>& args, const Type& out_type, const Conv2DAttrs& attrs) {
  const TensorTypeNode* weight = as_tensor(args.at(1));
  const TensorTypeNode* out = as_tensor(out_type);
  const std::string& layout = attrs.out_layout.empty() ? attrs.data_layout : attrs.out_layout;
  const size_t c = layout.find('C');
  if (!weight || !out || c == std::string::npos || c >= out->shape.size()) return 0;
  double channels = static_cast<double>(out->shape[c]);
  if (out->shape.size() == 5) channels *= static_cast<double>(out->shape[4]);
  return channels > 0 ? 2.0 * known_elements(out->shape) * known_elements(weight->shape) / channels : 0;
}

void register_nn_conv_ops(OpRegistry& registry) {
  OpDef& conv2d = registry.add("nn.conv2d")
                      .describe(
                          "2-D convolution of NCHW data with OIHW weights (grouped, strided, dilated, padded), or of "
                          "blocked NCHW{x}c data with OIHW{x}i{y}o weights into NCHW{y}c (groups of whole "
                          "blocks; depthwise: OIHW1i{x}o).")
                      .arg("data")
                      .arg("weight")
                      .attrs<Conv2DAttrs>()
                      .set_relation<Conv2DAttrs>(conv2d_relation)
                      .set_pattern(OpPattern::kOutEWiseFusable);
  conv2d.set_flops<Conv2DAttrs>(conv2d_flops);
  set_compute<Conv2DAttrs>(conv2d, conv2d_compute);
  set_schedule<Conv2DAttrs>(conv2d, conv2d_schedule);

  OpDef& conv2d_transpose =
      registry.add("nn.conv2d_transpose")
          .describe(
              "2-D transposed convolution of NCHW data with IOHW weights (in_channels, out_channels / groups, kh, kw).")
          .arg("data")
          .arg("weight")
          .attrs<Conv2DTransposeAttrs>()
          .set_relation<Conv2DTransposeAttrs>(conv2d_transpose_relation)
          .set_pattern(OpPattern::kOutEWiseFusable);
  set_compute<Conv2DTransposeAttrs>(conv2d_transpose, conv2d_transpose_compute);
  set_schedule(conv2d_transpose, schedule_reduce);

  registry.add("nn.conv3d")
      .describe("3-D convolution of NCDHW data with OIDHW weights (grouped, strided, dilated, padded).")
      .arg("data")
      .arg("weight")
      .attrs<Conv3DAttrs>()
      .set_relation<Conv3DAttrs>(conv3d_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);

  registry.add("nn.conv3d_transpose")
      .describe(
          "3-D transposed convolution of NCDHW data with IODHW weights "
          "(in_channels, out_channels / groups, kd, kh, kw).")
      .arg("data")
      .arg("weight")
      .attrs<Conv3DTransposeAttrs>()
      .set_relation<Conv3DTransposeAttrs>(conv3d_transpose_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);
}

}  // namespace kiln
