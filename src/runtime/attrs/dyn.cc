// The dyn.* ops' operand values read as the static ops' attributes and result shapes; the
// dyn kernels and DynamicToStatic both go through these.
#include "kiln/attrs/dyn.h"

#include <algorithm>
#include <cmath>

#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

namespace {

// The values of a 1-D (or scalar) integer operand.
std::vector<int64_t> ints_of(const NDArray& value, const std::string& what) {
  if (!is_int(value.dtype()))
    throw std::move(Error(cat("operand '", what, "' must hold integers"))
                        .expected("an integer tensor", std::string(dtype_name(value.dtype()))));
  if (value.ndim() > 1)
    throw std::move(
        Error(cat("operand '", what, "' must be a list")).expected("rank 0 or 1", shape_str(value.shape())));
  return value.to_ints();
}

int64_t axis_in(int64_t axis, int64_t ndim, const std::string& what) {
  if (axis < -ndim || axis >= ndim)
    throw std::move(Error(cat("operand '", what, "' holds axis ", axis, ", out of range"))
                        .expected(cat("an axis in [", -ndim, ", ", ndim, ")"), cat(axis)));
  return axis < 0 ? axis + ndim : axis;
}

// Per axis of a result of rank `ndim`, whether `axes` names it; repeats are errors.
std::vector<bool> named_axes(const NDArray& axes, int64_t ndim, const std::string& what) {
  std::vector<bool> named(static_cast<size_t>(ndim), false);
  for (int64_t a : ints_of(axes, what)) {
    auto d = static_cast<size_t>(axis_in(a, ndim, what));
    if (named[d])
      throw std::move(Error(cat("operand '", what, "' lists axis ", d, " twice")).expected("distinct axes", cat(a)));
    named[d] = true;
  }
  return named;
}

}  // namespace

ReshapeAttrs reshape_static_attrs(const DynReshapeAttrs& attrs, const NDArray& shape) {
  ReshapeAttrs out;
  out.newshape = ints_of(shape, "shape");
  for (int64_t d : out.newshape)
    if (d < -1) throw std::move(Error("reshape's shape holds an invalid extent").expected("extents >= -1", cat(d)));
  out.allowzero = attrs.allowzero;
  return out;
}

Shape dyn_reshape_shape(const Shape& input, const std::vector<int64_t>& shape, bool allowzero) {
  Shape out;
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t d = shape[i];
    if (d == 0 && !allowzero) {
      if (i >= input.size())
        throw std::move(Error(cat("reshape's shape copies input dim ", i, " beyond the input"))
                            .expected(cat("rank above ", i), shape_str(input)));
      d = input[i];
    } else if (d == -1) {
      if (infer_at >= 0)
        throw std::move(Error("reshape's shape holds two -1").expected("at most one -1", shape_str(shape)));
      infer_at = static_cast<int64_t>(i);
      d = 1;
    } else if (d < 0) {
      throw std::move(Error("reshape's shape holds an invalid extent").expected("extents >= -1", shape_str(shape)));
    }
    out.push_back(d);
    known *= d;
  }
  int64_t total = num_elements(input);
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0)
      throw std::move(Error("reshape cannot infer the -1 of its shape")
                          .expected(cat("a shape dividing ", shape_str(input)), shape_str(shape)));
    out[static_cast<size_t>(infer_at)] = total / known;
  } else if (known != total) {
    throw std::move(Error("reshape's shape changes the number of elements").expected(shape_str(input), shape_str(out)));
  }
  return out;
}

StridedSliceAttrs strided_slice_static_attrs(const NDArray& begin, const NDArray& end, const NDArray& axes,
                                             const NDArray& strides) {
  StridedSliceAttrs out;
  out.begin = ints_of(begin, "begin");
  out.end = ints_of(end, "end");
  out.axes = ints_of(axes, "axes");
  out.strides = ints_of(strides, "strides");
  if (out.end.size() != out.begin.size() || out.axes->size() != out.begin.size() ||
      out.strides->size() != out.begin.size())
    throw std::move(Error("slice operands differ in length")
                        .expected(cat(out.begin.size(), " ends, axes and strides"),
                                  cat(out.end.size(), ", ", out.axes->size(), ", ", out.strides->size())));
  out.validate();
  return out;
}

Shape dyn_broadcast_shape(const Shape& input, const NDArray& shape) {
  std::vector<int64_t> target = ints_of(shape, "shape");
  size_t rank = std::max(input.size(), target.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    size_t from_end = rank - 1 - i;
    int64_t a = from_end < input.size() ? input[input.size() - 1 - from_end] : 1;
    int64_t b = from_end < target.size() ? target[target.size() - 1 - from_end] : 1;
    if (a != b && a != 1 && b != 1)
      throw std::move(Error(cat("shape ", shape_str(target), " does not broadcast with the data"))
                          .expected(cat("a shape broadcasting with ", shape_str(input)), shape_str(target)));
    out[i] = a == 1 ? b : a;
  }
  return out;
}

Shape dyn_tile_shape(const Shape& input, const NDArray& repeats) {
  std::vector<int64_t> r = ints_of(repeats, "repeats");
  if (r.size() != input.size())
    throw std::move(Error("tile needs one repeat per axis").expected(cat(input.size(), " repeats"), cat(r.size())));
  Shape out(input.size());
  for (size_t i = 0; i < r.size(); ++i) {
    if (r[i] < 0) throw std::move(Error("tile's repeats must not be negative").expected(">= 0", cat(r[i])));
    out[i] = input[i] * r[i];
  }
  return out;
}

FullAttrs full_static_attrs(const DynFullAttrs& attrs, const NDArray& shape) {
  FullAttrs out;
  out.shape = ints_of(shape, "shape");
  out.dtype = attrs.dtype;
  out.validate();
  return out;
}

int64_t dyn_arange_length(const NDArray& start, const NDArray& limit, const NDArray& delta) {
  if (start.numel() != 1 || limit.numel() != 1 || delta.numel() != 1)
    throw std::move(Error("arange's start, limit and delta must be scalars")
                        .expected("one element each", cat(start.numel(), ", ", limit.numel(), ", ", delta.numel())));
  if (delta.at(0) == 0) throw Error("arange's delta must not be 0");
  double count = std::ceil((limit.at(0) - start.at(0)) / delta.at(0));
  if (count > static_cast<double>(int64_t{1} << 31))
    throw std::move(Error("arange's result is too large").expected("at most 2^31 elements", cat(count)));
  return count > 0 ? static_cast<int64_t>(count) : 0;
}

PadAttrs pad_static_attrs(const DynPadAttrs& attrs, const NDArray& pads, int64_t ndim) {
  std::vector<int64_t> amounts = ints_of(pads, "pads");
  std::vector<int64_t> axes;
  if (attrs.axes)
    for (int64_t a : *attrs.axes) axes.push_back(axis_in(a, ndim, "axes"));
  else
    for (int64_t a = 0; a < ndim; ++a) axes.push_back(a);
  if (amounts.size() != 2 * axes.size())
    throw std::move(Error("pads must hold a begin and an end per padded axis")
                        .expected(cat(2 * axes.size(), " values"), cat(amounts.size())));
  std::vector<std::pair<int64_t, int64_t>> pairs(static_cast<size_t>(ndim), {0, 0});
  for (size_t i = 0; i < axes.size(); ++i) pairs[static_cast<size_t>(axes[i])] = {amounts[i], amounts[i + axes.size()]};
  PadAttrs out;
  out.pad_width = PadAttrs::width_of(pairs);
  static_cast<PadModeAttrs&>(out) = attrs;
  out.validate();
  return out;
}

TopKAttrs topk_static_attrs(const DynTopKAttrs& attrs, const NDArray& k) {
  std::vector<int64_t> values = ints_of(k, "k");
  if (values.size() != 1) throw std::move(Error("topk's k must be one value").expected("1 value", cat(values.size())));
  // topk's k < 1 takes the whole axis; ONNX's K does not.
  if (values[0] < 1) throw std::move(Error("topk's k must be positive").expected(">= 1", cat(values[0])));
  TopKAttrs out;
  static_cast<TopKModeAttrs&>(out) = attrs;
  out.k = values[0];
  out.validate();
  return out;
}

Shape dyn_expand_dims_shape(const Shape& input, const NDArray& axes) {
  auto rank = static_cast<int64_t>(input.size() + static_cast<size_t>(axes.numel()));
  std::vector<bool> inserted = named_axes(axes, rank, "axes");
  Shape out;
  size_t next = 0;
  for (size_t d = 0; d < inserted.size(); ++d) out.push_back(inserted[d] ? 1 : input[next++]);
  return out;
}

Shape dyn_squeeze_shape(const Shape& input, const NDArray& axes) {
  std::vector<bool> removed = named_axes(axes, static_cast<int64_t>(input.size()), "axes");
  Shape out;
  for (size_t d = 0; d < input.size(); ++d) {
    if (!removed[d]) {
      out.push_back(input[d]);
    } else if (input[d] != 1) {
      throw std::move(
          Error(cat("squeeze of axis ", d, ", which is not a unit dim")).expected("extent 1", shape_str(input)));
    }
  }
  return out;
}

CumsumAttrs cumsum_static_attrs(const DynCumsumAttrs& attrs, const NDArray& axis, int64_t ndim) {
  std::vector<int64_t> values = ints_of(axis, "axis");
  if (values.size() != 1)
    throw std::move(Error("cumsum's axis must be one value").expected("1 value", cat(values.size())));
  CumsumAttrs out;
  static_cast<CumsumModeAttrs&>(out) = attrs;
  out.axis = axis_in(values[0], ndim, "axis");
  return out;
}

int64_t trilu_diagonal(const NDArray& k) {
  std::vector<int64_t> values = ints_of(k, "k");
  if (values.size() != 1) throw std::move(Error("trilu's k must be one value").expected("1 value", cat(values.size())));
  return values[0];
}

void DynReduceAttrs::validate() const {
  static const std::vector<std::string> reducers{"sum", "mean", "prod", "max", "min"};
  if (std::find(reducers.begin(), reducers.end(), reducer) == reducers.end())
    throw std::move(Error("attribute 'reducer' names no reduction").expected("sum, mean, prod, max or min", reducer));
}

std::optional<ReduceAttrs> reduce_static_attrs(const DynReduceAttrs& attrs, const NDArray& axes) {
  ReduceAttrs out;
  out.axis = ints_of(axes, "axes");
  if (out.axis->empty() && attrs.noop_with_empty_axes) return std::nullopt;
  out.keepdims = attrs.keepdims;
  return out;
}

SplitAttrs split_static_attrs(const DynSplitAttrs& attrs, const NDArray& sizes, const Shape& input) {
  const int64_t axis = axis_in(attrs.axis, static_cast<int64_t>(input.size()), "axis");
  std::vector<int64_t> parts = ints_of(sizes, "sizes");
  std::vector<int64_t> indices;
  int64_t at = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] < 0) throw std::move(Error("split's sizes must not be negative").expected(">= 0", cat(parts[i])));
    at += parts[i];
    if (i + 1 < parts.size()) indices.push_back(at);
  }
  const int64_t extent = input[static_cast<size_t>(axis)];
  if (at != extent)
    throw std::move(Error(cat("split's sizes do not add up to axis ", axis, " of ", shape_str(input)))
                        .expected(cat(extent), cat(at)));
  if (parts.empty()) throw std::move(Error("split's sizes must not be empty").expected("at least 1 value", "none"));
  SplitAttrs out;
  // One part is one section: an empty index list would not say its kind.
  out.indices_or_sections = parts.size() == 1 ? AttrValue(int64_t{1}) : AttrValue(indices);
  out.axis = axis;
  return out;
}

OneHotAttrs one_hot_static_attrs(const OneHotAxisAttrs& attrs, const NDArray& depth) {
  if (depth.numel() != 1)
    throw std::move(Error("one_hot's depth must be one value").expected("1 value", shape_str(depth.shape())));
  OneHotAttrs out;
  static_cast<OneHotAxisAttrs&>(out) = attrs;
  out.depth = static_cast<int64_t>(depth.at(0));
  if (out.depth < 1) throw std::move(Error("one_hot's depth must be positive").expected(">= 1", cat(out.depth)));
  out.validate();
  return out;
}

// ONNX's roi, scales and sizes list a value per axis of the data, in its layout; only the
// spatial axes may change.
Resize2DAttrs resize2d_static_attrs(const ResizeMethodAttrs& method, const Shape& input, const NDArray& roi,
                                    const NDArray& scales, const NDArray& sizes) {
  if (input.size() != 4) throw std::move(Error("only 4-D tensors can be resized").expected("rank 4", shape_str(input)));
  const size_t h = method.layout == "NHWC" ? 1 : 2, w = h + 1;
  Resize2DAttrs out;
  static_cast<ResizeMethodAttrs&>(out) = method;
  Shape result = input;
  if (sizes.numel() > 0) {
    std::vector<int64_t> values = ints_of(sizes, "sizes");
    if (values.size() != 4)
      throw std::move(Error("resize's sizes must have a value per axis").expected("4 values", cat(values.size())));
    result = values;
  } else {
    std::vector<double> ratios = scales.to_doubles();
    if (ratios.size() != 4)
      throw std::move(
          Error("resize needs scales or sizes with a value per axis").expected("4 values", cat(ratios.size())));
    for (size_t d = 0; d < 4; ++d)
      result[d] = static_cast<int64_t>(std::floor(static_cast<double>(input[d]) * ratios[d]));
    out.scales = std::vector<double>{ratios[h], ratios[w]};
  }
  for (size_t d = 0; d < 4; ++d)
    if (d != h && d != w && result[d] != input[d])
      throw std::move(Error("resizing the batch or channel axis is not supported")
                          .expected(cat("extent ", input[d], " at axis ", d), shape_str(result)));
  out.size = {result[h], result[w]};
  if (method.coordinate_transformation_mode == "tf_crop_and_resize") {
    std::vector<double> bounds = roi.to_doubles();
    if (bounds.size() != 8)
      throw std::move(Error("tf_crop_and_resize needs roi: the starts then the ends of every axis")
                          .expected("8 values", cat(bounds.size())));
    out.roi = {bounds[h], bounds[w], bounds[4 + h], bounds[4 + w]};
  }
  out.validate();
  return out;
}

}  // namespace kiln
