#include "kiln/attrs/unary.h"

#include "kiln/attrs/dtype_attr.h"

namespace kiln {

void CastAttrs::validate() const { parse_dtype_attr("dtype", dtype); }

DType CastAttrs::to() const { return parse_dtype_attr("dtype", dtype); }

}  // namespace kiln
