#include "interp/value.h"

#include "kiln/support/error.h"

namespace kiln {

const NDArray& Value::tensor() const {
  if (const auto* t = std::get_if<NDArray>(&v_)) return *t;
  throw Error(cat("expected a tensor value, found ", interp::value_type_str(*this)));
}

const std::vector<Value>& Value::tuple() const {
  if (const auto* t = std::get_if<std::vector<Value>>(&v_)) return *t;
  throw Error(cat("expected a tuple value, found ", interp::value_type_str(*this)));
}

const std::shared_ptr<const Closure>& Value::closure() const {
  if (const auto* c = std::get_if<std::shared_ptr<const Closure>>(&v_)) return *c;
  throw Error(cat("expected a function value, found ", interp::value_type_str(*this)));
}

std::vector<NDArray> Value::flatten() const {
  std::vector<NDArray> out;
  // Iterative so that deeply nested tuples cannot overflow the stack.
  std::vector<const Value*> pending{this};
  while (!pending.empty()) {
    const Value* v = pending.back();
    pending.pop_back();
    if (v->is_tensor()) {
      out.push_back(v->tensor());
    } else if (v->is_tuple()) {
      const auto& fields = v->tuple();
      for (auto it = fields.rbegin(); it != fields.rend(); ++it) pending.push_back(&*it);
    } else {
      throw Error(cat("expected tensors or tuples of tensors, found ", interp::value_type_str(*v)));
    }
  }
  return out;
}

namespace interp {

Type value_type(const Value& v) {
  if (v.is_tensor()) return tensor_type(v.tensor().shape(), v.tensor().dtype());
  if (v.is_tuple()) {
    std::vector<Type> fields;
    for (const auto& f : v.tuple()) fields.push_back(value_type(f));
    return tuple_type(std::move(fields));
  }
  if (v.is_closure()) return v.closure()->fn->checked_type();
  return nullptr;
}

std::string value_type_str(const Value& v) {
  if (v.is_closure()) {
    const Type& t = v.closure()->fn->checked_type();
    return t ? type_str(t) : "a function";
  }
  if (!v.is_tensor() && !v.is_tuple()) return "no value";
  return type_str(value_type(v));
}

bool value_matches(const Type& expected, const Value& v) {
  if (!expected) return true;
  if (const auto* t = as_tensor(expected)) {
    if (!v.is_tensor()) return false;
    const NDArray& a = v.tensor();
    if (a.dtype() != t->dtype || a.ndim() != t->ndim()) return false;
    for (size_t i = 0; i < t->shape.size(); ++i)
      if (t->shape[i] != kAnyDim && t->shape[i] != a.shape()[i]) return false;
    return true;
  }
  if (const auto* t = as_tuple(expected)) {
    if (!v.is_tuple() || v.tuple().size() != t->fields.size()) return false;
    for (size_t i = 0; i < t->fields.size(); ++i)
      if (!value_matches(t->fields[i], v.tuple()[i])) return false;
    return true;
  }
  return v.is_closure();
}

}  // namespace interp
}  // namespace kiln
