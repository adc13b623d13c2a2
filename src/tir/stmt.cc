#include "kiln/tir/stmt.h"

#include "kiln/support/error.h"

namespace kiln::tir {

const char* for_kind_name(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial: return "serial";
    case ForKind::kParallel: return "parallel";
    case ForKind::kVectorized: return "vectorized";
    case ForKind::kUnrolled: return "unroll";
  }
  return "?";
}

bool Stmt::is_no_op() const {
  const auto* s = as<SeqStmt>();
  return s != nullptr && s->stmts.empty();
}

Stmt seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto& s : stmts) {
    if (!s.defined() || s.is_no_op()) continue;
    if (const auto* inner = s.as<SeqStmt>())
      flat.insert(flat.end(), inner->stmts.begin(), inner->stmts.end());
    else
      flat.push_back(std::move(s));
  }
  if (flat.size() == 1) return flat[0];
  return SeqStmt{std::move(flat)};
}

Stmt store(Buffer buffer, std::vector<PrimExpr> indices, PrimExpr value) {
  check(buffer != nullptr && value.defined(), "tir: store needs a buffer and a value");
  if (indices.size() != buffer->shape.size())
    throw Error(cat("tir: store to buffer '", buffer->name, "' with wrong number of indices"))
        .expected(cat(buffer->shape.size()), cat(indices.size()));
  if (value.dtype() != buffer->dtype)
    throw Error(cat("tir: store to buffer '", buffer->name, "' of a value of another dtype"))
        .expected(std::string(dtype_name(buffer->dtype)), std::string(dtype_name(value.dtype())));
  return BufferStore{std::move(buffer), std::move(indices), std::move(value)};
}

Stmt for_loop(Var var, PrimExpr min, PrimExpr extent, ForKind kind, Stmt body) {
  return For{std::move(var), std::move(min), std::move(extent), kind, std::move(body)};
}

}  // namespace kiln::tir
