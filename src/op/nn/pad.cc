// Ops: nn.pad.
// pad_width holds one [before, after] pair per axis; negative amounts crop. The fill value of
// constant mode is the scalar tensor argument pad_value, as in Relay.
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

Error pad_width_error(const std::string& problem, const Attrs& attrs, const Shape& data_shape) {
  return std::move(Error(cat("attribute 'pad_width' ", problem, " for 'data' ", shape_str(data_shape)))
                       .expected(cat(data_shape.size(), " pairs [before, after]"), attrs.get("pad_width").to_string()));
}

// The [before, after] pairs of pad_width, checked against the data's rank.
std::vector<std::pair<int64_t, int64_t>> pad_pairs(const Attrs& attrs, const Shape& data_shape) {
  const AttrValue& value = attrs.get("pad_width");
  if (!value.is_list()) throw pad_width_error("must be a list of pairs", attrs, data_shape);
  const AttrValue::List& items = value.as_list();
  if (items.size() != data_shape.size()) throw pad_width_error("needs one pair per axis", attrs, data_shape);
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (const AttrValue& item : items) {
    bool is_pair =
        item.is_list() && item.as_list().size() == 2 && item.as_list()[0].is_int() && item.as_list()[1].is_int();
    if (!is_pair) throw pad_width_error("must hold pairs of ints", attrs, data_shape);
    pairs.emplace_back(item.as_list()[0].as_int(), item.as_list()[1].as_int());
  }
  return pairs;
}

Type pad_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& pad_value = arg_tensor(args, 1, "pad_value");
  if (pad_value.ndim() != 0)
    throw std::move(Error("argument 'pad_value' must be a scalar").expected("()", shape_str(pad_value.shape)));
  const std::string& mode = choice_attr(attrs, "pad_mode", {"constant", "edge", "reflect"});
  auto pairs = pad_pairs(attrs, data.shape);
  Shape out = data.shape;
  for (size_t d = 0; d < out.size(); ++d) {
    auto [before, after] = pairs[d];
    if (out[d] < 0) continue;
    if (out[d] == 0 && mode != "constant" && (before > 0 || after > 0))
      throw std::move(
          Error(cat("cannot pad the empty axis ", d, " of 'data' ", shape_str(data.shape), " in ", mode, " mode"))
              .expected("a non-empty axis", "extent 0"));
    out[d] += before + after;
    if (out[d] < 0)
      throw std::move(
          Error(cat("attribute 'pad_width' crops more than axis ", d, " of 'data' ", shape_str(data.shape), " holds"))
              .expected(cat("before + after >= ", -data.shape[d]), cat(before + after)));
  }
  return tensor_type(out, data.dtype);
}

}  // namespace

void register_nn_pad_ops(OpRegistry& registry) {
  registry.add("nn.pad")
      .describe(
          "Pads each axis by pad_width[axis] = [before, after] with pad_value (constant), the edge "
          "element (edge) or the mirror image without the edge (reflect).")
      .arg("data")
      .arg("pad_value")
      .required_attr("pad_width", AttrKind::kAny)
      .attr("pad_mode", AttrKind::kString, "constant")
      .set_relation(pad_relation)
      .set_pattern(OpPattern::kInjective);
}

}  // namespace kiln
