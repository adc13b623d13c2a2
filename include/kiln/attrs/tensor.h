// Attribute declarations of the tensor ops with attributes (cumsum, einsum, zeros / ones /
// full, topk); see kiln/attrs/reflect.h for the mechanism. The op files (src/op/tensor) derive
// their schemas from these, the reference kernels (src/runtime/kernels/tensor) and the ONNX
// converters build and read the same structs. The binary ops, where and det have none.
// Fields without a default are still written `{}`: GCC warns (-Wmissing-field-initializers)
// when a designated initializer, as the converters write them, leaves out a field without one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/attrs/reflect.h"
#include "kiln/runtime/dtype.h"

namespace kiln {

// cumsum's attributes but the axis (dyn.cumsum takes it at run time).
struct CumsumModeAttrs {
  bool exclusive = false;
  bool reverse = false;

  template <class V>
  void visit(V& v) {
    v("exclusive", exclusive, "Leave each element out of its own sum (the first sum is 0).");
    v("reverse", reverse, "Sum from the end of the axis.");
  }
};

struct CumsumAttrs : CumsumModeAttrs {
  std::optional<int64_t> axis{};

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Axis summed along (negative counts from the end); None sums the flattened data.");
    CumsumModeAttrs::visit(v);
  }
};

struct EinsumAttrs {
  std::string equation{};

  template <class V>
  void visit(V& v) {
    v("equation", equation, "numpy.einsum's notation, e.g. \"ij,jk->ik\"; \"...\" stands for broadcast dims.",
      kRequired);
  }
};

// zeros, ones.
struct ConstantFillAttrs {
  std::vector<int64_t> shape{};
  std::string dtype = "float32";

  template <class V>
  void visit(V& v) {
    v("shape", shape, "Shape of the result (extents >= 0).", kRequired);
    v("dtype", dtype, "Dtype of the result; \"\" for float32.");
  }
  void validate() const;
  // The result dtype; "" means float32.
  DType result_dtype() const;
};

struct FullAttrs {
  std::vector<int64_t> shape{};
  std::string dtype{};

  template <class V>
  void visit(V& v) {
    v("shape", shape, "Shape of the result (extents >= 0).", kRequired);
    v("dtype", dtype, "Dtype of the result, converted to as cast converts; \"\" for fill_value's dtype.");
  }
  void validate() const;
  // The result dtype; "" means `fill_dtype`.
  DType result_dtype(DType fill_dtype) const;
};

// topk's attributes but k (dyn.topk takes it at run time).
struct TopKModeAttrs {
  int64_t axis = -1;
  std::string ret_type = "both";
  bool is_ascend = false;
  std::string dtype = "int64";

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Axis selected along; negative counts from the end.");
    v("ret_type", ret_type, "Result: \"both\" (the tuple (values, indices)), \"values\" or \"indices\".");
    v("is_ascend", is_ascend, "Select the smallest elements, ascending, rather than the largest, descending.");
    v("dtype", dtype, "Integer dtype of the indices.");
  }
};

struct TopKAttrs : TopKModeAttrs {
  int64_t k = 1;

  template <class V>
  void visit(V& v) {
    v("k", k, "Number of elements selected; k < 1 selects the whole axis.");
    TopKModeAttrs::visit(v);
  }
  void validate() const;
  DType indices_dtype() const;
  bool returns_values() const { return ret_type != "indices"; }
  bool returns_indices() const { return ret_type != "values"; }
};

}  // namespace kiln
