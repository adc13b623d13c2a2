// Checks shared by the type relations of the elementwise, broadcast and reduction ops:
// which dtypes an argument may have, equal dtypes of two arguments, broadcasting with
// messages that name the arguments, and the op name on every error a relation throws.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "op/op_util.h"

namespace kiln {

// Which element types an op accepts.
enum class DTypeClass : uint8_t {
  kAny,      // every dtype, bool included (comparisons, identity ops)
  kNumeric,  // every dtype but bool (arithmetic)
  kFloat,    // float16, bfloat16, float32, float64 (transcendental functions)
};

inline bool dtype_in_class(DType t, DTypeClass c) {
  switch (c) {
    case DTypeClass::kAny: return true;
    case DTypeClass::kNumeric: return t != DType::kBool;
    case DTypeClass::kFloat: return is_float(t);
  }
  return false;
}

inline const char* dtype_class_name(DTypeClass c) {
  switch (c) {
    case DTypeClass::kAny: return "any dtype";
    case DTypeClass::kNumeric: return "a numeric (non-bool) dtype";
    case DTypeClass::kFloat: return "a float dtype";
  }
  return "?";
}

inline void require_dtype(const std::string& arg_name, DType t, DTypeClass c) {
  if (!dtype_in_class(t, c))
    throw std::move(Error(cat("argument '", arg_name, "' has an unsupported dtype"))
                        .expected(dtype_class_name(c), std::string(dtype_name(t))));
}

inline void require_same_dtype(const std::string& first_name, DType first, const std::string& second_name,
                               DType second) {
  if (first != second)
    throw std::move(Error(cat("argument '", second_name, "' has dtype ", dtype_name(second), " but '", first_name,
                              "' has dtype ", dtype_name(first), "; they must be equal"))
                        .expected(std::string(dtype_name(first)), std::string(dtype_name(second))));
}

// broadcast_shapes() with an error that names both arguments and their shapes.
inline Shape broadcast_args(const std::string& first_name, const Shape& first, const std::string& second_name,
                            const Shape& second) {
  try {
    return broadcast_shapes(first, second);
  } catch (const Error& e) {
    throw Error(cat("cannot broadcast '", first_name, "' of shape ", shape_str(first), " with '", second_name,
                    "' of shape ", shape_str(second), " (", e.message(), ")"));
  }
}

// The axis attribute `attr_name` mapped into [0, rank of data); the error names the
// attribute, its value and the data shape.
inline int64_t checked_axis(int64_t axis, const std::string& attr_name, const Shape& data_shape) {
  const int64_t ndim = static_cast<int64_t>(data_shape.size());
  if (axis < -ndim || axis >= ndim)
    throw std::move(
        Error(cat("attribute '", attr_name, "' = ", axis, " is out of range for data of shape ", shape_str(data_shape)))
            .expected(cat("an axis in [", -ndim, ", ", ndim, ")"), cat(axis)));
  return axis < 0 ? axis + ndim : axis;
}

// Wraps a relation so that every error it throws names the op.
inline TypeRelation named_relation(std::string op_name, TypeRelation relation) {
  return [op_name = std::move(op_name), relation = std::move(relation)](const std::vector<Type>& args,
                                                                        const Attrs& attrs) {
    try {
      return relation(args, attrs);
    } catch (Error& e) {
      e.op(op_name);
      throw;
    }
  };
}

}  // namespace kiln
