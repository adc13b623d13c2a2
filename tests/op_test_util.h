// Helpers for op tests: infer a call's type and run an op's reference kernel directly,
// without building IR by hand.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "kiln/ir/op.h"
#include "kiln/ir/type.h"
#include "kiln/runtime/kernel_registry.h"
#include "kiln/runtime/ndarray.h"
#include "kiln/support/error.h"

namespace kiln::testing {

inline Type f32(Shape shape) { return tensor_type(std::move(shape), DType::kFloat32); }

// Result type of calling `op` on arguments of these types (attrs as a user writes them).
inline Type infer_op(const std::string& op, const std::vector<Type>& arg_types, const Attrs& attrs = {}) {
  const OpDef& def = OpRegistry::global().get(op);
  def.check_arity(arg_types.size());
  return def.relation(arg_types, def.normalize(attrs));
}

// The error message type inference gives, or "" when it succeeds.
inline std::string infer_op_error(const std::string& op, const std::vector<Type>& arg_types, const Attrs& attrs = {}) {
  try {
    infer_op(op, arg_types, attrs);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// An argument: one tensor, or a tuple of tensors (e.g. for concatenate).
using OpArg = std::variant<NDArray, std::vector<NDArray>>;

inline Type arg_type(const OpArg& a) {
  if (const auto* t = std::get_if<NDArray>(&a)) return tensor_type(t->shape(), t->dtype());
  std::vector<Type> fields;
  for (const auto& t : std::get<std::vector<NDArray>>(a)) fields.push_back(tensor_type(t.shape(), t.dtype()));
  return tuple_type(std::move(fields));
}

// Runs the op's reference kernel; returns its outputs (several for a tuple result).
inline std::vector<NDArray> run_op(const std::string& op, const std::vector<OpArg>& args, const Attrs& attrs = {}) {
  const OpDef& def = OpRegistry::global().get(op);
  std::vector<Type> types;
  std::vector<NDArray> inputs;
  for (const auto& a : args) {
    types.push_back(arg_type(a));
    if (const auto* t = std::get_if<NDArray>(&a))
      inputs.push_back(*t);
    else
      for (const auto& t : std::get<std::vector<NDArray>>(a)) inputs.push_back(t);
  }
  def.check_arity(types.size());
  Attrs full = def.normalize(attrs);
  Type out = def.relation(types, full);
  std::vector<NDArray> outputs;
  auto alloc = [&](const Type& t) {
    const TensorTypeNode& tt = expect_tensor(t, "output");
    outputs.push_back(NDArray::empty(tt.shape, tt.dtype));
  };
  if (const auto* tu = as_tuple(out))
    for (const auto& f : tu->fields) alloc(f);
  else
    alloc(out);
  KernelRegistry::global().get(def.kernel)(full, inputs, outputs);
  return outputs;
}

inline NDArray tensor(Shape shape, const std::vector<double>& values, DType dtype = DType::kFloat32) {
  return NDArray::from_doubles(std::move(shape), dtype, values);
}

inline void expect_close(const NDArray& actual, const std::vector<double>& expected, double atol = 1e-5,
                         double rtol = 1e-5) {
  ASSERT_EQ(actual.numel(), static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    double a = actual.at(static_cast<int64_t>(i));
    EXPECT_NEAR(a, expected[i], atol + rtol * std::abs(expected[i])) << "at flat index " << i;
  }
}

}  // namespace kiln::testing
