// Attribute declaration of nn.pad; see kiln/attrs/reflect.h for the mechanism. src/op/nn/pad.cc
// derives the schema from it, the reference kernel (src/runtime/kernels/nn/pad.cc) and the ONNX
// Pad converter build and read the same struct.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kiln/attrs/reflect.h"

namespace kiln {

enum class PadMode : uint8_t { kConstant, kEdge, kReflect, kWrap };

// nn.pad's attributes but the amounts (dyn.pad takes them at run time).
struct PadModeAttrs {
  std::string pad_mode = "constant";

  template <class V>
  void visit(V& v) {
    v("pad_mode", pad_mode,
      "constant (pad_value), edge (the edge element), reflect (mirror image without the edge) or wrap (the "
      "opposite end, as if the axis were a ring).");
  }
};

struct PadAttrs : PadModeAttrs {
  // One [before, after] pair per axis (a list of lists, so kAny); negative amounts crop.
  AttrValue pad_width;

  template <class V>
  void visit(V& v) {
    v("pad_width", pad_width, "One [before, after] pair per axis; negative amounts crop.", kRequired);
    PadModeAttrs::visit(v);
  }
  void validate() const;

  // pad_width from the pairs, one per axis.
  static AttrValue width_of(const std::vector<std::pair<int64_t, int64_t>>& pairs);
  std::vector<std::pair<int64_t, int64_t>> pairs() const;
  PadMode mode() const;
};

}  // namespace kiln
