// Helpers shared by compute definitions.
#pragma once

#include <vector>

#include "kiln/te/tensor.h"

namespace kiln {

// The element of `t` that numpy broadcasting pairs with output element `out` (t's axes align
// with the output's last axes; an axis of extent 1 repeats).
tir::PrimExpr broadcast_read(const te::Tensor& t, const te::Indices& out);

// The same indices as expressions.
std::vector<tir::PrimExpr> index_exprs(const te::Indices& indices);

}  // namespace kiln
