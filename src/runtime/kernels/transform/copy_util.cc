#include "runtime/kernels/transform/copy_util.h"

#include <cstring>

#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

namespace {

using RowCopy = void (*)(std::byte* dst, const std::byte* src, int64_t count, int64_t stride);

// A fixed element size lets memcpy compile to one load and one store.
template <size_t Bytes>
void copy_row(std::byte* dst, const std::byte* src, int64_t count, int64_t stride) {
  for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * Bytes, src + i * stride * int64_t{Bytes}, Bytes);
}

RowCopy row_copy_for(size_t elem_bytes) {
  switch (elem_bytes) {
    case 1: return copy_row<1>;
    case 2: return copy_row<2>;
    case 4: return copy_row<4>;
    case 8: return copy_row<8>;
    default: return nullptr;
  }
}

}  // namespace

void gather_strided(void* dst, const void* src, const Shape& shape, const std::vector<int64_t>& strides, int64_t offset,
                    size_t elem_bytes) {
  int64_t total = num_elements(shape);
  if (total == 0) return;
  auto* out = static_cast<std::byte*>(dst);
  const auto* in = static_cast<const std::byte*>(src);
  const auto bytes = static_cast<int64_t>(elem_bytes);
  if (shape.empty()) {
    std::memcpy(out, in + offset * bytes, elem_bytes);
    return;
  }
  const size_t rank = shape.size();
  const int64_t row = shape.back();
  const int64_t row_stride = strides.back();
  RowCopy row_copy = row_copy_for(elem_bytes);
  std::vector<int64_t> index(rank, 0);  // odometer over all dims but the last
  int64_t src_pos = offset;
  for (int64_t done = 0; done < total; done += row) {
    const std::byte* from = in + src_pos * bytes;
    if (row_stride == 1) {
      std::memcpy(out, from, static_cast<size_t>(row * bytes));
    } else if (row_copy) {
      row_copy(out, from, row, row_stride);
    } else {
      for (int64_t i = 0; i < row; ++i) std::memcpy(out + i * bytes, from + i * row_stride * bytes, elem_bytes);
    }
    out += row * bytes;
    for (size_t d = rank - 1; d-- > 0;) {
      src_pos += strides[d];
      if (++index[d] < shape[d]) break;
      src_pos -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

void expect_arity(const std::string& op, std::span<const NDArray> inputs, int64_t num_inputs,
                  std::span<NDArray> outputs, int64_t num_outputs) {
  auto matches = [](size_t given, int64_t wanted) {
    return wanted < 0 ? given >= 1 : given == static_cast<size_t>(wanted);
  };
  auto wanted_str = [](int64_t wanted) { return wanted < 0 ? std::string("at least 1") : cat(wanted); };
  if (!matches(inputs.size(), num_inputs))
    throw std::move(Error("reference kernel got the wrong number of inputs")
                        .op(op)
                        .expected(wanted_str(num_inputs), cat(inputs.size())));
  if (!matches(outputs.size(), num_outputs))
    throw std::move(Error("reference kernel got the wrong number of outputs")
                        .op(op)
                        .expected(wanted_str(num_outputs), cat(outputs.size())));
}

int64_t checked_axis(const std::string& op, int64_t axis, int64_t ndim) {
  int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim)
    throw std::move(Error("axis out of range").op(op).expected(cat("in [", -ndim, ", ", ndim, ")"), cat(axis)));
  return a;
}

void expect_output(const std::string& op, const NDArray& output, const Shape& shape, DType dtype) {
  if (output.shape() != shape || output.dtype() != dtype)
    throw std::move(Error("preallocated output does not match the computed result")
                        .op(op)
                        .expected(cat(shape_str(shape), " ", dtype_name(dtype)),
                                  cat(shape_str(output.shape()), " ", dtype_name(output.dtype()))));
}

}  // namespace kiln
