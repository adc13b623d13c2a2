// Reference kernels: where(condition, x, y) with three-way numpy broadcasting.
#include <cstdint>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/tensor/broadcast.h"

namespace kiln {
namespace {

// Elements are copied as raw storage, so one instantiation per storage type suffices.
template <class T>
void where_loop(const NDArray& condition, const NDArray& x, const NDArray& y, NDArray& out) {
  // Read as bytes: any non-zero byte is true, whatever produced the bool tensor.
  const auto* c = static_cast<const uint8_t*>(condition.raw());
  const T* px = x.data<T>();
  const T* py = y.data<T>();
  T* po = out.data<T>();
  if (condition.shape() == out.shape() && x.shape() == out.shape() && y.shape() == out.shape()) {
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) po[i] = c[i] ? px[i] : py[i];
    return;
  }
  kernels::for_each_broadcast_row<3>(out.shape(), {condition.shape(), x.shape(), y.shape()},
                                     [&](const kernels::BroadcastRow<3>& row) {
                                       const uint8_t* rc = c + row.in_offset[0];
                                       const T* rx = px + row.in_offset[1];
                                       const T* ry = py + row.in_offset[2];
                                       const int64_t sc = row.in_step[0], sx = row.in_step[1], sy = row.in_step[2];
                                       T* ro = po + row.out_offset;
                                       for (int64_t i = 0; i < row.length; ++i)
                                         ro[i] = rc[i * sc] ? rx[i * sx] : ry[i * sy];
                                     });
}

void where_kernel(const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
  dispatch_dtype(in[1].dtype(), [&](auto tag) { where_loop<decltype(tag)>(in[0], in[1], in[2], out[0]); });
}

}  // namespace

void register_tensor_where_kernels(KernelRegistry& registry) {
  registry.add("where", where_kernel);
  registry.add_output_fn("where", broadcast_output(std::nullopt, 1));
}

}  // namespace kiln
