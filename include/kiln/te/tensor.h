// Tensor expressions: a tensor is a placeholder (a function input) or a compute — one scalar
// expression per output element, written over index variables, optionally a reduction.
//
//   Tensor a = placeholder({64, 64}, DType::kFloat32, "A");
//   IterVar k = reduce_axis(64, "k");
//   Tensor c = compute({64, 64}, "C", [&](const Indices& i) { return sum(a(i[0], k) * b(k, i[1]), {k}); });
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/tir/expr.h"

namespace kiln::te {

using tir::PrimExpr;
using tir::Var;

enum class IterKind : uint8_t { kDataPar, kReduce };

// A loop variable with its domain [0, extent).
struct IterVarNode {
  Var var;
  int64_t extent = 0;
  IterKind kind = IterKind::kDataPar;
};

// A handle to an IterVarNode; usable directly as an index expression (`i[0] + r`).
class IterVar {
 public:
  IterVar() = default;
  IterVar(std::nullptr_t) {}  // NOLINT
  explicit IterVar(std::shared_ptr<const IterVarNode> node) : node_(std::move(node)) {}

  const IterVarNode* get() const { return node_.get(); }
  const IterVarNode* operator->() const { return node_.get(); }
  const IterVarNode& operator*() const { return *node_; }
  explicit operator bool() const { return node_ != nullptr; }
  operator PrimExpr() const { return node_->var; }  // NOLINT
  bool operator==(const IterVar& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const IterVarNode> node_;
};

IterVar make_iter_var(std::string name, int64_t extent, IterKind kind);
IterVar reduce_axis(int64_t extent, std::string name);

enum class ReduceKind : uint8_t { kSum, kProd, kMax, kMin };

// A commutative reduction of `source` over `axes`, starting from `init` (the identity when undefined).
struct Reduce {
  ReduceKind kind = ReduceKind::kSum;
  PrimExpr source;
  std::vector<IterVar> axes;
  PrimExpr init;
};

Reduce sum(PrimExpr source, std::vector<IterVar> axes, PrimExpr init = {});
Reduce prod(PrimExpr source, std::vector<IterVar> axes, PrimExpr init = {});
// Write te::max / te::min: unqualified, tir::max(a, b) also matches `max(x, {k})` through
// argument-dependent lookup and the call is ambiguous.
Reduce max(PrimExpr source, std::vector<IterVar> axes, PrimExpr init = {});
Reduce min(PrimExpr source, std::vector<IterVar> axes, PrimExpr init = {});
// The identity element of the reduction in `dtype` (0, 1, lowest, highest).
PrimExpr reduce_identity(ReduceKind kind, DType dtype);
// combine(accumulator, value) for the reduction.
PrimExpr reduce_combine(ReduceKind kind, PrimExpr accumulator, PrimExpr value);

// An index into a tensor: an expression, or an iteration variable standing for its variable.
inline PrimExpr index_expr(const IterVar& v) { return v->var; }
inline PrimExpr index_expr(PrimExpr e) { return e; }

struct OperationNode;
using Operation = std::shared_ptr<const OperationNode>;

// A handle to the single output of an operation.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Operation op) : op_(std::move(op)) {}

  bool defined() const { return op_ != nullptr; }
  const Operation& op() const { return op_; }
  const std::string& name() const;
  const std::vector<int64_t>& shape() const;
  DType dtype() const;
  size_t ndim() const { return shape().size(); }
  // The buffer that holds this tensor's values when it is materialised.
  const tir::Buffer& buffer() const;

  PrimExpr operator()(std::vector<PrimExpr> indices) const;
  template <class... Index>
  PrimExpr operator()(Index... indices) const {
    return (*this)(std::vector<PrimExpr>{index_expr(indices)...});
  }

  bool same_as(const Tensor& other) const { return op_ == other.op_; }

 private:
  Operation op_;
};

struct OperationNode {
  std::string name;
  tir::Buffer buffer;  // output storage (name, shape, dtype)
  bool is_placeholder = false;
  std::vector<IterVar> axis;         // one data-parallel axis per output dimension
  std::vector<IterVar> reduce_axis;  // empty unless `reduce` is set
  PrimExpr body;                     // the element value; the reduction source when `reduce` is set
  std::optional<ReduceKind> reduce;
  PrimExpr init;               // reduction start value
  std::vector<Tensor> inputs;  // tensors read by `body`, in order of first use

  ~OperationNode();
};

using Indices = std::vector<Var>;

Tensor placeholder(std::vector<int64_t> shape, DType dtype, std::string name);
// compute() for an element expression / a reduction (the template below picks one by return type).
Tensor compute_expr(std::vector<int64_t> shape, std::string name, const std::function<PrimExpr(const Indices&)>& fn);
Tensor compute_reduce(std::vector<int64_t> shape, std::string name, const std::function<Reduce(const Indices&)>& fn);

template <class Fn>
requires std::is_invocable_v<Fn, const Indices&> Tensor compute(std::vector<int64_t> shape, std::string name, Fn&& fn) {
  if constexpr (std::is_same_v<std::invoke_result_t<Fn, const Indices&>, Reduce>)
    return compute_reduce(std::move(shape), std::move(name), std::function<Reduce(const Indices&)>(fn));
  else
    return compute_expr(std::move(shape), std::move(name), std::function<PrimExpr(const Indices&)>(fn));
}

// A compute with the same body as `op` (but fresh axes) writing to a new buffer named `name`.
Tensor copy_compute(const Operation& op, std::string name);

// The tensor whose buffer is `buffer`, while that tensor is alive; nullptr otherwise.
Tensor tensor_of_buffer(const tir::Buffer& buffer);

}  // namespace kiln::te
