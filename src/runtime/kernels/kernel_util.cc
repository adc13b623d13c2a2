#include "runtime/kernels/kernel_util.h"

namespace kiln {

OutputFn broadcast_output(std::optional<DType> dtype, size_t dtype_from) {
  return [dtype, dtype_from](const Attrs&, std::span<const NDArray> in) {
    Shape shape = in[0].shape();
    for (size_t k = 1; k < in.size(); ++k) shape = broadcast_shapes(shape, in[k].shape());
    return std::vector<OutputSpec>{{shape, dtype.value_or(in[dtype_from].dtype())}};
  };
}

OutputFn same_shape_output(std::optional<DType> dtype) {
  return [dtype](const Attrs&, std::span<const NDArray> in) {
    return std::vector<OutputSpec>{{in[0].shape(), dtype.value_or(in[0].dtype())}};
  };
}

BroadcastIndexer::BroadcastIndexer(const Shape& in_shape, const Shape& out_shape)
    : out_shape_(out_shape), in_strides_(out_shape.size(), 0) {
  check(in_shape.size() <= out_shape.size(), "broadcast: input has more dims than output");
  auto strides = contiguous_strides(in_shape);
  size_t offset = out_shape.size() - in_shape.size();
  for (size_t i = 0; i < in_shape.size(); ++i) in_strides_[offset + i] = in_shape[i] == 1 ? 0 : strides[i];
}

int64_t BroadcastIndexer::operator()(int64_t out_index) const {
  int64_t in = 0;
  for (int64_t d = static_cast<int64_t>(out_shape_.size()) - 1; d >= 0; --d) {
    int64_t extent = out_shape_[d];
    in += (out_index % extent) * in_strides_[d];
    out_index /= extent;
  }
  return in;
}

std::vector<int64_t> unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

int64_t ravel(const std::vector<int64_t>& index, const Shape& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

}  // namespace kiln
