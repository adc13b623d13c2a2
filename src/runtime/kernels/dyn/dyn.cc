// Reference kernels of the dyn.* ops (kiln/attrs/dyn.h): each reads its shape-like operands,
// sizes its result from their values (the interpreter leaves outputs of unknown shape
// unallocated) and runs the static op's kernel, or copies directly where there is none.
#include "kiln/attrs/dyn.h"

#include <cstring>

#include "kiln/support/strings.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/transform/copy_util.h"
#include "runtime/kernels/transform/slice_plan.h"

namespace kiln {

namespace {

void run_static(const std::string& op, const Attrs& attrs, std::span<const NDArray> inputs,
                std::span<NDArray> outputs) {
  KernelRegistry::global().get(op)(attrs, inputs, outputs);
}

// Allocates `out` as `shape` unless the caller already did (a static type).
void size_output(NDArray& out, const Shape& shape, DType dtype, const std::string& op) {
  if (!out.defined()) {
    out = NDArray::empty(shape, dtype);
    return;
  }
  if (out.shape() != shape || out.dtype() != dtype)
    throw std::move(Error(cat(op, ": the output was allocated with another shape"))
                        .expected(shape_str(shape), shape_str(out.shape())));
}

// Kernels that only reinterpret the buffer: reshape, expand_dims, squeeze.
void copy_as(const NDArray& data, const Shape& shape, NDArray& out, const std::string& op) {
  size_output(out, shape, data.dtype(), op);
  std::memcpy(out.raw(), data.raw(), data.nbytes());
}

void dyn_reshape_kernel(const DynReshapeAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.reshape", in, 2, out, 1);
  ReshapeAttrs fixed = reshape_static_attrs(attrs, in[1]);
  copy_as(in[0], dyn_reshape_shape(in[0].shape(), fixed.newshape, fixed.allowzero != 0), out[0], "dyn.reshape");
}

void dyn_strided_slice_kernel(const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.strided_slice", in, 5, out, 1);
  StridedSliceAttrs fixed = strided_slice_static_attrs(in[1], in[2], in[3], in[4]);
  Shape shape;
  for (const AxisSlice& s : plan_strided_slice(parse_strided_slice(fixed, in[0].ndim()), in[0].shape()))
    shape.push_back(s.length);
  size_output(out[0], shape, in[0].dtype(), "dyn.strided_slice");
  run_static("strided_slice", attrs_to(fixed), in.first(1), out);
}

// Every output element copied from the input element `source` maps it to.
template <class F>
void gather_elements(const NDArray& data, NDArray& out, F source) {
  const size_t bytes = dtype_bytes(data.dtype());
  const auto* from = static_cast<const uint8_t*>(data.raw());
  auto* to = static_cast<uint8_t*>(out.raw());
  for (int64_t i = 0; i < out.numel(); ++i)
    std::memcpy(to + static_cast<size_t>(i) * bytes, from + static_cast<size_t>(source(i)) * bytes, bytes);
}

void dyn_broadcast_to_kernel(const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.broadcast_to", in, 2, out, 1);
  Shape shape = dyn_broadcast_shape(in[0].shape(), in[1]);
  size_output(out[0], shape, in[0].dtype(), "dyn.broadcast_to");
  BroadcastIndexer source(in[0].shape(), shape);
  gather_elements(in[0], out[0], source);
}

void dyn_tile_kernel(const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.tile", in, 2, out, 1);
  const Shape& input = in[0].shape();
  Shape shape = dyn_tile_shape(input, in[1]);
  size_output(out[0], shape, in[0].dtype(), "dyn.tile");
  gather_elements(in[0], out[0], [&](int64_t i) {
    std::vector<int64_t> index = unravel(i, shape);
    for (size_t d = 0; d < index.size(); ++d) index[d] %= input[d];
    return ravel(index, input);
  });
}

void dyn_full_kernel(const DynFullAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.full", in, 2, out, 1);
  FullAttrs fixed = full_static_attrs(attrs, in[1]);
  size_output(out[0], fixed.shape, fixed.result_dtype(in[0].dtype()), "dyn.full");
  run_static("full", attrs_to(fixed), in.first(1), out);
}

void dyn_arange_kernel(const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.arange", in, 3, out, 1);
  const NDArray &start = in[0], &delta = in[2];
  int64_t n = dyn_arange_length(start, in[1], delta);
  size_output(out[0], {n}, start.dtype(), "dyn.arange");
  NDArray& result = out[0];
  for (int64_t i = 0; i < n; ++i) {
    if (is_int(start.dtype()))
      store_from_int(result.raw(), result.dtype(), static_cast<size_t>(i), start.int_at(0) + i * delta.int_at(0));
    else
      result.set(i, start.at(0) + static_cast<double>(i) * delta.at(0));
  }
}

void dyn_pad_kernel(const DynPadAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.pad", in, 3, out, 1);
  PadAttrs fixed = pad_static_attrs(attrs, in[1], in[0].ndim());
  Shape shape = in[0].shape();
  std::vector<std::pair<int64_t, int64_t>> pairs = fixed.pairs();
  for (size_t d = 0; d < shape.size(); ++d) {
    shape[d] += pairs[d].first + pairs[d].second;
    if (shape[d] < 0) throw std::move(Error("pads crop more than the data holds").expected(">= 0", shape_str(shape)));
  }
  size_output(out[0], shape, in[0].dtype(), "dyn.pad");
  NDArray operands[] = {in[0], in[2]};
  run_static("nn.pad", attrs_to(fixed), operands, out);
}

void dyn_topk_kernel(const DynTopKAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.topk", in, 2, out, attrs.ret_type == "both" ? 2 : 1);
  TopKAttrs fixed = topk_static_attrs(attrs, in[1]);
  Shape shape = in[0].shape();
  int64_t axis = wrap_axis(fixed.axis, in[0].ndim());
  if (fixed.k > shape[static_cast<size_t>(axis)])
    throw std::move(
        Error("topk's k exceeds the axis").expected(cat("k <= ", shape[static_cast<size_t>(axis)]), cat(fixed.k)));
  shape[static_cast<size_t>(axis)] = fixed.k;
  size_t next = 0;
  if (fixed.returns_values()) size_output(out[next++], shape, in[0].dtype(), "dyn.topk");
  if (fixed.returns_indices()) size_output(out[next++], shape, fixed.indices_dtype(), "dyn.topk");
  run_static("topk", attrs_to(fixed), in.first(1), out);
}

void dyn_expand_dims_kernel(const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.expand_dims", in, 2, out, 1);
  copy_as(in[0], dyn_expand_dims_shape(in[0].shape(), in[1]), out[0], "dyn.expand_dims");
}

void dyn_squeeze_kernel(const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.squeeze", in, 2, out, 1);
  copy_as(in[0], dyn_squeeze_shape(in[0].shape(), in[1]), out[0], "dyn.squeeze");
}

void dyn_reduce_kernel(const DynReduceAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.reduce", in, 2, out, 1);
  std::optional<ReduceAttrs> fixed = reduce_static_attrs(attrs, in[1]);
  if (!fixed) {
    copy_as(in[0], in[0].shape(), out[0], "dyn.reduce");
    return;
  }
  std::vector<bool> reduced = fixed->reduced_axes(in[0].shape());
  Shape shape;
  for (size_t d = 0; d < reduced.size(); ++d) {
    if (!reduced[d])
      shape.push_back(in[0].shape()[d]);
    else if (fixed->keepdims)
      shape.push_back(1);
  }
  size_output(out[0], shape, in[0].dtype(), "dyn.reduce");
  run_static(attrs.reducer, attrs_to(*fixed), in.first(1), out);
}

void dyn_cumsum_kernel(const DynCumsumAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.cumsum", in, 2, out, 1);
  CumsumAttrs fixed = cumsum_static_attrs(attrs, in[1], in[0].ndim());
  size_output(out[0], in[0].shape(), in[0].dtype(), "dyn.cumsum");
  run_static("cumsum", attrs_to(fixed), in.first(1), out);
}

void dyn_trilu_kernel(const DynTriluAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.trilu", in, 2, out, 1);
  const int64_t k = trilu_diagonal(in[1]);
  const Shape& shape = in[0].shape();
  size_output(out[0], shape, in[0].dtype(), "dyn.trilu");
  const int64_t rows = shape[shape.size() - 2], cols = shape.back();
  const size_t bytes = dtype_bytes(in[0].dtype());
  const auto* from = static_cast<const uint8_t*>(in[0].raw());
  auto* to = static_cast<uint8_t*>(out[0].raw());
  for (int64_t e = 0; e < in[0].numel(); ++e) {
    int64_t i = (e / cols) % rows, j = e % cols;
    auto at = static_cast<size_t>(e) * bytes;
    if (trilu_keeps(attrs, k, i, j))
      std::memcpy(to + at, from + at, bytes);
    else
      std::memset(to + at, 0, bytes);  // zero bits are 0 (+0.0) in every dtype
  }
}

void dyn_split_kernel(const DynSplitAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.split", in, 2, out, static_cast<size_t>(in[1].numel()));
  SplitAttrs fixed = split_static_attrs(attrs, in[1], in[0].shape());
  std::vector<int64_t> sizes = in[1].to_ints();
  for (size_t i = 0; i < sizes.size(); ++i) {
    Shape shape = in[0].shape();
    shape[static_cast<size_t>(fixed.axis)] = sizes[i];
    size_output(out[i], shape, in[0].dtype(), "dyn.split");
  }
  run_static("split", attrs_to(fixed), in.first(1), out);
}

void dyn_one_hot_kernel(const OneHotAxisAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.one_hot", in, 4, out, 1);
  OneHotAttrs fixed = one_hot_static_attrs(attrs, in[3]);
  size_output(out[0], fixed.result_shape(in[0].shape()), parse_dtype(attrs.dtype), "dyn.one_hot");
  run_static("one_hot", attrs_to(fixed), in.first(3), out);
}

void dyn_resize2d_kernel(const ResizeMethodAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  expect_arity("dyn.resize2d", in, 4, out, 1);
  Resize2DAttrs fixed = resize2d_static_attrs(attrs, in[0].shape(), in[1], in[2], in[3]);
  Shape shape = in[0].shape();
  const size_t h = attrs.layout == "NHWC" ? 1 : 2;
  shape[h] = fixed.size[0];
  shape[h + 1] = fixed.size[1];
  size_output(out[0], shape, attrs.out_dtype.empty() ? in[0].dtype() : parse_dtype(attrs.out_dtype), "dyn.resize2d");
  run_static("image.resize2d", attrs_to(fixed), in.first(1), out);
}

// Output functions of the dyn.* ops whose result is cheap to size apart from the kernel, so
// that the graph executor can hand them blocks it keeps across runs.
void add_dyn_output_fns(KernelRegistry& registry) {
  registry.add_output_fn("dyn.reshape", [](const Attrs& attrs, std::span<const NDArray> in) {
    ReshapeAttrs fixed = reshape_static_attrs(attrs_from<DynReshapeAttrs>(attrs, "dyn.reshape"), in[1]);
    return std::vector<OutputSpec>{
        {dyn_reshape_shape(in[0].shape(), fixed.newshape, fixed.allowzero != 0), in[0].dtype()}};
  });
  registry.add_output_fn("dyn.full", [](const Attrs& attrs, std::span<const NDArray> in) {
    FullAttrs fixed = full_static_attrs(attrs_from<DynFullAttrs>(attrs, "dyn.full"), in[1]);
    return std::vector<OutputSpec>{{fixed.shape, fixed.result_dtype(in[0].dtype())}};
  });
  registry.add_output_fn("dyn.tile", [](const Attrs&, std::span<const NDArray> in) {
    return std::vector<OutputSpec>{{dyn_tile_shape(in[0].shape(), in[1]), in[0].dtype()}};
  });
  registry.add_output_fn("dyn.broadcast_to", [](const Attrs&, std::span<const NDArray> in) {
    return std::vector<OutputSpec>{{dyn_broadcast_shape(in[0].shape(), in[1]), in[0].dtype()}};
  });
  registry.add_output_fn("dyn.expand_dims", [](const Attrs&, std::span<const NDArray> in) {
    return std::vector<OutputSpec>{{dyn_expand_dims_shape(in[0].shape(), in[1]), in[0].dtype()}};
  });
  registry.add_output_fn("dyn.squeeze", [](const Attrs&, std::span<const NDArray> in) {
    return std::vector<OutputSpec>{{dyn_squeeze_shape(in[0].shape(), in[1]), in[0].dtype()}};
  });
}

}  // namespace

void register_dyn_kernels(KernelRegistry& registry) {
  registry.add<DynReshapeAttrs>("dyn.reshape", dyn_reshape_kernel);
  registry.add("dyn.strided_slice", dyn_strided_slice_kernel);
  registry.add("dyn.broadcast_to", dyn_broadcast_to_kernel);
  registry.add("dyn.tile", dyn_tile_kernel);
  registry.add<DynFullAttrs>("dyn.full", dyn_full_kernel);
  registry.add("dyn.arange", dyn_arange_kernel);
  registry.add<DynPadAttrs>("dyn.pad", dyn_pad_kernel);
  registry.add<DynTopKAttrs>("dyn.topk", dyn_topk_kernel);
  registry.add("dyn.expand_dims", dyn_expand_dims_kernel);
  registry.add("dyn.squeeze", dyn_squeeze_kernel);
  registry.add<DynReduceAttrs>("dyn.reduce", dyn_reduce_kernel);
  registry.add<DynCumsumAttrs>("dyn.cumsum", dyn_cumsum_kernel);
  registry.add<DynTriluAttrs>("dyn.trilu", dyn_trilu_kernel);
  registry.add<DynSplitAttrs>("dyn.split", dyn_split_kernel);
  registry.add<OneHotAxisAttrs>("dyn.one_hot", dyn_one_hot_kernel);
  registry.add<ResizeMethodAttrs>("dyn.resize2d", dyn_resize2d_kernel);
  add_dyn_output_fns(registry);
}

}  // namespace kiln
