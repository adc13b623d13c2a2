#include "kiln/transform/specialize_inputs.h"

#include <set>

#include "kiln/ir/type_infer.h"
#include "kiln/support/strings.h"
#include "transform/substitute.h"

namespace kiln {

namespace {

// The static type `shape` gives parameter `param`, checked against its declared type.
Type specialized_type(const VarNode& param, const Shape& shape) {
  const TensorTypeNode& declared = expect_tensor(param.type_annotation, cat("input '", param.name, "'"));
  bool fits = declared.shape.size() == shape.size();
  for (size_t d = 0; fits && d < shape.size(); ++d)
    fits = shape[d] >= 0 && (declared.shape[d] == kAnyDim || declared.shape[d] == shape[d]);
  if (!fits)
    throw std::move(Error(cat("input '", param.name, "' cannot take this shape"))
                        .expected(shape_str(declared.shape), shape_str(shape)));
  return tensor_type(shape, declared.dtype);
}

}  // namespace

IRModule specialize_inputs(const IRModule& mod, const std::map<std::string, Shape>& shapes) {
  const Function& main = mod.lookup("main");
  std::vector<Var> params;
  std::map<const VarNode*, Expr> binding;
  std::set<std::string> used;
  for (const Var& p : main->params) {
    auto it = shapes.find(p->name);
    if (it == shapes.end()) {
      params.push_back(p);
      continue;
    }
    Var fixed = make_var(p->name, specialized_type(*p, it->second));
    binding[p.get()] = fixed;
    params.push_back(fixed);
    used.insert(p->name);
  }
  for (const auto& [name, shape] : shapes)
    if (!used.count(name)) throw Error(cat("'", name, "' is not an input of @main"));
  IRModule result = mod;
  result.add("main", make_function(std::move(params), substitute(main->body, binding), nullptr, main->attrs));
  return infer_types(result);
}

}  // namespace kiln
