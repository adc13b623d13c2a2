// Reference kernels: bitwise_and, bitwise_or, bitwise_xor (broadcasting) and bitwise_not on
// integer dtypes; both operands of the binary ops have the same dtype (the relation checks it).
#include <functional>
#include <string>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/tensor/broadcast.h"
#include "runtime/kernels/tensor/element.h"

namespace kiln {
namespace {

using kernels::BroadcastRow;

template <class T, class Op>
void bitwise_loop(const NDArray& a, const NDArray& b, NDArray& out, Op op) {
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* po = out.data<T>();
  kernels::for_each_broadcast_row<2>(out.shape(), {a.shape(), b.shape()}, [&](const BroadcastRow<2>& row) {
    const T* x = pa + row.in_offset[0];
    const T* y = pb + row.in_offset[1];
    T* z = po + row.out_offset;
    for (int64_t i = 0; i < row.length; ++i) z[i] = static_cast<T>(op(x[i * row.in_step[0]], y[i * row.in_step[1]]));
  });
}

template <class Fn>
void dispatch_integer(DType dtype, const std::string& name, Fn fn) {
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kernels::kIsIntStorage<T>)
      fn(tag);
    else
      throw Error(cat("dtype ", dtype_name(dtype), " is not supported; an integer dtype is required")).op(name);
  });
}

template <class Op>
KernelFn binary_kernel(std::string name) {
  return [name](const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
    dispatch_integer(in[0].dtype(), name, [&](auto tag) { bitwise_loop<decltype(tag)>(in[0], in[1], out[0], Op{}); });
  };
}

void not_kernel(const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
  dispatch_integer(in[0].dtype(), "bitwise_not", [&](auto tag) {
    using T = decltype(tag);
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    for (int64_t i = 0; i < in[0].numel(); ++i) y[i] = static_cast<T>(~x[i]);
  });
}

}  // namespace

void register_tensor_bitwise_kernels(KernelRegistry& registry) {
  registry.add("bitwise_and", binary_kernel<std::bit_and<>>("bitwise_and"));
  registry.add("bitwise_or", binary_kernel<std::bit_or<>>("bitwise_or"));
  registry.add("bitwise_xor", binary_kernel<std::bit_xor<>>("bitwise_xor"));
  registry.add("bitwise_not", not_kernel);
}

}  // namespace kiln
