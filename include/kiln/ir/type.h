// Types of IR expressions: tensors (static or unknown '?' dimensions), tuples and functions.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/runtime/dtype.h"
#include "kiln/runtime/ndarray.h"

namespace kiln {

constexpr int64_t kAnyDim = -1;  // an unknown dimension, printed '?'

enum class TypeKind : uint8_t { kTensor, kTuple, kFunc };

class TypeNode {
 public:
  virtual ~TypeNode() = default;
  const TypeKind kind;

 protected:
  explicit TypeNode(TypeKind k) : kind(k) {}
};
using Type = std::shared_ptr<const TypeNode>;

class TensorTypeNode : public TypeNode {
 public:
  TensorTypeNode(Shape s, DType d) : TypeNode(TypeKind::kTensor), shape(std::move(s)), dtype(d) {}
  const Shape shape;
  const DType dtype;
  int64_t ndim() const { return static_cast<int64_t>(shape.size()); }
  bool is_static() const;
};

class TupleTypeNode : public TypeNode {
 public:
  explicit TupleTypeNode(std::vector<Type> f) : TypeNode(TypeKind::kTuple), fields(std::move(f)) {}
  const std::vector<Type> fields;
};

class FuncTypeNode : public TypeNode {
 public:
  FuncTypeNode(std::vector<Type> p, Type r) : TypeNode(TypeKind::kFunc), params(std::move(p)), ret(std::move(r)) {}
  const std::vector<Type> params;
  const Type ret;
};

Type tensor_type(Shape shape, DType dtype);
Type tuple_type(std::vector<Type> fields);
Type func_type(std::vector<Type> params, Type ret);

// nullptr when the type is of another kind (or null).
const TensorTypeNode* as_tensor(const Type& t);
const TupleTypeNode* as_tuple(const Type& t);
const FuncTypeNode* as_func(const Type& t);
// Like as_tensor but throws kiln::Error("<what> must be a tensor, found <type>").
const TensorTypeNode& expect_tensor(const Type& t, const std::string& what);

// Relay text: Tensor[(1, 3), float32], float32 for a scalar, (T1, T2), fn (T1) -> T2.
std::string type_str(const Type& t);
bool type_equal(const Type& a, const Type& b);

}  // namespace kiln
