// Attribute declarations of the slicing and gather/scatter ops (strided_slice, take,
// gather_elements, scatter_elements, gather_nd, scatter_nd); see kiln/attrs/reflect.h for the
// mechanism. src/op/transform/slice.cc and gather_scatter.cc derive the schemas from these, the
// reference kernels (src/runtime/kernels/transform) and the ONNX converters build and read the
// same structs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/attrs/reflect.h"

namespace kiln {

struct StridedSliceAttrs {
  std::vector<int64_t> begin;
  std::vector<int64_t> end;
  std::optional<std::vector<int64_t>> strides;
  std::optional<std::vector<int64_t>> axes;
  std::string slice_mode = "end";

  template <class V>
  void visit(V& v) {
    v("begin", begin, "First index per sliced axis; negative counts from the end.", kRequired);
    v("end", end, "End (exclusive) per sliced axis, or a size with slice_mode=\"size\"; missing ones reach the end.",
      kRequired);
    v("strides", strides, "Step per sliced axis (non-zero, may be negative); None for 1.");
    v("axes", axes, "The dims begin[i], end[i], strides[i] apply to; None for the leading dims.");
    v("slice_mode", slice_mode, "\"end\" (end is an index) or \"size\" (end is a size, -1 for the rest).");
  }
  void validate() const;
};

struct TakeAttrs {
  std::optional<int64_t> axis;
  std::string mode = "clip";

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Axis taken along; None takes from the flattened data.");
    v("mode", mode, "Indices beyond [-n, n): \"clip\" clamps, \"wrap\" wraps around, \"fast\" is an error.");
  }
  void validate() const;
  // data.shape[:axis] + indices.shape + data.shape[axis+1:] (the indices' shape without an axis).
  std::vector<int64_t> result_shape(const std::vector<int64_t>& data, const std::vector<int64_t>& indices) const;
};

struct GatherElementsAttrs {
  int64_t axis = 0;

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Dimension the index replaces; negative counts from the end.");
  }
};

// How scatter_elements and scatter_nd combine an update with the value it lands on.
enum class ScatterReduction : uint8_t { kUpdate, kAdd, kMul, kMin, kMax };
// Throws naming `attr` unless `name` is update, add, mul, min or max.
ScatterReduction parse_scatter_reduction(const std::string& attr, const std::string& name);

struct ScatterElementsAttrs {
  int64_t axis = 0;
  std::string reduction = "update";

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Dimension the index replaces; negative counts from the end.");
    v("reduction", reduction, "update (replace), add, mul, min or max (accumulate in index order).");
  }
  void validate() const { parse_scatter_reduction("reduction", reduction); }
  ScatterReduction kind() const { return parse_scatter_reduction("reduction", reduction); }
};

struct GatherNDAttrs {
  int64_t batch_dims = 0;
  std::optional<int64_t> index_rank;

  template <class V>
  void visit(V& v) {
    v("batch_dims", batch_dims, "Leading axes of the indices' positions that match leading axes of 'data'.");
    v("index_rank", index_rank, "Relay's M, the index length (informational; the first axis of 'indices').");
  }
};

struct ScatterNDAttrs {
  std::string mode = "update";

  template <class V>
  void visit(V& v) {
    v("mode", mode, "update (replace), add, mul, min or max (accumulate in index order).");
  }
  void validate() const { parse_scatter_reduction("mode", mode); }
  ScatterReduction kind() const { return parse_scatter_reduction("mode", mode); }
};

}  // namespace kiln
