#include "kiln/attrs/indexing.h"

#include "kiln/attrs/window.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

void StridedSliceAttrs::validate() const { check_choice("slice_mode", slice_mode, {"end", "size"}); }

void TakeAttrs::validate() const { check_choice("mode", mode, {"clip", "wrap", "fast"}); }

ScatterReduction parse_scatter_reduction(const std::string& attr, const std::string& name) {
  if (name == "update") return ScatterReduction::kUpdate;
  if (name == "add") return ScatterReduction::kAdd;
  if (name == "mul") return ScatterReduction::kMul;
  if (name == "min") return ScatterReduction::kMin;
  if (name == "max") return ScatterReduction::kMax;
  throw std::move(Error(cat("attribute '", attr, "' is not supported")).expected("update, add, mul, min or max", name));
}

}  // namespace kiln
