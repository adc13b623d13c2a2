#include "kiln/attrs/pad.h"

#include "kiln/attrs/window.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

namespace {

bool is_int_pair(const AttrValue& item) {
  return item.is_list() && item.as_list().size() == 2 && item.as_list()[0].is_int() && item.as_list()[1].is_int();
}

}  // namespace

void PadAttrs::validate() const {
  check_choice("pad_mode", pad_mode, {"constant", "edge", "reflect", "wrap"});
  bool well_formed = pad_width.is_list();
  if (well_formed)
    for (const AttrValue& item : pad_width.as_list()) well_formed = well_formed && is_int_pair(item);
  if (!well_formed)
    throw std::move(Error("attribute 'pad_width' must be a list of [before, after] pairs of ints")
                        .expected("[[b0, a0], [b1, a1], ...]", pad_width.to_string()));
}

AttrValue PadAttrs::width_of(const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  AttrValue::List list;
  for (auto [before, after] : pairs) list.emplace_back(std::vector<int64_t>{before, after});
  return AttrValue(std::move(list));
}

std::vector<std::pair<int64_t, int64_t>> PadAttrs::pairs() const {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const AttrValue& item : pad_width.as_list())
    out.emplace_back(item.as_list()[0].as_int(), item.as_list()[1].as_int());
  return out;
}

PadMode PadAttrs::mode() const {
  if (pad_mode == "edge") return PadMode::kEdge;
  if (pad_mode == "reflect") return PadMode::kReflect;
  if (pad_mode == "wrap") return PadMode::kWrap;
  return PadMode::kConstant;
}

}  // namespace kiln
