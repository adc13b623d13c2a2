// Attribute declarations of the dyn.* ops: forms of reshape, strided_slice, broadcast_to,
// tile, full, arange, nn.pad, topk, expand_dims, squeeze and the reductions that take their
// shape-like operand (a shape, slice bounds, pads, repeats, k, axes) as a tensor argument
// known only at run time, as Relay's dyn namespace does. Their relations give '?' for the
// extents that depend on those values; their kernels size the result from the values.
// DynamicToStatic turns a dyn call whose operands became constants into the static op,
// through the *_static_attrs functions below (the one place reading the operands' values,
// shared with the kernels so both agree). Operand conventions are ONNX's: reshape's 0
// copies and -1 infers, slice bounds are clamped, pads list all begins then all ends.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/attrs/image.h"
#include "kiln/attrs/indexing.h"
#include "kiln/attrs/pad.h"
#include "kiln/attrs/reduce.h"
#include "kiln/attrs/tensor.h"
#include "kiln/attrs/transform.h"
#include "kiln/runtime/ndarray.h"

namespace kiln {

// dyn.reshape(data, shape)
struct DynReshapeAttrs {
  int64_t allowzero = 0;

  template <class V>
  void visit(V& v) {
    v("allowzero", allowzero, "1: a 0 in shape is a zero extent, not a copy of the input dim (0 or 1).");
  }
};
ReshapeAttrs reshape_static_attrs(const DynReshapeAttrs& attrs, const NDArray& shape);
// reshape's result for ONNX's shape values (0 copies unless allowzero, one -1 is inferred).
Shape dyn_reshape_shape(const Shape& input, const std::vector<int64_t>& shape, bool allowzero);

// dyn.strided_slice(data, begin, end, axes, strides): ONNX Slice with every operand a tensor.
StridedSliceAttrs strided_slice_static_attrs(const NDArray& begin, const NDArray& end, const NDArray& axes,
                                             const NDArray& strides);

// dyn.broadcast_to(data, shape): ONNX Expand (the shape and the data's broadcast each other).
Shape dyn_broadcast_shape(const Shape& input, const NDArray& shape);

// dyn.tile(data, repeats)
Shape dyn_tile_shape(const Shape& input, const NDArray& repeats);

// dyn.full(fill_value, shape)
struct DynFullAttrs {
  std::string dtype{};

  template <class V>
  void visit(V& v) {
    v("dtype", dtype, "Dtype of the result, converted to as cast converts; \"\" for fill_value's dtype.");
  }
};
FullAttrs full_static_attrs(const DynFullAttrs& attrs, const NDArray& shape);

// dyn.arange(start, limit, delta): ONNX Range, scalars of one dtype; no attributes.
int64_t dyn_arange_length(const NDArray& start, const NDArray& limit, const NDArray& delta);

// dyn.pad(data, pads, pad_value): pads = [begin per axis..., end per axis...] over `axes`.
struct DynPadAttrs : PadModeAttrs {
  std::optional<std::vector<int64_t>> axes{};

  template <class V>
  void visit(V& v) {
    PadModeAttrs::visit(v);
    v("axes", axes, "The axes pads applies to (negative counts from the end); None for every axis.");
  }
};
PadAttrs pad_static_attrs(const DynPadAttrs& attrs, const NDArray& pads, int64_t ndim);

// dyn.topk(data, k): topk's attributes but k.
using DynTopKAttrs = TopKModeAttrs;
TopKAttrs topk_static_attrs(const DynTopKAttrs& attrs, const NDArray& k);

// dyn.expand_dims(data, axes): ONNX Unsqueeze (axes index the result); dyn.squeeze(data,
// axes): ONNX Squeeze. Both only reinterpret the buffer, so the result shape says it all.
Shape dyn_expand_dims_shape(const Shape& input, const NDArray& axes);
Shape dyn_squeeze_shape(const Shape& input, const NDArray& axes);

// dyn.reduce(data, axes): the reduction `reducer` (sum, mean, prod, max or min) over axes given
// as a tensor (ONNX ReduceSum from opset 13).
struct DynReduceAttrs {
  std::string reducer = "sum";
  bool keepdims = false;
  bool noop_with_empty_axes = false;

  template <class V>
  void visit(V& v) {
    v("reducer", reducer, "The static reduction: sum, mean, prod, max or min.", kRequired);
    v("keepdims", keepdims, "Keep each reduced axis with extent 1.");
    v("noop_with_empty_axes", noop_with_empty_axes, "Empty axes leave the data as it is (else reduce every axis).");
  }
  void validate() const;
};
// None when the axes are empty and noop_with_empty_axes holds: the result is the data.
std::optional<ReduceAttrs> reduce_static_attrs(const DynReduceAttrs& attrs, const NDArray& axes);

// dyn.cumsum(data, axis): ONNX CumSum, the axis a one-value tensor; cumsum's other attributes.
using DynCumsumAttrs = CumsumModeAttrs;
CumsumAttrs cumsum_static_attrs(const DynCumsumAttrs& attrs, const NDArray& axis, int64_t ndim);

// dyn.trilu(data, k): ONNX Trilu, the upper (or lower) triangle of the last two axes from
// diagonal k on, k a one-value tensor; the elements outside are 0.
struct DynTriluAttrs {
  bool upper = true;

  template <class V>
  void visit(V& v) {
    v("upper", upper, "Keep the upper triangle (j - i >= k), else the lower one (j - i <= k).");
  }
};
int64_t trilu_diagonal(const NDArray& k);
// Whether element (i, j) of each matrix is kept.
inline bool trilu_keeps(const DynTriluAttrs& attrs, int64_t k, int64_t i, int64_t j) {
  return attrs.upper ? j - i >= k : j - i <= k;
}

// dyn.split(data, sizes): ONNX Split with the part sizes a run-time tensor; a tuple of one
// part per size.
struct DynSplitAttrs {
  int64_t axis = 0;

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Axis the data is cut along; negative counts from the end.");
  }
};
SplitAttrs split_static_attrs(const DynSplitAttrs& attrs, const NDArray& sizes, const Shape& input);

// dyn.one_hot(indices, on_value, off_value, depth): one_hot with the depth a run-time scalar
// (ONNX OneHot); the attributes are one_hot's but the depth.
OneHotAttrs one_hot_static_attrs(const OneHotAxisAttrs& attrs, const NDArray& depth);

// dyn.resize2d(data, roi, scales, sizes): ONNX Resize of a 4-D tensor with its operands given
// at run time, a value per data axis; sizes wins when it is not empty, roi is read by
// tf_crop_and_resize only. The attributes are image.resize2d's but the size.
Resize2DAttrs resize2d_static_attrs(const ResizeMethodAttrs& method, const Shape& input, const NDArray& roi,
                                    const NDArray& scales, const NDArray& sizes);

}  // namespace kiln
