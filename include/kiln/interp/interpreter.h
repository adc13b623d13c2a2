// The reference interpreter: evaluates IR with the plain C++ reference kernels. Slow and
// obviously correct; the oracle of differential tests and the engine of constant folding.
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "kiln/ir/expr.h"
#include "kiln/ir/module.h"
#include "kiln/runtime/ndarray.h"

namespace kiln {

struct Closure;

// A runtime value: a tensor, a tuple of values, or a function value.
class Value {
 public:
  Value() = default;
  Value(NDArray t) : v_(std::move(t)) {}
  Value(std::vector<Value> fields) : v_(std::move(fields)) {}
  Value(std::shared_ptr<const Closure> c) : v_(std::move(c)) {}

  bool is_tensor() const { return std::holds_alternative<NDArray>(v_); }
  bool is_tuple() const { return std::holds_alternative<std::vector<Value>>(v_); }
  bool is_closure() const { return std::holds_alternative<std::shared_ptr<const Closure>>(v_); }
  // Throw kiln::Error when the value is of another kind.
  const NDArray& tensor() const;
  const std::vector<Value>& tuple() const;
  const std::shared_ptr<const Closure>& closure() const;
  // All tensors, tuples flattened in order.
  std::vector<NDArray> flatten() const;

 private:
  std::variant<std::monostate, NDArray, std::vector<Value>, std::shared_ptr<const Closure>> v_;
};

// Runs function `entry` of `mod` on `args` (one per parameter). The module is type-checked
// first; argument shapes and dtypes are checked against the parameters.
Value interpret(const IRModule& mod, const std::string& entry, const std::vector<Value>& args);
// Evaluates a closed expression (no free variables), e.g. for constant folding.
Value interpret_expr(const Expr& e, const IRModule* mod = nullptr);

}  // namespace kiln
