#include "kiln/ir/type.h"

#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

bool TensorTypeNode::is_static() const {
  for (int64_t d : shape)
    if (d < 0) return false;
  return true;
}

Type tensor_type(Shape shape, DType dtype) { return std::make_shared<TensorTypeNode>(std::move(shape), dtype); }
Type tuple_type(std::vector<Type> fields) { return std::make_shared<TupleTypeNode>(std::move(fields)); }
Type func_type(std::vector<Type> params, Type ret) {
  return std::make_shared<FuncTypeNode>(std::move(params), std::move(ret));
}

const TensorTypeNode* as_tensor(const Type& t) {
  return t && t->kind == TypeKind::kTensor ? static_cast<const TensorTypeNode*>(t.get()) : nullptr;
}
const TupleTypeNode* as_tuple(const Type& t) {
  return t && t->kind == TypeKind::kTuple ? static_cast<const TupleTypeNode*>(t.get()) : nullptr;
}
const FuncTypeNode* as_func(const Type& t) {
  return t && t->kind == TypeKind::kFunc ? static_cast<const FuncTypeNode*>(t.get()) : nullptr;
}

const TensorTypeNode& expect_tensor(const Type& t, const std::string& what) {
  const TensorTypeNode* tt = as_tensor(t);
  if (!tt) throw Error(cat(what, " must be a tensor, found ", type_str(t)));
  return *tt;
}

std::string type_str(const Type& t) {
  if (!t) return "?";
  if (const auto* tt = as_tensor(t)) {
    if (tt->shape.empty()) return std::string(dtype_name(tt->dtype));
    return cat("Tensor[", shape_str(tt->shape), ", ", dtype_name(tt->dtype), "]");
  }
  if (const auto* tu = as_tuple(t)) {
    std::vector<std::string> fields;
    for (const auto& f : tu->fields) fields.push_back(type_str(f));
    return "(" + join(fields) + (fields.size() == 1 ? ",)" : ")");
  }
  const auto* ft = as_func(t);
  std::vector<std::string> params;
  for (const auto& p : ft->params) params.push_back(type_str(p));
  return "fn (" + join(params) + ") -> " + type_str(ft->ret);
}

bool type_equal(const Type& a, const Type& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  if (const auto* ta = as_tensor(a)) {
    const auto* tb = as_tensor(b);
    return ta->dtype == tb->dtype && ta->shape == tb->shape;
  }
  auto all_equal = [](const std::vector<Type>& x, const std::vector<Type>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!type_equal(x[i], y[i])) return false;
    return true;
  };
  if (const auto* ta = as_tuple(a)) return all_equal(ta->fields, as_tuple(b)->fields);
  const auto* fa = as_func(a);
  const auto* fb = as_func(b);
  return all_equal(fa->params, fb->params) && type_equal(fa->ret, fb->ret);
}

}  // namespace kiln
