#include "transform/substitute.h"

#include "kiln/ir/visit.h"

namespace kiln {

namespace {
class Substituter : public ExprRewriter {
 public:
  explicit Substituter(const std::map<const VarNode*, Expr>& binding) : binding_(binding) {}

 protected:
  Expr post(const Expr& original, const Expr& rebuilt) override {
    const auto* v = as<VarNode>(original);
    if (!v) return rebuilt;
    auto it = binding_.find(v);
    return it == binding_.end() ? rebuilt : it->second;
  }

 private:
  const std::map<const VarNode*, Expr>& binding_;
};
}  // namespace

Expr substitute(const Expr& e, const std::map<const VarNode*, Expr>& binding) {
  return Substituter(binding).rewrite(e);
}

}  // namespace kiln
