#include "op/compute_util.h"

namespace kiln {

std::vector<tir::PrimExpr> index_exprs(const te::Indices& indices) {
  return std::vector<tir::PrimExpr>(indices.begin(), indices.end());
}

tir::PrimExpr broadcast_read(const te::Tensor& t, const te::Indices& out) {
  const size_t rank = t.ndim(), offset = out.size() - rank;
  std::vector<tir::PrimExpr> index;
  for (size_t k = 0; k < rank; ++k)
    index.push_back(t.shape()[k] == 1 ? tir::int_imm(0) : tir::PrimExpr(out[offset + k]));
  return t(index);
}

}  // namespace kiln
