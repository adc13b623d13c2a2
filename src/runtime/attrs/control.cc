#include "kiln/attrs/control.h"

#include "kiln/attrs/dtype_attr.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

void UnreachableAttrs::validate() const {
  for (int64_t d : shape)
    if (d < -1)
      throw std::move(Error(cat("attribute 'shape' has a negative dimension: ", AttrValue(shape).to_string()))
                          .expected("dimensions >= 0, or -1 for unknown", cat(d)));
  parse_dtype_attr("dtype", dtype);
}

}  // namespace kiln
