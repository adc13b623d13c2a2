// Reference kernel: topk. Each slice along the axis is sorted stably by value (descending,
// or ascending with is_ascend), so equal values keep the lower index first; NaN sorts as
// the largest value.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include "kiln/attrs/tensor.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/tensor/element.h"

namespace kiln {
namespace {

using kernels::load;

// a < b with NaN above every number (and equal to NaN).
template <class C>
bool less_nan_last(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

void topk_kernel(const TopKAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  const NDArray& data = in[0];
  const int64_t axis = wrap_axis(attrs.axis, data.ndim());
  // The outputs in order: values, then indices, each when returned.
  NDArray* values = attrs.returns_values() ? &out[0] : nullptr;
  NDArray* indices = attrs.returns_indices() ? &out[values ? 1 : 0] : nullptr;
  const bool ascending = attrs.is_ascend;
  const Shape& shape = data.shape();
  const int64_t extent = shape[static_cast<size_t>(axis)];
  const int64_t k = attrs.k < 1 ? extent : attrs.k;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];

  dispatch_dtype(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = kernels::Compute<T>;
    const T* x = data.data<T>();
    std::vector<int64_t> order(static_cast<size_t>(extent));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        auto at = [&](int64_t j) { return (o * extent + j) * inner + i; };
        std::iota(order.begin(), order.end(), int64_t{0});
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          C va = load(x[at(a)]), vb = load(x[at(b)]);
          return ascending ? less_nan_last(va, vb) : less_nan_last(vb, va);
        });
        for (int64_t j = 0; j < k; ++j) {
          const int64_t dst = (o * k + j) * inner + i;
          const int64_t src = order[static_cast<size_t>(j)];
          if (values) values->data<T>()[dst] = x[at(src)];
          if (indices) store_from_int(indices->raw(), indices->dtype(), static_cast<size_t>(dst), src);
        }
      }
    }
  });
}

}  // namespace

void register_tensor_topk_kernels(KernelRegistry& registry) { registry.add<TopKAttrs>("topk", topk_kernel); }

}  // namespace kiln
