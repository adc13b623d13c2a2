// Attribute declarations of the reductions (sum, mean, prod, max, min, argmax, argmin); see
// kiln/attrs/reflect.h for the mechanism. src/op/tensor/reduce.cc derives the schemas from
// these, the reference kernels (src/runtime/kernels/tensor/reduce.cc) and the ONNX converters
// build and read the same structs.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/attrs/reflect.h"

namespace kiln {

// sum, mean, prod, max, min (as Relay).
struct ReduceAttrs {
  std::optional<std::vector<int64_t>> axis;
  bool keepdims = false;
  bool exclude = false;

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Axes reduced (negative counts from the end); None or [] reduces every axis.");
    v("keepdims", keepdims, "Keep each reduced axis with extent 1.");
    v("exclude", exclude, "Reduce the axes NOT listed in 'axis' (ignored when every axis is reduced).");
  }
  // Per axis of data of `shape`, whether it is reduced; throws naming 'axis' when an axis is out
  // of range or repeated. Relations and kernels share it so both agree.
  std::vector<bool> reduced_axes(const std::vector<int64_t>& shape) const;
};

// argmax, argmin.
struct ArgReduceAttrs : ReduceAttrs {
  bool select_last_index = false;

  template <class V>
  void visit(V& v) {
    ReduceAttrs::visit(v);
    v("select_last_index", select_last_index, "Report the last of equal extremes rather than the first.");
  }
};

}  // namespace kiln
