#include "kiln/attrs/group_norm.h"

#include "kiln/attrs/window.h"
#include "kiln/support/strings.h"

namespace kiln {

void GroupNormAttrs::validate() const {
  check_at_least("num_groups", num_groups, 1);
  if (!(epsilon >= 0))
    throw std::move(Error("attribute 'epsilon' must not be negative").expected(">= 0", cat(epsilon)));
}

}  // namespace kiln
