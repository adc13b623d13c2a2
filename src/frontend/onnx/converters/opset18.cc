// Converters of the operators ONNX added in opsets 18 to 20: Mish, Gelu, GroupNormalization
// (18 and 21), BitwiseAnd / BitwiseOr / BitwiseXor / BitwiseNot, CenterCropPad and Col2Im.
//
// GroupNormalization-18 takes scale and bias per group; nn.group_norm takes them per channel
// (opset 21's form), so the opset 18 converter repeats each group's value over the group's
// channels with a take. stash_type (opset 21) asks for the precision of the statistics; kiln
// sums them in float64 whatever it asks for, which is at least as precise.
// CenterCropPad is one nn.pad whose amounts are negative on the axes that are cropped.
#include <algorithm>
#include <string>
#include <vector>

#include "frontend/onnx/converters/converter_util.h"
#include "kiln/attrs/activation.h"
#include "kiln/attrs/col2im.h"
#include "kiln/attrs/group_norm.h"
#include "kiln/attrs/indexing.h"
#include "kiln/attrs/pad.h"

namespace kiln::frontend {

namespace {

// Converters below read their attributes one by one; anything else the node carries is an
// error rather than silently ignored.
void require_known_attrs(const ConvertContext& c, std::initializer_list<std::string> known) {
  for (const auto& [name, value] : c.attrs().all()) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::vector<std::string> names(known);
    throw std::move(Error(cat("unknown attribute '", name, "' of ", c.op_type(), "-", c.opset()))
                        .expected(names.empty() ? std::string("no attributes") : "one of " + join(names), name));
  }
}

ConvertResult convert_mish(ConvertContext& c) {
  require_known_attrs(c, {});
  return call_op("nn.mish", {c.input(0)});
}

ConvertResult convert_gelu(ConvertContext& c) {
  require_known_attrs(c, {"approximate"});
  GeluAttrs attrs;
  attrs.approximate = c.attrs().get_string("approximate", "none");
  return call_op("nn.gelu", {c.input(0)}, attrs);
}

GroupNormAttrs group_norm_attrs(const ConvertContext& c) {
  check(c.attrs().has("num_groups"), "GroupNormalization needs the attribute 'num_groups'");
  GroupNormAttrs attrs;
  attrs.num_groups = c.attrs().get_int("num_groups");
  attrs.epsilon = c.attrs().get_float("epsilon", 1e-5);
  attrs.validate();
  return attrs;
}

// The channel extent of X, which the per-group parameters are spread over.
int64_t group_norm_channels(const ConvertContext& c, int64_t groups) {
  check(c.input_rank(0) >= 2, "input X must be (N, C, ...), found shape ", shape_str(c.input_shape(0)));
  const int64_t channels = c.input_shape(0)[1];
  if (channels < 0)
    throw Error(cat("the channel extent of X ", shape_str(c.input_shape(0)),
                    " must be known at import to spread the per-group scale and bias over the channels"));
  if (channels % groups != 0)
    throw std::move(Error(cat("attribute 'num_groups' must divide the ", channels, " channels of X"))
                        .expected(cat("a divisor of ", channels), cat(groups)));
  return channels;
}

// Value g of a (num_groups,) tensor for each of the channels of group g.
Expr per_channel(const Expr& per_group, int64_t channels, int64_t groups) {
  std::vector<int64_t> group_of_channel;
  for (int64_t ch = 0; ch < channels; ++ch) group_of_channel.push_back(ch / (channels / groups));
  TakeAttrs take;
  take.axis = 0;
  return call_op("take", {per_group, ints_constant(group_of_channel)}, take);
}

ConvertResult convert_group_norm_v18(ConvertContext& c) {
  require_known_attrs(c, {"epsilon", "num_groups"});
  const GroupNormAttrs attrs = group_norm_attrs(c);
  for (size_t i : {1, 2}) {
    const Shape& shape = c.input_shape(i);
    if (shape.size() != 1 || (shape[0] >= 0 && shape[0] != attrs.num_groups))
      throw std::move(Error(cat("input ", i, " (", i == 1 ? "scale" : "bias",
                                ") of GroupNormalization-18 must have one value per group"))
                          .expected(shape_str({attrs.num_groups}), shape_str(shape)));
  }
  const int64_t channels = group_norm_channels(c, attrs.num_groups);
  return call_op("nn.group_norm",
                 {c.input(0), per_channel(c.input(1), channels, attrs.num_groups),
                  per_channel(c.input(2), channels, attrs.num_groups)},
                 attrs);
}

// stash_type: ONNX's float element types (float32, float16, float64, bfloat16).
ConvertResult convert_group_norm_v21(ConvertContext& c) {
  require_known_attrs(c, {"epsilon", "num_groups", "stash_type"});
  const int64_t stash = c.attrs().get_int("stash_type", 1);
  if (stash != 1 && stash != 10 && stash != 11 && stash != 16)
    throw std::move(Error("attribute 'stash_type' must be a float element type")
                        .expected("1 (float32), 10 (float16), 11 (float64) or 16 (bfloat16)", cat(stash)));
  return call_op("nn.group_norm", {c.input(0), c.input(1), c.input(2)}, group_norm_attrs(c));
}

// The (begin, end) amounts of nn.pad that crop or pad `extent` to `target` around the
// centre: a crop starts at (extent - target) / 2, a pad adds (target - extent) / 2 before,
// the odd element going to the end either way (as ONNX's function body).
std::pair<int64_t, int64_t> centre_amounts(int64_t extent, int64_t target) {
  if (target <= extent) {
    const int64_t begin = (extent - target) / 2;
    return {-begin, -(extent - target - begin)};
  }
  const int64_t begin = (target - extent) / 2;
  return {begin, target - extent - begin};
}

ConvertResult convert_center_crop_pad(ConvertContext& c) {
  require_known_attrs(c, {"axes"});
  const Shape& shape = c.input_shape(0);
  const int64_t rank = c.input_rank(0);
  std::vector<int64_t> axes(static_cast<size_t>(rank));
  for (int64_t a = 0; a < rank; ++a) axes[static_cast<size_t>(a)] = a;
  if (c.attrs().has("axes")) axes = normalize_onnx_axes(c.attrs().get_ints("axes"), rank, "axes");
  if (!c.constant_input(1))
    throw Error(
        "input 1 (shape) must be known at import time (an initializer, a Constant, or computed from static "
        "shapes): kiln specialises every shape at import, so a crop or pad to a run-time shape is not supported");
  const std::vector<int64_t> target = c.require_ints_input(1, "shape");
  if (target.size() != axes.size())
    throw std::move(Error("input 1 (shape) must have one extent per axis in 'axes'")
                        .expected(cat(axes.size(), " values"), cat(target.size(), " values")));
  std::vector<std::pair<int64_t, int64_t>> pairs(static_cast<size_t>(rank), {0, 0});
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t extent = shape[static_cast<size_t>(axes[k])];
    check(extent >= 0, "axis ", axes[k], " of input_data ", shape_str(shape),
          " must have a known extent at import (give it with --shape)");
    check(target[k] >= 0, "input 1 (shape) has the negative extent ", target[k], " for axis ", axes[k]);
    pairs[static_cast<size_t>(axes[k])] = centre_amounts(extent, target[k]);
  }
  PadAttrs attrs;
  attrs.pad_width = PadAttrs::width_of(pairs);
  return call_op("nn.pad", {c.input(0), scalar_constant(c.input_dtype(0), 0)}, attrs);
}

ConvertResult convert_col2im(ConvertContext& c) {
  require_known_attrs(c, {"dilations", "pads", "strides"});
  Col2ImAttrs attrs;
  attrs.image_shape = c.require_ints_input(1, "image_shape");
  attrs.block_shape = c.require_ints_input(2, "block_shape");
  const std::vector<int64_t> ones(attrs.image_shape.size(), 1);
  attrs.strides = c.attrs().get_ints("strides", ones);
  attrs.dilation = c.attrs().get_ints("dilations", ones);
  attrs.padding = c.attrs().get_ints("pads", std::vector<int64_t>(2 * attrs.image_shape.size(), 0));
  return call_op("nn.col2im", {c.input(0)}, attrs);
}

}  // namespace

void register_opset18_converters(ConverterRegistry& r) {
  r.add("Mish", 18, convert_mish);
  r.add("Gelu", 20, convert_gelu);
  r.add("GroupNormalization", 18, convert_group_norm_v18);
  r.add("GroupNormalization", 21, convert_group_norm_v21);
  r.add("BitwiseAnd", 18, binary_op("bitwise_and"));
  r.add("BitwiseOr", 18, binary_op("bitwise_or"));
  r.add("BitwiseXor", 18, binary_op("bitwise_xor"));
  r.add("BitwiseNot", 18, unary_op("bitwise_not"));
  r.add("CenterCropPad", 18, convert_center_crop_pad);
  r.add("Col2Im", 18, convert_col2im);
}

}  // namespace kiln::frontend
