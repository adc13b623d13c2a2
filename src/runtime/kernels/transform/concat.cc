// Reference kernels: concatenate, stack, split. Seen as [outer, axis * inner] matrices, each piece
// is a column block: per outer index, one contiguous row of bytes per piece.
#include <cstring>

#include "kiln/attrs/transform.h"
#include "kiln/support/strings.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/transform/copy_util.h"

namespace kiln {

namespace {

int64_t product(const Shape& shape, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t d = from; d < to; ++d) n *= shape[d];
  return n;
}

// Checks that the pieces (inputs of concatenate, outputs of split) have the dtype of `whole`,
// agree with it off `axis` and fill it along `axis`: the byte copies below rely on it.
void check_pieces(const std::string& op, const NDArray& whole, std::span<const NDArray> pieces, size_t axis) {
  int64_t along = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const NDArray& piece = pieces[i];
    Shape expected = whole.shape();
    if (piece.ndim() == whole.ndim()) expected[axis] = piece.shape()[axis];
    if (piece.shape() != expected || piece.dtype() != whole.dtype())
      throw std::move(Error(cat("piece ", i, " does not fit the whole along axis ", axis))
                          .op(op)
                          .expected(shape_str(expected), shape_str(piece.shape())));
    along += piece.shape()[axis];
  }
  if (along != whole.shape()[axis])
    throw std::move(
        Error(cat("pieces do not add up along axis ", axis)).op(op).expected(cat(whole.shape()[axis]), cat(along)));
}

void concatenate_kernel(const ConcatenateAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  expect_arity("concatenate", inputs, -1, outputs, 1);
  NDArray& out = outputs[0];
  const auto axis = static_cast<size_t>(checked_axis("concatenate", attrs.axis, out.ndim()));
  check_pieces("concatenate", out, inputs, axis);
  const size_t elem_bytes = dtype_bytes(out.dtype());
  const int64_t outer = product(out.shape(), 0, axis);
  auto* dst = static_cast<std::byte*>(out.raw());
  for (int64_t o = 0; o < outer; ++o) {
    for (const NDArray& in : inputs) {
      const auto row_bytes = static_cast<size_t>(product(in.shape(), axis, in.shape().size())) * elem_bytes;
      if (row_bytes == 0) continue;
      std::memcpy(dst, static_cast<const std::byte*>(in.raw()) + static_cast<size_t>(o) * row_bytes, row_bytes);
      dst += row_bytes;
    }
  }
}

// The fields are the pieces of the output seen as [outer, count * inner]: per outer index,
// one row of `inner` elements per field, in order.
void stack_kernel(const StackAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  expect_arity("stack", inputs, -1, outputs, 1);
  NDArray& out = outputs[0];
  const auto axis = static_cast<size_t>(checked_axis("stack", attrs.axis, out.ndim()));
  Shape field_shape = out.shape();
  field_shape.erase(field_shape.begin() + static_cast<std::ptrdiff_t>(axis));
  if (static_cast<int64_t>(inputs.size()) != out.shape()[axis])
    throw std::move(Error("the fields do not fill the new axis")
                        .op("stack")
                        .expected(cat(out.shape()[axis], " fields"), cat(inputs.size())));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].shape() != field_shape || inputs[i].dtype() != out.dtype())
      throw std::move(Error(cat("field ", i, " does not have the shape of the result without axis ", axis))
                          .op("stack")
                          .expected(shape_str(field_shape), shape_str(inputs[i].shape())));
  const size_t row_bytes =
      static_cast<size_t>(product(field_shape, axis, field_shape.size())) * dtype_bytes(out.dtype());
  const int64_t outer = product(field_shape, 0, axis);
  auto* dst = static_cast<std::byte*>(out.raw());
  if (row_bytes == 0) return;
  for (int64_t o = 0; o < outer; ++o) {
    for (const NDArray& in : inputs) {
      std::memcpy(dst, static_cast<const std::byte*>(in.raw()) + static_cast<size_t>(o) * row_bytes, row_bytes);
      dst += row_bytes;
    }
  }
}

// The pieces arrive allocated with their extents, so only the axis matters here.
void split_kernel(const SplitAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  expect_arity("split", inputs, 1, outputs, -1);
  const NDArray& data = inputs[0];
  const auto axis = static_cast<size_t>(checked_axis("split", attrs.axis, data.ndim()));
  check_pieces("split", data, {outputs.data(), outputs.size()}, axis);
  const size_t elem_bytes = dtype_bytes(data.dtype());
  const int64_t outer = product(data.shape(), 0, axis);
  const auto* src = static_cast<const std::byte*>(data.raw());
  for (int64_t o = 0; o < outer; ++o) {
    for (NDArray& out : outputs) {
      const auto row_bytes = static_cast<size_t>(product(out.shape(), axis, out.shape().size())) * elem_bytes;
      if (row_bytes == 0) continue;
      std::memcpy(static_cast<std::byte*>(out.raw()) + static_cast<size_t>(o) * row_bytes, src, row_bytes);
      src += row_bytes;
    }
  }
}

}  // namespace

void register_transform_concat_kernels(KernelRegistry& registry) {
  registry.add<ConcatenateAttrs>("concatenate", concatenate_kernel);
  registry.add<StackAttrs>("stack", stack_kernel);
  registry.add<SplitAttrs>("split", split_kernel);
}

}  // namespace kiln
