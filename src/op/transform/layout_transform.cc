// Ops: layout_transform (TVM's): the same tensor laid out in another layout, e.g. NCHW data as
// NCHW8c blocks for a blocked convolution, or OIHW weights as OIHW8i8o. Layouts are parsed by
// kiln/attrs/layout.h.
#include <algorithm>
#include <cctype>

#include "kiln/attrs/layout.h"
#include "kiln/attrs/transform.h"
#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/op_util.h"

namespace kiln {

namespace {

Type layout_transform_relation(const std::vector<Type>& args, const LayoutTransformAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const Layout src = Layout::parse(attrs.src_layout), dst = Layout::parse(attrs.dst_layout);
  if (data.shape.size() != src.ndim())
    throw std::move(Error(cat("argument 'data' ", shape_str(data.shape), " does not have the rank of src_layout '",
                              attrs.src_layout, "'"))
                        .expected(cat("rank ", src.ndim()), cat(data.shape.size())));
  for (const Layout::Axis& axis : src.axes())
    if (!axis.primal()) {
      const int64_t extent = data.shape[*src.position(axis.name)];
      if (extent >= 0 && extent != axis.factor)
        throw std::move(Error(cat("axis '", axis.name, "' of argument 'data' ", shape_str(data.shape),
                                  " must be the block of src_layout '", attrs.src_layout, "'"))
                            .expected(cat(axis.factor), cat(extent)));
    }
  return tensor_type(src.convert_shape(data.shape, dst), data.dtype);
}

// The axes of `shape` in `layout` whose extent is not 1, as (primal axis name, extent); a primal
// axis directly followed by its sub axis (C then c) is one axis, the whole of C.
std::vector<std::pair<char, int64_t>> non_unit_axes(const Layout& layout, const Shape& shape) {
  std::vector<std::pair<char, int64_t>> axes;
  char previous = 0;
  for (size_t k = 0; k < layout.ndim(); ++k) {
    const Layout::Axis& axis = layout.axes()[k];
    const char name = static_cast<char>(std::toupper(axis.name));
    if (shape[k] == 1) continue;
    if (!axis.primal() && previous == name)
      axes.back().second *= shape[k];
    else
      axes.emplace_back(name, shape[k]);
    previous = axis.name;
  }
  return axes;
}

// The same bytes when, leaving out unit axes, both layouts hold each primal axis whole in the
// same order: NCHW -> NCHW1c, NCHW16c with 1x1 planes -> NCHW, not NCHW -> NCHW8c of larger
// planes (there the channels are split around the plane).
bool layout_transform_keeps_bytes(const std::vector<Type>& args, const Type& out, const LayoutTransformAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& result = expect_tensor(out, "result");
  if (!data.is_static() || !result.is_static()) return false;
  const auto from = non_unit_axes(Layout::parse(attrs.src_layout), data.shape);
  const auto to = non_unit_axes(Layout::parse(attrs.dst_layout), result.shape);
  for (size_t k = 0; k < from.size(); ++k)
    for (size_t j = 0; j < k; ++j)
      if (from[j].first == from[k].first) return false;
  return from == to;
}

std::vector<te::Tensor> layout_transform_compute(const ComputeInput& call, const LayoutTransformAttrs& attrs) {
  const te::Tensor x = call.args.at(0);
  const Layout src = Layout::parse(attrs.src_layout), dst = Layout::parse(attrs.dst_layout);
  return {te::compute(expect_tensor(call.out_type, "result").shape, call.name, [&](const te::Indices& i) {
    std::vector<tir::PrimExpr> index(i.begin(), i.end());
    return x(source_index(
        src, dst, index, [](const tir::PrimExpr& a, int64_t b) { return tir::floordiv(a, b); },
        [](const tir::PrimExpr& a, int64_t b) { return tir::floormod(a, b); }));
  })};
}

// NCHW{x}c -> NCHW: the channel axis split by the block and the rows ordered (N, C/x, H, c, W),
// so one task copies a whole x-by-W row of blocks while it sits in L1. In the plain (N, C, H)
// order each input cache line is read x times, a whole plane apart (MobileNetV2's 144-channel
// 56x56 output leaving the blocked layout before a 24-channel convolution).
void unblocking_order(te::Stage& stage, int64_t block) {
  const std::vector<te::IterVar> leaves = stage.leaf_iter_vars();
  auto [channel_blocks, channels] = stage.split(leaves[1], block);
  stage.reorder({leaves[0], channel_blocks, leaves[2], channels, leaves[3]});
}

// The channel block of an NCHW{x}c -> NCHW transform written by `stage`, or 0.
int64_t unblocked_channel_block(const ScheduleInput& in, const te::Tensor& out, const te::Stage& stage) {
  const TensorTypeNode& data = expect_tensor(in.call.arg_types.at(0), "data");
  const TensorTypeNode& result = expect_tensor(in.call.out_type, "result");
  if (data.ndim() != 5 || result.ndim() != 4 || out.shape() != result.shape) return 0;
  const int64_t block = data.shape[4];
  if (stage.leaf_iter_vars().size() != 4 || block <= 1 || result.shape[1] % block != 0) return 0;
  return block;
}

// The default injective schedule (rows of the innermost axes; a blocked layout's 16-wide rows
// with the axis before them as a second loop), after the unblocking order.
void layout_transform_schedule(const ScheduleInput& in) {
  for (const te::Tensor& out : in.outputs) {
    te::Stage& stage = in.schedule[out];
    if (stage.attach() != te::Stage::Attach::kRoot || stage.op()->reduce) continue;
    if (const int64_t block = unblocked_channel_block(in, out, stage)) unblocking_order(stage, block);
    schedule_injective_stage(stage, in.target);
  }
}

}  // namespace

void register_transform_layout_ops(OpRegistry& registry) {
  OpDef& def = registry.add("layout_transform")
                   .describe(
                       "The data laid out in dst_layout instead of src_layout (NCHW <-> NCHW8c, OIHW -> "
                       "OIHW8i8o): the same elements, blocked and ordered differently.")
                   .arg("data")
                   .attrs<LayoutTransformAttrs>()
                   .set_relation<LayoutTransformAttrs>(layout_transform_relation)
                   .set_keeps_bytes<LayoutTransformAttrs>(layout_transform_keeps_bytes)
                   .set_pattern(OpPattern::kInjective);
  set_compute<LayoutTransformAttrs>(def, layout_transform_compute);
  set_schedule(def, layout_transform_schedule);
}

}  // namespace kiln
