#include "kiln/attrs/indexing.h"

#include "kiln/attrs/window.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

void StridedSliceAttrs::validate() const { check_choice("slice_mode", slice_mode, {"end", "size"}); }

void TakeAttrs::validate() const { check_choice("mode", mode, {"clip", "wrap", "fast"}); }

std::vector<int64_t> TakeAttrs::result_shape(const std::vector<int64_t>& data,
                                             const std::vector<int64_t>& indices) const {
  if (!axis) return indices;
  const auto ndim = static_cast<int64_t>(data.size());
  const int64_t a = *axis < 0 ? *axis + ndim : *axis;
  if (a < 0 || a >= ndim)
    throw std::move(Error("take axis out of range").expected(cat("in [", -ndim, ", ", ndim, ")"), cat(*axis)));
  std::vector<int64_t> out(data.begin(), data.begin() + a);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + a + 1, data.end());
  return out;
}

ScatterReduction parse_scatter_reduction(const std::string& attr, const std::string& name) {
  if (name == "update") return ScatterReduction::kUpdate;
  if (name == "add") return ScatterReduction::kAdd;
  if (name == "mul") return ScatterReduction::kMul;
  if (name == "min") return ScatterReduction::kMin;
  if (name == "max") return ScatterReduction::kMax;
  throw std::move(Error(cat("attribute '", attr, "' is not supported")).expected("update, add, mul, min or max", name));
}

}  // namespace kiln
