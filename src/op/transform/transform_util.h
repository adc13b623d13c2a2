// Helpers shared by the data-movement op definitions (reshape, transpose, concat, slice).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "op/op_util.h"

namespace kiln {

// Wraps a type relation so that its errors name the op even when it is called directly
// (tests, constant folding), not only through type inference.
inline TypeRelation relation_of(std::string op, TypeRelation relation) {
  return [op = std::move(op), relation = std::move(relation)](const std::vector<Type>& args, const Attrs& attrs) {
    try {
      return relation(args, attrs);
    } catch (Error& e) {
      e.op(op);
      throw;
    }
  };
}

// "[2, -1, 0]" for an attribute list in messages.
inline std::string ints_str(const std::vector<int64_t>& values) { return "[" + join(values) + "]"; }

}  // namespace kiln
