// AlterOpLayout: float32 nn.conv2d (groups=1, depthwise, or grouped: see grouped_conv2d) moves
// to TVM's blocked layout NCHW{x}c with OIHW{x}i{y}o weights (OIHW1i{x}o for depthwise), the
// blocks from
// choose_conv2d_layout (kiln/attrs/layout.h: the vector width when the channels divide by it),
// and the blocked layout flows on through the ops whose result does not depend on it:
//   one-argument element-wise ops (nn.relu, clip, sigmoid, ...),
//   broadcasting binary ops whose other operand is a scalar, a per-channel (C,1,1) / (1,C,1,1)
//     tensor (layout_transformed to (C/x,1,1,x); FoldConstant folds it when constant) or a
//     tensor of the same NCHW shape (layout_transformed too: the residual add),
//   nn.bias_add (an add of the bias laid out as (C/x,1,1,x)),
//   concatenate along the channels when every input's channel count divides by the block,
//   the 2-D pools (max, avg, global max, global avg), which take layout="NCHW{x}c",
//   image.resize2d (layout="NCHW{x}c": U-Net's upsampling),
//   strided_slice of whole channel blocks (CombineParallelConv2D's branches of a joined conv),
//   nn.pad of the spatial axes only (Inception's pad before a count_include_pad average pool),
//     which pads the blocked value with [0, 0] for the block axis,
// and transpose NHWC -> NCHW (channels whole blocks) gives a blocked value too: ConvNeXt's
// channels-last layer norms and TensorFlow exports' NHWC inputs feed blocked convolutions.
// Every other consumer reads the value through one layout_transform back to NCHW, made once
// per value, so a transform appears only where the layout changes; a layout_transform that
// undoes the one it reads is dropped. The weight transforms are calls on constants, which
// the FoldConstant after this pass evaluates at build time.
//
// Channel counts above the block that it does not divide (MobileNet's 24 and 40, RegNet's 440)
// are padded to whole blocks: nn.pad of the channels before the layout_transform in, zero
// weights for the extra channels, a strided_slice of the real channels after the transform
// out. The extra lanes only flow through ops that keep them finite (keeps_padding_finite), so
// the next convolution's zero weights cancel them.
//
// Cost rule: each boundary is a full copy of an activation, and a graph whose blocked convs
// keep meeting ops that need NCHW (convolutions whose channels the block does not divide,
// grouped ones) pays more in copies than the blocked convs save. A transform that reads a
// transpose or only feeds transposes costs nothing: it fuses into the transpose's copy. A
// function is rewritten only when it has at most max(2, blocked convs / 4) other activation
// transforms; the option force=1 rewrites it anyway, depthwise=0 keeps depthwise convolutions
// NCHW, and narrow_inputs=0 keeps convolutions whose input channels do not fill a vector NCHW
// (see conv_blocks). A function whose rewrite the rule rejects is tried again without padding,
// then without blocked values from transposes; pad_channels=0 never pads, transposes=0 never
// takes a transpose's blocked value.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "kiln/attrs/image.h"
#include "kiln/attrs/indexing.h"
#include "kiln/attrs/layout.h"
#include "kiln/attrs/nn.h"
#include "kiln/attrs/pad.h"
#include "kiln/attrs/transform.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"
#include "transform/expr_match.h"

namespace kiln {

namespace {

bool is_pool2d(const std::string& op) {
  return op == "nn.max_pool2d" || op == "nn.avg_pool2d" || op == "nn.global_max_pool2d" || op == "nn.global_avg_pool2d";
}

std::string string_attr(const Attrs& attrs, const std::string& name, const std::string& fallback) {
  return attrs.has(name) ? attrs.get_string(name) : fallback;
}

bool is_static(const TensorTypeNode& t) {
  return std::all_of(t.shape.begin(), t.shape.end(), [](int64_t d) { return d >= 0; });
}

const CallNode* op_call(const Expr& e) {
  const auto* call = as<CallNode>(e);
  return call && call->op() ? call : nullptr;
}

// NCHW{block}c, with block 1 spelled out: NCHW1c is the 5-D form NCHW data takes to feed a
// blocked convolution (the same bytes as NCHW).
std::string data_layout_of(int64_t block) { return block == 1 ? "NCHW1c" : Layout::nchw(block); }

// Whether `channels` go blocked: whole blocks, or padded to them.
bool fills_blocks(int64_t channels, int64_t lanes, const AlterOpLayoutOptions& options) {
  return channels % lanes == 0 || (options.pad_channels && channels > lanes);
}

// The blocks of a float32 convolution: choose_conv2d_layout's, or, for a convolution whose output
// channels fill vectors but whose input channels do not (the 3-channel stem, MobileNet's and
// EfficientNet's 24- and 40-channel bottlenecks expanding), NCHW1c input and blocked output:
// it reads the narrow NCHW tensor as it is and writes the wide one blocked, where an NCHW
// convolution would write the wide tensor NCHW and a layout_transform copy it into blocks.
//
// With pad_channels, channel counts above the vector width that it does not divide (24, 40, 88,
// 440) are blocked too, padded up to whole blocks (as ONNX Runtime's NCHWc convolutions do): the
// weights' extra rows and columns are zeros, so the extra lanes of an input never reach a real
// channel, and the extra lanes of an output are dropped where the value leaves the blocked
// layout (see LayoutAlterer::padded).
//
// Only for groups == 1 or depthwise (groups == channels): other grouped ones are grouped_conv2d's.
ConvLayoutChoice conv_blocks(int lanes, int64_t in_channels, int64_t out_channels, int64_t groups,
                             const AlterOpLayoutOptions& options) {
  ConvLayoutChoice choice = choose_conv2d_layout(lanes, in_channels, out_channels, groups);
  if (choice.blocked() || lanes <= 1 || !fills_blocks(out_channels, lanes, options)) return choice;
  const bool depthwise = groups != 1;
  if (fills_blocks(in_channels, lanes, options)) return {.in_block = lanes, .out_block = lanes, .depthwise = depthwise};
  if (!options.narrow_inputs || depthwise) return choice;
  return {.in_block = 1, .out_block = lanes};
}

int64_t round_up(int64_t value, int64_t block) { return (value + block - 1) / block * block; }

// The extra channels that pad `channels` to whole blocks.
int64_t channel_padding(int64_t channels, int64_t block) { return round_up(channels, block) - channels; }

// `value` with zeros appended to axis `axis` up to `extent`.
Expr pad_axis(const Expr& value, size_t rank, size_t axis, int64_t extra) {
  if (extra == 0) return value;
  std::vector<std::pair<int64_t, int64_t>> pairs(rank, {0, 0});
  pairs[axis].second = extra;
  PadAttrs attrs;
  attrs.pad_width = PadAttrs::width_of(pairs);
  return call_op("nn.pad", {value, make_constant(NDArray::scalar(DType::kFloat32, 0.0))}, attrs);
}

// The first `channels` channels of an NCHW value.
Expr first_channels(const Expr& value, int64_t channels) {
  Attrs attrs{{"begin", std::vector<int64_t>{0, 0}},
              {"end", std::vector<int64_t>{-1, channels}},
              {"strides", std::vector<int64_t>{1, 1}},
              {"slice_mode", "size"}};
  return call_op("strided_slice", {value}, std::move(attrs));
}

// The weights (O, g, KH, KW) of a convolution with groups of g input and g output channels, g
// dividing `block`, as those of a convolution whose groups are whole blocks: (O rounded up to
// blocks, block, KH, KW), output channel o reading the inputs of its own group within its
// block, zeros elsewhere (block-diagonal) and in the padding rows.
NDArray block_diagonal_weights(const NDArray& weight, int64_t block) {
  const Shape& w = weight.shape();
  const int64_t group_width = w[1], taps = w[2] * w[3];
  NDArray out = NDArray::empty({round_up(w[0], block), block, w[2], w[3]}, DType::kFloat32);
  const float* src = weight.data<float>();
  float* dst = out.data<float>();
  for (int64_t o = 0; o < w[0]; ++o) {
    const int64_t first_input = o / group_width * group_width - o / block * block;
    std::copy_n(src + o * group_width * taps, group_width * taps, dst + (o * block + first_input) * taps);
  }
  return out;
}

// The element-wise ops a padded blocked value flows through: each maps finite lanes to finite
// lanes, so the extra lanes (zeros, then whatever these make of them) stay finite and the zero
// weights of the next convolution cancel them. log, sqrt, a divide by a tensor, ... could make
// them inf or NaN, and NaN * 0 is NaN: those read the value in NCHW.
bool keeps_padding_finite(const std::string& op) {
  static const std::set<std::string> ops = {"nn.relu",  "nn.leaky_relu", "clip",   "sigmoid", "tanh",
                                            "erf",      "negative",      "abs",    "add",     "subtract",
                                            "multiply", "maximum",       "minimum"};
  return ops.count(op) > 0;
}

Expr layout_transform(const Expr& data, const std::string& src, const std::string& dst) {
  LayoutTransformAttrs attrs;
  attrs.src_layout = src;
  attrs.dst_layout = dst;
  return call_op("layout_transform", {data}, attrs);
}

class LayoutAlterer : public ExprRewriter {
 public:
  LayoutAlterer(int vector_lanes, const AlterOpLayoutOptions& options) : lanes_(vector_lanes), options_(options) {}
  int64_t blocked_convs = 0;

 protected:
  Expr post(const Expr& original, const Expr& rebuilt) override {
    const CallNode* call = op_call(original);
    if (!call) return rebuilt;
    const std::string& name = call->op()->name;
    Expr altered;
    if (name == "nn.conv2d")
      altered = conv2d(original, *call);
    else if (name == "layout_transform")
      altered = cancelled_transform(*call);
    else if (name == "nn.bias_add")
      altered = bias_add(original, *call);
    else if (name == "concatenate")
      altered = concatenate(original, *call);
    else if (is_pool2d(name))
      altered = pool(original, *call);
    else if (name == "nn.pad")
      altered = pad(original, *call);
    else if (name == "image.resize2d")
      altered = resize(original, *call);
    else if (name == "strided_slice")
      altered = channel_slice(original, *call);
    else if (name == "transpose")
      altered = channels_first(original, *call);
    else if (call->op()->pattern == OpPattern::kElemwise && call->args.size() == 1)
      altered = unary(original, *call);
    else if (call->op()->pattern <= OpPattern::kBroadcast && call->args.size() == 2 && call->op()->attr_specs.empty())
      altered = binary(original, *call);  // no attributes: nothing names an axis (nn.prelu does)
    return altered ? altered : rebuilt;
  }

 private:
  struct Blocked {
    Expr expr;
    int64_t block;
  };

  const Blocked* blocked(const Expr& original) const {
    auto it = blocked_.find(original.get());
    return it == blocked_.end() ? nullptr : &it->second;
  }

  // The channels of `original` (an NCHW tensor) that do not fill whole blocks: its blocked form
  // has that many extra lanes at the end of its last block.
  static int64_t padding(const Expr& original, int64_t block) {
    return channel_padding(tensor_of(original)->shape[1], block);
  }
  static bool padded(const Expr& original, int64_t block) { return padding(original, block) > 0; }

  // The blocked value stands for `original`; the rewritten graph reads it in NCHW through one
  // layout_transform (and a slice that drops the padding), which stays only if some consumer is
  // not layout-aware.
  Expr record(const Expr& original, Expr value, int64_t block) {
    Expr nchw = layout_transform(value, Layout::nchw(block), "NCHW");
    if (padded(original, block)) nchw = first_channels(nchw, tensor_of(original)->shape[1]);
    blocked_[original.get()] = {std::move(value), block};
    return nchw;
  }

  // The value of `original` (an NCHW tensor) in NCHW{block}c, zero-padded to whole blocks, made
  // once per value and block.
  Expr in_block(const Expr& original, int64_t block) {
    const Blocked* b = blocked(original);
    if (b && b->block == block) return b->expr;
    auto key = std::make_pair(original.get(), block);
    if (auto it = conversions_.find(key); it != conversions_.end()) return it->second;
    Expr converted = b && !padded(original, b->block)
                         ? layout_transform(b->expr, Layout::nchw(b->block), data_layout_of(block))
                         : layout_transform(pad_axis(rewritten(original), 4, 1, padding(original, block)), "NCHW",
                                            data_layout_of(block));
    return conversions_[key] = converted;
  }

  Expr conv2d(const Expr& original, const CallNode& call) {
    const auto attrs = attrs_from<Conv2DAttrs>(call.attrs, "nn.conv2d");
    const TensorTypeNode* data = tensor_of(call.args[0]);
    const TensorTypeNode* weight = tensor_of(call.args[1]);
    const bool plain = attrs.data_layout == "NCHW" && attrs.kernel_layout == "OIHW" &&
                       (attrs.out_layout.empty() || attrs.out_layout == "NCHW") &&
                       (attrs.out_dtype.empty() || attrs.out_dtype == "float32");
    if (!plain || !data || !weight || data->dtype != DType::kFloat32 || !is_static(*data) || !is_static(*weight))
      return nullptr;
    const int64_t groups = attrs.groups;
    if (groups != 1 && (groups != data->shape[1] || groups != weight->shape[0]))
      return grouped_conv2d(original, call, *data, *weight);
    const ConvLayoutChoice choice = conv_blocks(lanes_, data->shape[1], weight->shape[0], groups, options_);
    if (!choice.blocked() || (choice.depthwise && !options_.depthwise)) return nullptr;
    std::vector<std::pair<std::string, AttrValue>> padded_attrs;
    // Padded channels: zero weights for the extra outputs, and for the extra inputs unless
    // depthwise (one input per output there).
    const int64_t out_padding = padding(original, choice.out_block);
    Expr packed_weight = pad_axis(rewritten(call.args[1]), 4, 0, out_padding);
    if (!choice.depthwise) packed_weight = pad_axis(packed_weight, 4, 1, padding(call.args[0], choice.in_block));
    if (out_padding) {
      const int64_t channels = weight->shape[0] + out_padding;
      padded_attrs.emplace_back("channels", AttrValue(channels));
      if (choice.depthwise) padded_attrs.emplace_back("groups", AttrValue(channels));
    }
    return blocked_conv2d(original, call, choice, packed_weight, padded_attrs);
  }

  // The blocked convolution of `choice` on `call`'s data and `weight` (OIHW, padded as the
  // blocks need): the call's attributes as written (IR text stays as short), the layouts
  // replaced, then `changed` set.
  Expr blocked_conv2d(const Expr& original, const CallNode& call, const ConvLayoutChoice& choice, const Expr& weight,
                      const std::vector<std::pair<std::string, AttrValue>>& changed) {
    Attrs attrs = call.attrs;
    attrs.set("data_layout", AttrValue(data_layout_of(choice.in_block)));
    attrs.set("kernel_layout", AttrValue(choice.kernel_layout()));
    attrs.set("out_layout", AttrValue(choice.out_layout()));
    for (const auto& [name, value] : changed) attrs.set(name, value);
    ++blocked_convs;
    Expr conv =
        call_op("nn.conv2d",
                {in_block(call.args[0], choice.in_block), layout_transform(weight, "OIHW", choice.kernel_layout())},
                std::move(attrs));
    return record(original, conv, choice.out_block);
  }

  // A grouped (not depthwise) convolution goes blocked when each group is whole blocks (64
  // channels a group), or, with g inputs and g outputs a group and g dividing the block (RegNet's
  // 8), on block-diagonal weights as a convolution whose groups are single blocks: 16 / g times
  // the multiply-adds, but at the blocked tile's rate instead of per-group NCHW loops (RegNetY's
  // grouped 3x3 convolutions ran at 5-10% of the peak). Needs constant weights, for the
  // expansion happens here.
  Expr grouped_conv2d(const Expr& original, const CallNode& call, const TensorTypeNode& data,
                      const TensorTypeNode& weight) {
    const int64_t block = lanes_, channels = data.shape[1], outputs = weight.shape[0];
    if (block <= 1) return nullptr;
    const int64_t groups = attrs_from<Conv2DAttrs>(call.attrs, "nn.conv2d").groups;
    const int64_t group_inputs = channels / groups, group_outputs = outputs / groups;
    Expr packed_weight = rewritten(call.args[1]);
    int64_t blocked_groups = groups;
    if (group_inputs % block != 0 || group_outputs % block != 0) {
      const auto* constant = as<ConstantNode>(packed_weight);
      const bool fits = group_inputs == group_outputs && block % group_inputs == 0 && 2 * group_inputs >= block &&
                        fills_blocks(channels, block, options_);
      if (!fits || !constant || constant->data.dtype() != DType::kFloat32) return nullptr;
      packed_weight = make_constant(block_diagonal_weights(constant->data, block));
      blocked_groups = round_up(channels, block) / block;
    }
    return blocked_conv2d(original, call, {.in_block = block, .out_block = block}, packed_weight,
                          {{"groups", AttrValue(blocked_groups)}, {"channels", AttrValue(round_up(outputs, block))}});
  }

  // layout_transform(layout_transform(x, A, B), B, A) is x; NCHW -> NCHW{x}c of a value
  // already blocked is that value.
  Expr cancelled_transform(const CallNode& call) {
    const auto attrs = attrs_from<LayoutTransformAttrs>(call.attrs, "layout_transform");
    if (const CallNode* inner = op_call(call.args[0]); inner && inner->op()->name == "layout_transform") {
      const auto inner_attrs = attrs_from<LayoutTransformAttrs>(inner->attrs, "layout_transform");
      if (inner_attrs.src_layout == attrs.dst_layout && inner_attrs.dst_layout == attrs.src_layout)
        return rewritten(inner->args[0]);
    }
    const TensorTypeNode* data = tensor_of(call.args[0]);
    if (attrs.src_layout != "NCHW" || !data || data->ndim() != 4) return nullptr;
    const Layout dst = Layout::parse(attrs.dst_layout);
    if (attrs.dst_layout != Layout::nchw(dst.block_of('C')) || dst.block_of('C') <= 1) return nullptr;
    return blocked(call.args[0]) ? in_block(call.args[0], dst.block_of('C')) : nullptr;
  }

  Expr unary(const Expr& original, const CallNode& call) {
    const Blocked* b = blocked(call.args[0]);
    const TensorTypeNode* in = tensor_of(call.args[0]);
    const TensorTypeNode* out = tensor_of(original);
    if (!b || !in || !out || out->shape != in->shape) return nullptr;
    if (padded(original, b->block) && !keeps_padding_finite(call.op()->name)) return nullptr;
    return record(original, make_call(call.callee, {b->expr}, call.attrs), b->block);
  }

  // `other` (broadcast against an NCHW tensor of shape `shape`) laid out to broadcast against
  // its NCHW{block}c form, or nullptr when it cannot be.
  Expr broadcast_operand(const Expr& other, const Shape& shape, int64_t block) {
    const TensorTypeNode* t = tensor_of(other);
    if (!t || !is_static(*t)) return nullptr;
    if (t->shape == shape) return in_block(other, block);
    const int64_t ones = std::count(t->shape.begin(), t->shape.end(), int64_t{1});
    if (ones == t->ndim()) return rewritten(other);
    const int64_t channels = shape[1];
    if (t->ndim() == 3 && t->shape == Shape{channels, 1, 1})
      return layout_transform(pad_axis(rewritten(other), 3, 0, channel_padding(channels, block)), "CHW",
                              cat("CHW", block, "c"));
    // A squeeze-excite scale is often blocked already (its convolution's output): no round trip.
    if (t->ndim() == 4 && t->shape == Shape{1, channels, 1, 1}) return in_block(other, block);
    return nullptr;
  }

  Expr binary(const Expr& original, const CallNode& call) {
    const TensorTypeNode* out = tensor_of(original);
    if (!out || out->ndim() != 4) return nullptr;
    for (size_t side = 0; side < 2; ++side) {
      const Blocked* b = blocked(call.args[side]);
      const TensorTypeNode* t = tensor_of(call.args[side]);
      if (!b || !t || t->shape != out->shape) continue;
      const int64_t block = b->block;
      if (padded(original, block) && !keeps_padding_finite(call.op()->name)) return nullptr;
      Expr blocked_side = b->expr;
      Expr other = broadcast_operand(call.args[1 - side], out->shape, block);
      if (!other) return nullptr;
      std::vector<Expr> args(2);
      args[side] = blocked_side;
      args[1 - side] = other;
      return record(original, make_call(call.callee, std::move(args), call.attrs), block);
    }
    return nullptr;
  }

  Expr bias_add(const Expr& original, const CallNode& call) {
    const Blocked* b = blocked(call.args[0]);
    const TensorTypeNode* data = tensor_of(call.args[0]);
    const TensorTypeNode* bias = tensor_of(call.args[1]);
    const auto attrs = attrs_from<BiasAddAttrs>(call.attrs, "nn.bias_add");
    if (!b || !data || !bias || data->ndim() != 4 || bias->ndim() != 1 || (attrs.axis != 1 && attrs.axis != -3))
      return nullptr;
    const int64_t block = b->block;
    Expr bias_chw = call_op("expand_dims", {rewritten(call.args[1])}, ExpandDimsAttrs{.axis = 1, .num_newaxis = 2});
    Expr bias_blocked =
        layout_transform(pad_axis(bias_chw, 3, 0, padding(original, block)), "CHW", cat("CHW", block, "c"));
    return record(original, call_op("add", {b->expr, bias_blocked}), block);
  }

  Expr concatenate(const Expr& original, const CallNode& call) {
    const auto attrs = attrs_from<ConcatenateAttrs>(call.attrs, "concatenate");
    const auto* tuple = as<TupleNode>(call.args[0]);
    const TensorTypeNode* out = tensor_of(original);
    if (!tuple || !out || out->ndim() != 4 || (attrs.axis != 1 && attrs.axis != -3)) return nullptr;
    int64_t block = 0;
    for (const Expr& field : tuple->fields)
      if (const Blocked* b = blocked(field); b && !block) block = b->block;
    if (!block) return nullptr;
    std::vector<Expr> fields;
    for (const Expr& field : tuple->fields) {
      const TensorTypeNode* t = tensor_of(field);
      if (!t || t->ndim() != 4 || t->shape[1] < 0 || t->shape[1] % block != 0) return nullptr;
      fields.push_back(in_block(field, block));
    }
    ConcatenateAttrs blocked_attrs;
    blocked_attrs.axis = 1;
    return record(original, call_op("concatenate", {make_tuple(std::move(fields))}, blocked_attrs), block);
  }

  // A pool reads each channel on its own, so it pools the blocked value as it is.
  Expr pool(const Expr& original, const CallNode& call) {
    const Blocked* b = blocked(call.args[0]);
    const TensorTypeNode* data = tensor_of(call.args[0]);
    const std::string out_layout = string_attr(call.attrs, "out_layout", "");
    if (!b || !data || data->ndim() != 4 || string_attr(call.attrs, "layout", "NCHW") != "NCHW" ||
        (!out_layout.empty() && out_layout != "NCHW"))
      return nullptr;
    Attrs blocked_attrs = call.attrs;
    blocked_attrs.set("layout", AttrValue(Layout::nchw(b->block)));
    if (!out_layout.empty()) blocked_attrs.set("out_layout", AttrValue(Layout::nchw(b->block)));
    return record(original, make_call(call.callee, {b->expr}, blocked_attrs), b->block);
  }

  // Resizing reads each channel on its own, so it resizes the blocked value as it is.
  Expr resize(const Expr& original, const CallNode& call) {
    const Blocked* b = blocked(call.args[0]);
    const TensorTypeNode* data = tensor_of(call.args[0]);
    if (!b || !data || data->ndim() != 4 || attrs_from<Resize2DAttrs>(call.attrs, "image.resize2d").layout != "NCHW")
      return nullptr;
    Attrs blocked_attrs = call.attrs;
    blocked_attrs.set("layout", AttrValue(Layout::nchw(b->block)));
    return record(original, make_call(call.callee, {b->expr}, blocked_attrs), b->block);
  }

  // A unit-stride slice of whole channel blocks, the other axes kept whole, slices the blocks.
  Expr channel_slice(const Expr& original, const CallNode& call) {
    const Blocked* b = blocked(call.args[0]);
    const TensorTypeNode* data = tensor_of(call.args[0]);
    const TensorTypeNode* out = tensor_of(original);
    if (!b || !data || !out || data->ndim() != 4 || out->ndim() != 4 || !is_static(*data) || !is_static(*out))
      return nullptr;
    for (int axis : {0, 2, 3})
      if (out->shape[axis] != data->shape[axis]) return nullptr;
    const auto attrs = attrs_from<StridedSliceAttrs>(call.attrs, "strided_slice");
    if (attrs.strides && std::any_of(attrs.strides->begin(), attrs.strides->end(), [](int64_t s) { return s != 1; }))
      return nullptr;
    int64_t begin = 0;
    for (size_t i = 0; i < attrs.begin.size(); ++i) {
      const int64_t axis = attrs.axes ? (*attrs.axes).at(i) : static_cast<int64_t>(i);
      if (axis == 1 || axis == -3) begin = attrs.begin[i] < 0 ? attrs.begin[i] + data->shape[1] : attrs.begin[i];
    }
    const int64_t block = b->block, channels = out->shape[1];
    if (channels <= 0 || begin % block != 0 || channels % block != 0) return nullptr;
    const Attrs blocked_attrs{{"begin", std::vector<int64_t>{0, begin / block}},
                              {"end", std::vector<int64_t>{-1, channels / block}},
                              {"strides", std::vector<int64_t>{1, 1}},
                              {"slice_mode", "size"}};
    return record(original, call_op("strided_slice", {b->expr}, blocked_attrs), block);
  }

  // NHWC -> NCHW (a TensorFlow export's input, ConvNeXt's return from its channels-last layer
  // norms) also gives the blocked value, NHWC -> NCHW{x}c directly: one copy, as the transpose
  // was, with whole vectors of channels. Consumers that need NCHW still read the transpose.
  Expr channels_first(const Expr& original, const CallNode& call) {
    const TensorTypeNode* out = tensor_of(original);
    const auto attrs = attrs_from<TransposeAttrs>(call.attrs, "transpose");
    if (!options_.transposes || !out || out->ndim() != 4 || !is_static(*out) || !attrs.axes ||
        *attrs.axes != std::vector<int64_t>{0, 3, 1, 2} || lanes_ <= 1 || out->shape[1] % lanes_ != 0)
      return nullptr;
    Expr nchw = make_call(call.callee, {rewritten(call.args[0])}, call.attrs);
    blocked_[original.get()] = {layout_transform(nchw, "NCHW", Layout::nchw(lanes_)), lanes_};
    return nchw;
  }

  // Padding H and W pads every channel alike, in any mode.
  Expr pad(const Expr& original, const CallNode& call) {
    const Blocked* b = blocked(call.args[0]);
    const TensorTypeNode* data = tensor_of(call.args[0]);
    if (!b || !data || data->ndim() != 4) return nullptr;
    std::vector<std::pair<int64_t, int64_t>> pairs = attrs_from<PadAttrs>(call.attrs, "nn.pad").pairs();
    const std::pair<int64_t, int64_t> none{0, 0};
    if (pairs.size() != 4 || pairs[0] != none || pairs[1] != none) return nullptr;
    pairs.push_back(none);
    Attrs blocked_attrs = call.attrs;
    blocked_attrs.set("pad_width", PadAttrs::width_of(pairs));
    return record(original, make_call(call.callee, {b->expr, rewritten(call.args[1])}, blocked_attrs), b->block);
  }

  int lanes_;
  AlterOpLayoutOptions options_;
  std::unordered_map<const ExprNode*, Blocked> blocked_;
  std::map<std::pair<const ExprNode*, int64_t>, Expr> conversions_;
};

// The layout_transforms of activations (NCHW <-> NCHW{x}c of more than one position) in `fn`,
// but for those that read a transpose or only feed transposes: those fuse into the transpose,
// which copies the activation anyway.
int64_t activation_transforms(const Function& fn) {
  const std::unordered_map<const ExprNode*, size_t> uses = use_counts(fn);
  std::unordered_map<const ExprNode*, size_t> transposed;
  post_order_visit(fn, [&](const Expr& e) {
    if (const CallNode* transpose = call_of(e, "transpose")) ++transposed[transpose->args[0].get()];
  });
  int64_t count = 0;
  post_order_visit(fn, [&](const Expr& e) {
    const CallNode* call = op_call(e);
    if (!call || call->op()->name != "layout_transform") return;
    if (call_of(call->args[0], "transpose") || transposed[e.get()] == uses.at(e.get())) return;
    const auto attrs = attrs_from<LayoutTransformAttrs>(call->attrs, "layout_transform");
    const TensorTypeNode* data = tensor_of(call->args[0]);
    const bool nchw = attrs.src_layout.starts_with("NCHW") && attrs.dst_layout.starts_with("NCHW");
    if (nchw && data && data->ndim() >= 4 && data->shape[2] * data->shape[3] != 1) ++count;
  });
  return count;
}

}  // namespace

IRModule alter_op_layout_pass(const IRModule& mod, const AlterOpLayoutOptions& options) {
  const int lanes = options.vector_lanes > 0 ? options.vector_lanes : host_vector_lanes();
  // The function rewritten, or nullopt when the cost rule rejects the rewrite.
  auto rewrite = [&](const Function& fn, const AlterOpLayoutOptions& o) -> std::optional<Function> {
    LayoutAlterer alterer(lanes, o);
    Function altered = as_function(alterer.rewrite(fn));
    if (o.force || alterer.blocked_convs == 0) return altered;
    infer_untyped_nodes(altered);
    const int64_t boundaries = activation_transforms(altered);
    if (boundaries > std::max<int64_t>(2, alterer.blocked_convs / 4)) return std::nullopt;
    return altered;
  };
  // Padded channels bring more convolutions into the blocked layout, and with them the
  // boundaries of ops that need NCHW (ShuffleNet's channel shuffles); blocked values from
  // transposes bring boundaries where their element-wise consumers meet an op that needs NCHW.
  // When the rule rejects a rewrite, the rewrites without them, in that order, may still pay.
  std::vector<AlterOpLayoutOptions> attempts = {options};
  if (options.pad_channels) attempts.push_back(options), attempts.back().pad_channels = false;
  if (options.transposes)
    for (size_t i = 0, n = attempts.size(); i < n; ++i)
      attempts.push_back(attempts[i]), attempts.back().transposes = false;
  IRModule out = map_functions(infer_types(mod), [&](const Function& fn) {
    for (const AlterOpLayoutOptions& o : attempts)
      if (std::optional<Function> altered = rewrite(fn, o)) return *altered;
    return fn;
  });
  return fold_constant_pass(infer_types(out));
}

}  // namespace kiln
