#include "kiln/attrs/reduce.h"

#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

std::vector<bool> ReduceAttrs::reduced_axes(const std::vector<int64_t>& shape) const {
  const auto ndim = static_cast<int64_t>(shape.size());
  if (!axis || axis->empty()) return std::vector<bool>(shape.size(), true);
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t a : *axis) {
    if (a < -ndim || a >= ndim)
      throw std::move(Error(cat("attribute 'axis' has ", a, ", out of range for data of shape ", shape_str(shape)))
                          .expected(cat("an axis in [", -ndim, ", ", ndim, ")"), cat(a)));
    const auto d = static_cast<size_t>(a < 0 ? a + ndim : a);
    if (reduced[d])
      throw std::move(Error(cat("attribute 'axis' lists axis ", d, " more than once"))
                          .expected("distinct axes", AttrValue(*axis).to_string()));
    reduced[d] = true;
  }
  if (exclude) reduced.flip();
  return reduced;
}

}  // namespace kiln
