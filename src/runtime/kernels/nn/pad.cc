// Reference kernels: nn.pad.
// For every axis a table maps each output index to the input index it copies, or to -1 for
// the fill value; rows along the last axis are then copied through that table.
#include "kiln/attrs/pad.h"

#include "runtime/kernels/nn/compute_view.h"

namespace kiln {

namespace {

// Input index of output index `o` of an axis of extent `in` padded by `before`.
int64_t source_index(int64_t o, int64_t before, int64_t in, PadMode mode) {
  int64_t i = o - before;
  if (i >= 0 && i < in) return i;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return i < 0 ? 0 : in - 1;
    case PadMode::kWrap: return ((i % in) + in) % in;
    case PadMode::kReflect: {
      if (in == 1) return 0;
      // Reflection without repeating the edge is periodic with period 2 * (in - 1).
      const int64_t period = 2 * (in - 1);
      i = ((i % period) + period) % period;
      return i < in ? i : period - i;
    }
  }
  return -1;
}

template <class T>
void pad(const T* x, T* y, T fill, const Shape& in, const Shape& out, const std::vector<std::vector<int64_t>>& source) {
  const size_t rank = in.size();
  if (rank == 0) {
    y[0] = x[0];
    return;
  }
  const int64_t row = out[rank - 1], in_row = in[rank - 1];
  const int64_t rows = row == 0 ? 0 : num_elements(out) / row;
  const std::vector<int64_t>& cols = source[rank - 1];
  std::vector<int64_t> index(rank, 0);  // output index of the current row (last entry unused)
  for (int64_t r = 0; r < rows; ++r) {
    // Flat offset of the input row, or -1 when the row lies in constant padding.
    int64_t in_offset = 0;
    for (size_t d = 0; d + 1 < rank && in_offset >= 0; ++d) {
      const int64_t s = source[d][index[d]];
      in_offset = s < 0 ? -1 : in_offset * in[d] + s;
    }
    T* dst = y + r * row;
    if (in_offset < 0) {
      std::fill(dst, dst + row, fill);
    } else {
      const T* src = x + in_offset * in_row;
      for (int64_t c = 0; c < row; ++c) dst[c] = cols[c] < 0 ? fill : src[cols[c]];
    }
    for (int64_t d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
      if (++index[d] < out[d]) break;
      index[d] = 0;
    }
  }
}

void pad_kernel(const PadAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray& data = inputs[0];
  const Shape& in = data.shape();
  const Shape& out = outputs[0].shape();
  const PadMode mode = attrs.mode();
  const std::vector<std::pair<int64_t, int64_t>> widths = attrs.pairs();
  check(widths.size() == in.size(), "nn.pad: pad_width does not match the rank of the data");
  std::vector<std::vector<int64_t>> source(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    check(in[d] > 0 || mode == PadMode::kConstant || out[d] == 0, "nn.pad: cannot pad an empty axis in ",
          attrs.pad_mode, " mode");
    for (int64_t o = 0; o < out[d]; ++o) source[d].push_back(source_index(o, widths[d].first, in[d], mode));
  }
  NDArray fill = inputs[1].cast(data.dtype());
  dispatch_dtype(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    pad(data.data<T>(), outputs[0].data<T>(), fill.data<T>()[0], in, out, source);
  });
}

}  // namespace

void register_nn_pad_kernels(KernelRegistry& registry) { registry.add<PadAttrs>("nn.pad", pad_kernel); }

}  // namespace kiln
