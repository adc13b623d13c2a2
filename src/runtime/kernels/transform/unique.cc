// Reference kernels whose outputs they size themselves: argwhere, unique.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>

#include "kiln/attrs/transform.h"
#include "kiln/support/strings.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/transform/copy_util.h"

namespace kiln {

namespace {

// Allocates `out` when the caller left it undefined (data-dependent extent), else checks it.
NDArray& sized_output(const std::string& op, NDArray& out, const Shape& shape, DType dtype) {
  if (!out.defined())
    out = NDArray::empty(shape, dtype);
  else
    expect_output(op, out, shape, dtype);
  return out;
}

void argwhere_kernel(const Attrs&, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  expect_arity("argwhere", inputs, 1, outputs, 1);
  const NDArray& condition = inputs[0];
  std::vector<int64_t> coords;
  int64_t count = 0;
  for (int64_t i = 0; i < condition.numel(); ++i) {
    if (condition.at(i) == 0) continue;
    std::vector<int64_t> at = unravel(i, condition.shape());
    coords.insert(coords.end(), at.begin(), at.end());
    ++count;
  }
  NDArray& out = sized_output("argwhere", outputs[0], {count, condition.ndim()}, DType::kInt64);
  if (!coords.empty()) std::memcpy(out.raw(), coords.data(), coords.size() * sizeof(int64_t));
}

// 'data' as `count` slices of `width` elements: the elements themselves (no axis), or the
// slices along `axis`, whose element e sits at outer position e / inner, inner e % inner.
class Slices {
 public:
  Slices(const NDArray& data, std::optional<int64_t> axis) : data_(data) {
    if (!axis) {
      count_ = data.numel();
      return;
    }
    for (int64_t d = 0; d < data.ndim(); ++d)
      if (d != *axis) (d < *axis ? outer_ : inner_) *= data.shape()[d];
    count_ = data.shape()[*axis];
  }
  int64_t count() const { return count_; }
  int64_t width() const { return outer_ * inner_; }
  // Flat index in 'data' of element e of slice s.
  int64_t flat(int64_t s, int64_t e) const { return ((e / inner_) * count_ + s) * inner_ + e % inner_; }

  // Total order on slices: element by element, integers exactly, floats as doubles.
  int compare(int64_t a, int64_t b) const {
    bool floats = is_float(data_.dtype());
    for (int64_t e = 0; e < width(); ++e) {
      int64_t i = flat(a, e), j = flat(b, e);
      if (floats) {
        double x = data_.at(i), y = data_.at(j);
        if (x != y) return x < y ? -1 : 1;
      } else {
        int64_t x = data_.int_at(i), y = data_.int_at(j);
        if (x != y) return x < y ? -1 : 1;
      }
    }
    return 0;
  }

 private:
  const NDArray& data_;
  int64_t count_ = 0, outer_ = 1, inner_ = 1;
};

void unique_kernel(const UniqueAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  expect_arity("unique", inputs, 1, outputs, 4);
  const NDArray& data = inputs[0];
  std::optional<int64_t> axis;
  if (attrs.axis) axis = checked_axis("unique", *attrs.axis, data.ndim());
  Slices slices(data, axis);
  // Stable sort keeps equal slices in order, so each group starts at its first occurrence.
  std::vector<int64_t> order(static_cast<size_t>(slices.count()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return slices.compare(a, b) < 0; });
  std::vector<int64_t> firsts, counts, inverse(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || slices.compare(order[k - 1], order[k]) != 0) {
      firsts.push_back(order[k]);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[order[k]] = static_cast<int64_t>(firsts.size()) - 1;
  }
  // Unsorted: the groups in order of first occurrence.
  std::vector<int64_t> rank(firsts.size());
  std::iota(rank.begin(), rank.end(), 0);
  if (!attrs.sorted) std::sort(rank.begin(), rank.end(), [&](int64_t a, int64_t b) { return firsts[a] < firsts[b]; });
  std::vector<int64_t> position(rank.size());
  for (size_t r = 0; r < rank.size(); ++r) position[rank[r]] = static_cast<int64_t>(r);

  auto n = static_cast<int64_t>(firsts.size());
  Shape values_shape{n};
  if (axis) {
    values_shape = data.shape();
    values_shape[*axis] = n;
  }
  NDArray& values = sized_output("unique", outputs[0], values_shape, data.dtype());
  NDArray& indices = sized_output("unique", outputs[1], {n}, DType::kInt64);
  NDArray& inverse_out = sized_output("unique", outputs[2], {slices.count()}, DType::kInt64);
  NDArray& counts_out = sized_output("unique", outputs[3], {n}, DType::kInt64);
  Slices out_slices(values, axis);
  size_t bytes = dtype_bytes(data.dtype());
  for (int64_t r = 0; r < n; ++r) {
    int64_t group = rank[r];
    indices.data<int64_t>()[r] = firsts[group];
    counts_out.data<int64_t>()[r] = counts[group];
    for (int64_t e = 0; e < slices.width(); ++e)
      std::memcpy(
          static_cast<std::byte*>(values.raw()) + out_slices.flat(r, e) * static_cast<int64_t>(bytes),
          static_cast<const std::byte*>(data.raw()) + slices.flat(firsts[group], e) * static_cast<int64_t>(bytes),
          bytes);
  }
  for (size_t k = 0; k < inverse.size(); ++k) inverse_out.data<int64_t>()[k] = position[inverse[k]];
}

}  // namespace

void register_transform_unique_kernels(KernelRegistry& registry) {
  registry.add("argwhere", argwhere_kernel);
  registry.add<UniqueAttrs>("unique", unique_kernel);
}

}  // namespace kiln
