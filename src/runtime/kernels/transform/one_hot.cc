// Reference kernels: one_hot, reverse_sequence.
#include <algorithm>
#include <cstring>

#include "kiln/attrs/transform.h"
#include "kiln/support/strings.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/transform/copy_util.h"

namespace kiln {

namespace {

// Writes element `from` of the scalar `value` into out[at], converting to out's dtype.
void store_converted(NDArray& out, int64_t at, const NDArray& value) {
  if (value.dtype() == out.dtype()) {
    size_t bytes = dtype_bytes(out.dtype());
    std::memcpy(static_cast<std::byte*>(out.raw()) + at * static_cast<int64_t>(bytes), value.raw(), bytes);
  } else if (is_float(value.dtype())) {
    out.set(at, value.at(0));
  } else {
    store_from_int(out.raw(), out.dtype(), static_cast<size_t>(at), value.int_at(0));
  }
}

void one_hot_kernel(const OneHotAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  expect_arity("one_hot", inputs, 3, outputs, 1);
  const NDArray& indices = inputs[0];
  check(inputs[1].numel() == 1 && inputs[2].numel() == 1, "one_hot: on_value and off_value must be scalars");
  const int64_t depth = attrs.depth;
  int64_t axis = checked_axis("one_hot", attrs.axis, indices.ndim() + 1);
  Shape out_shape = indices.shape();
  out_shape.insert(out_shape.begin() + axis, depth);
  NDArray& out = outputs[0];
  expect_output("one_hot", out, out_shape, parse_dtype(attrs.dtype));
  // indices seen as [outer, inner]; out as [outer, depth, inner].
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < indices.ndim(); ++d) (d < axis ? outer : inner) *= indices.shape()[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < depth; ++k)
      for (int64_t i = 0; i < inner; ++i) {
        bool hot = indices.int_at(o * inner + i) == k;
        store_converted(out, (o * depth + k) * inner + i, hot ? inputs[1] : inputs[2]);
      }
}

void reverse_sequence_kernel(const ReverseSequenceAttrs& attrs, std::span<const NDArray> inputs,
                             std::span<NDArray> outputs) {
  expect_arity("reverse_sequence", inputs, 2, outputs, 1);
  const NDArray& data = inputs[0];
  const NDArray& lengths = inputs[1];
  int64_t seq_axis = checked_axis("reverse_sequence", attrs.seq_axis, data.ndim());
  int64_t batch_axis = checked_axis("reverse_sequence", attrs.batch_axis, data.ndim());
  check(lengths.numel() == data.shape()[batch_axis], "reverse_sequence: ", lengths.numel(),
        " sequence lengths for a batch of ", data.shape()[batch_axis]);
  expect_output("reverse_sequence", outputs[0], data.shape(), data.dtype());
  size_t bytes = dtype_bytes(data.dtype());
  int64_t extent = data.shape()[seq_axis];
  for (int64_t i = 0; i < data.numel(); ++i) {
    std::vector<int64_t> at = unravel(i, data.shape());
    int64_t length = std::clamp(lengths.int_at(at[batch_axis]), int64_t{0}, extent);
    if (at[seq_axis] < length) at[seq_axis] = length - 1 - at[seq_axis];
    std::memcpy(static_cast<std::byte*>(outputs[0].raw()) + i * static_cast<int64_t>(bytes),
                static_cast<const std::byte*>(data.raw()) + ravel(at, data.shape()) * static_cast<int64_t>(bytes),
                bytes);
  }
}

}  // namespace

void register_transform_one_hot_kernels(KernelRegistry& registry) {
  registry.add<OneHotAttrs>("one_hot", one_hot_kernel);
  registry.add<ReverseSequenceAttrs>("reverse_sequence", reverse_sequence_kernel);
}

}  // namespace kiln
