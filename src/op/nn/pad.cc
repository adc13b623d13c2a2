// Ops: nn.pad.
// pad_width holds one [before, after] pair per axis; negative amounts crop. The fill value of
// constant mode is the scalar tensor argument pad_value, as in Relay.
#include "kiln/attrs/pad.h"

#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

// The [before, after] pairs of pad_width, one per axis of the data.
std::vector<std::pair<int64_t, int64_t>> pad_pairs(const PadAttrs& attrs, const Shape& data_shape) {
  std::vector<std::pair<int64_t, int64_t>> pairs = attrs.pairs();
  if (pairs.size() != data_shape.size())
    throw std::move(Error(cat("attribute 'pad_width' needs one pair per axis for 'data' ", shape_str(data_shape)))
                        .expected(cat(data_shape.size(), " pairs [before, after]"), attrs.pad_width.to_string()));
  return pairs;
}

Type pad_relation(const std::vector<Type>& args, const PadAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& pad_value = arg_tensor(args, 1, "pad_value");
  if (pad_value.ndim() != 0)
    throw std::move(Error("argument 'pad_value' must be a scalar").expected("()", shape_str(pad_value.shape)));
  auto pairs = pad_pairs(attrs, data.shape);
  Shape out = data.shape;
  for (size_t d = 0; d < out.size(); ++d) {
    auto [before, after] = pairs[d];
    if (out[d] < 0) continue;
    if (out[d] == 0 && attrs.mode() != PadMode::kConstant && (before > 0 || after > 0))
      throw std::move(Error(cat("cannot pad the empty axis ", d, " of 'data' ", shape_str(data.shape), " in ",
                                attrs.pad_mode, " mode"))
                          .expected("a non-empty axis", "extent 0"));
    out[d] += before + after;
    if (out[d] < 0)
      throw std::move(
          Error(cat("attribute 'pad_width' crops more than axis ", d, " of 'data' ", shape_str(data.shape), " holds"))
              .expected(cat("before + after >= ", -data.shape[d]), cat(before + after)));
  }
  return tensor_type(out, data.dtype);
}

// The input index that output index `o` of an axis reads, as the reference kernel's
// source_index; `inside` collects whether constant mode reads the input at all.
tir::PrimExpr pad_source(tir::PrimExpr o, int64_t before, int64_t extent, PadMode mode, tir::PrimExpr& inside) {
  const tir::PrimExpr i = o - tir::int_imm(before);
  switch (mode) {
    case PadMode::kConstant: {
      const tir::PrimExpr in_range = tir::logical_and(tir::ge(i, tir::int_imm(0)), tir::lt(i, tir::int_imm(extent)));
      inside = inside.defined() ? tir::logical_and(inside, in_range) : in_range;
      return i;
    }
    case PadMode::kEdge: return tir::min(tir::max(i, tir::int_imm(0)), tir::int_imm(extent - 1));
    case PadMode::kWrap: return tir::floormod(i, tir::int_imm(extent));
    case PadMode::kReflect: break;
  }
  if (extent == 1) return tir::int_imm(0);
  // Reflection without repeating the edge is periodic with period 2 * (extent - 1).
  const tir::PrimExpr period = tir::int_imm(2 * (extent - 1)), m = tir::floormod(i, period);
  return tir::select(tir::lt(m, tir::int_imm(extent)), m, period - m);
}

std::vector<te::Tensor> pad_compute(const ComputeInput& call, const PadAttrs& attrs) {
  const te::Tensor data = call.args[0], fill = call.args[1];
  const PadMode mode = attrs.mode();
  const auto pairs = pad_pairs(attrs, data.shape());
  return {te::compute(expect_tensor(call.out_type, "result").shape, call.name, [&](const te::Indices& o) {
    tir::PrimExpr inside;
    std::vector<tir::PrimExpr> index;
    for (size_t d = 0; d < o.size(); ++d)
      index.push_back(pad_source(o[d], pairs[d].first, data.shape()[d], mode, inside));
    const tir::PrimExpr value = data(index);
    return inside.defined() ? tir::select(inside, value, fill(std::vector<tir::PrimExpr>{})) : value;
  })};
}

// The reference kernel converts pad_value to the data's dtype as cast does; generated code
// takes it as it is.
std::string pad_limit(const std::vector<Type>& args, const Type&, const Attrs&) {
  const DType data = expect_tensor(args[0], "data").dtype, fill = expect_tensor(args[1], "pad_value").dtype;
  return data == fill ? "" : "pad_value of another dtype than the data";
}

}  // namespace

void register_nn_pad_ops(OpRegistry& registry) {
  registry.add("nn.pad")
      .describe(
          "Pads each axis by pad_width[axis] = [before, after] with pad_value (constant), the edge "
          "element (edge), the mirror image without the edge (reflect) or the other end of the axis (wrap).")
      .arg("data")
      .arg("pad_value")
      .attrs<PadAttrs>()
      .set_relation<PadAttrs>(pad_relation)
      .set_pattern(OpPattern::kInjective);
  set_compute<PadAttrs>(registry.get_mutable("nn.pad"), pad_compute, pad_limit);
}

}  // namespace kiln
