// Reference kernels: sum, mean, max, min, prod, argmax, argmin.
//
// One streaming pass over the input in memory order. Input dimensions of extent 1 are
// dropped and neighbours that are both reduced or both kept are merged, so the inner loop
// runs over a long contiguous row that either folds into one output element (reduced) or
// updates a row of outputs (kept). Float sums and products accumulate in double.
#include "kiln/attrs/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/tensor/element.h"

namespace kiln {
namespace {

using kernels::Compute;
using kernels::load;
using kernels::store;

struct ReducePlan {
  Shape dims;                     // merged input dims, outermost first
  std::vector<bool> reduced;      // per merged dim
  std::vector<int64_t> out_step;  // output offset step per merged dim (0 when reduced)
  std::vector<int64_t> red_step;  // step in the row-major space of reduced dims (0 when kept)
  int64_t out_numel = 1;
  int64_t reduce_count = 1;  // elements folded into each output
  int64_t in_numel = 0;
};

ReducePlan plan_reduce(const Shape& shape, const std::vector<bool>& reduced) {
  ReducePlan p;
  p.in_numel = num_elements(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    (reduced[d] ? p.reduce_count : p.out_numel) *= shape[d];
    if (shape[d] == 1) continue;
    if (!p.dims.empty() && p.reduced.back() == reduced[d]) {
      p.dims.back() *= shape[d];
    } else {
      p.dims.push_back(shape[d]);
      p.reduced.push_back(reduced[d]);
    }
  }
  if (p.dims.empty()) {  // a single element
    p.dims.push_back(1);
    p.reduced.push_back(true);
  }
  const size_t n = p.dims.size();
  p.out_step.assign(n, 0);
  p.red_step.assign(n, 0);
  int64_t out_stride = 1, red_stride = 1;
  for (size_t d = n; d-- > 0;) {
    if (p.reduced[d]) {
      p.red_step[d] = red_stride;
      red_stride *= p.dims[d];
    } else {
      p.out_step[d] = out_stride;
      out_stride *= p.dims[d];
    }
  }
  return p;
}

// Calls visit(in_offset, out_offset, reduced_offset, length) for every innermost row, in
// memory order. Along the row the output offset advances when the inner dim is kept and
// the reduced offset advances when it is reduced.
template <class Visit>
void for_each_reduce_row(const ReducePlan& p, Visit visit) {
  if (p.in_numel == 0) return;
  const size_t outer = p.dims.size() - 1;
  const int64_t length = p.dims.back();
  std::vector<int64_t> index(outer, 0);
  int64_t out_offset = 0, red_offset = 0;
  for (int64_t in_offset = 0; in_offset < p.in_numel; in_offset += length) {
    visit(in_offset, out_offset, red_offset, length);
    for (size_t d = outer; d-- > 0;) {
      out_offset += p.out_step[d];
      red_offset += p.red_step[d];
      if (++index[d] < p.dims[d]) break;
      out_offset -= p.out_step[d] * p.dims[d];
      red_offset -= p.red_step[d] * p.dims[d];
      index[d] = 0;
    }
  }
}

// Accumulator of sum, mean and prod: double for floats, 64-bit for integers (wrapping).
template <class T>
using WideAcc = std::conditional_t<kernels::kIsFloatStorage<T>, double,
                                   std::conditional_t<std::is_signed_v<Compute<T>>, int64_t, uint64_t>>;

struct SumOp {
  template <class A>
  A operator()(A acc, A v) const {
    if constexpr (std::is_integral_v<A>)
      return kernels::wrapping_add(acc, v);
    else
      return acc + v;
  }
};
struct ProdOp {
  template <class A>
  A operator()(A acc, A v) const {
    if constexpr (std::is_integral_v<A>)
      return kernels::wrapping_mul(acc, v);
    else
      return acc * v;
  }
};
struct MaxOp {
  template <class A>
  A operator()(A acc, A v) const {
    if constexpr (std::is_floating_point_v<A>)
      if (std::isnan(v)) return v;
    return v > acc ? v : acc;
  }
};
struct MinOp {
  template <class A>
  A operator()(A acc, A v) const {
    if constexpr (std::is_floating_point_v<A>)
      if (std::isnan(v)) return v;
    return v < acc ? v : acc;
  }
};

// Folds the input into accumulators of type A, then writes finish(acc) to the output.
template <class T, class A, class Combine, class Finish>
void fold(const NDArray& in, NDArray& out, const ReducePlan& plan, A init, Combine combine, Finish finish) {
  // Not std::vector: A may be bool.
  auto acc = std::make_unique<A[]>(static_cast<size_t>(plan.out_numel));
  std::fill(acc.get(), acc.get() + plan.out_numel, init);
  const T* x = in.data<T>();
  const bool inner_reduced = plan.reduced.back();
  for_each_reduce_row(plan, [&](int64_t in_offset, int64_t out_offset, int64_t, int64_t length) {
    const T* row = x + in_offset;
    if (inner_reduced) {
      A a = acc[static_cast<size_t>(out_offset)];
      for (int64_t i = 0; i < length; ++i) a = combine(a, static_cast<A>(load(row[i])));
      acc[static_cast<size_t>(out_offset)] = a;
    } else {
      A* dst = acc.get() + out_offset;
      for (int64_t i = 0; i < length; ++i) dst[i] = combine(dst[i], static_cast<A>(load(row[i])));
    }
  });
  T* y = out.data<T>();
  for (int64_t o = 0; o < plan.out_numel; ++o) y[o] = store<T>(static_cast<Compute<T>>(finish(acc[o])));
}

enum class Reduction : uint8_t { kSum, kMean, kProd, kMax, kMin };

template <class T>
void reduce_typed(Reduction kind, const NDArray& in, NDArray& out, const ReducePlan& plan) {
  using C = Compute<T>;
  using L = std::numeric_limits<C>;
  auto identity = [](auto v) { return v; };
  if (kind == Reduction::kMax || kind == Reduction::kMin) {
    const bool is_max = kind == Reduction::kMax;
    C init = L::has_infinity ? (is_max ? -L::infinity() : L::infinity()) : (is_max ? L::lowest() : L::max());
    if (is_max)
      fold<T, C>(in, out, plan, init, MaxOp{}, identity);
    else
      fold<T, C>(in, out, plan, init, MinOp{}, identity);
    return;
  }
  if constexpr (std::is_same_v<T, bool>) {
    throw Error("bool data is not supported");
  } else {
    using A = WideAcc<T>;
    if (kind == Reduction::kSum) {
      fold<T, A>(in, out, plan, A(0), SumOp{}, identity);
    } else if (kind == Reduction::kProd) {
      fold<T, A>(in, out, plan, A(1), ProdOp{}, identity);
    } else {
      const int64_t count = plan.reduce_count;
      fold<T, A>(in, out, plan, A(0), SumOp{}, [count](A sum) {
        if constexpr (std::is_floating_point_v<A>)
          return count == 0 ? std::numeric_limits<A>::quiet_NaN() : sum / static_cast<A>(count);
        else
          return count == 0 ? A(0) : static_cast<A>(sum / static_cast<A>(count));
      });
    }
  }
}

std::function<void(const ReduceAttrs&, std::span<const NDArray>, std::span<NDArray>)> reduce_kernel(std::string name,
                                                                                                    Reduction kind) {
  return [name, kind](const ReduceAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
    const NDArray& data = in[0];
    ReducePlan plan = plan_reduce(data.shape(), attrs.reduced_axes(data.shape()));
    try {
      dispatch_dtype(data.dtype(), [&](auto tag) { reduce_typed<decltype(tag)>(kind, data, out[0], plan); });
    } catch (Error& e) {
      e.op(name);
      throw;
    }
  };
}

// Whether v replaces the current best b. NaN beats every number (as numpy's argmax and
// argmin); among equals the first wins unless select_last_index.
template <bool kMax, class C>
bool better(C v, C b, bool last) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(b)) return last && std::isnan(v);
    if (std::isnan(v)) return true;
  }
  if constexpr (kMax)
    return last ? v >= b : v > b;
  else
    return last ? v <= b : v < b;
}

template <class T, bool kMax>
void arg_reduce_typed(const NDArray& in, NDArray& out, const ReducePlan& plan, bool last) {
  using C = Compute<T>;
  auto best = std::make_unique<C[]>(static_cast<size_t>(plan.out_numel));  // C may be bool
  int64_t* best_index = out.data<int64_t>();
  for (int64_t o = 0; o < plan.out_numel; ++o) best_index[o] = 0;
  const T* x = in.data<T>();
  const bool inner_reduced = plan.reduced.back();
  // The first element visited for an output is the one at reduced offset 0.
  for_each_reduce_row(plan, [&](int64_t in_offset, int64_t out_offset, int64_t red_offset, int64_t length) {
    const T* row = x + in_offset;
    if (inner_reduced) {
      C b = best[static_cast<size_t>(out_offset)];
      int64_t bi = best_index[out_offset];
      for (int64_t i = 0; i < length; ++i) {
        C v = load(row[i]);
        if ((red_offset == 0 && i == 0) || better<kMax>(v, b, last)) {
          b = v;
          bi = red_offset + i;
        }
      }
      best[static_cast<size_t>(out_offset)] = b;
      best_index[out_offset] = bi;
    } else {
      for (int64_t i = 0; i < length; ++i) {
        C v = load(row[i]);
        size_t o = static_cast<size_t>(out_offset + i);
        if (red_offset == 0 || better<kMax>(v, best[o], last)) {
          best[o] = v;
          best_index[o] = red_offset;
        }
      }
    }
  });
}

template <bool kMax>
void arg_reduce_kernel(const ArgReduceAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  const NDArray& data = in[0];
  ReducePlan plan = plan_reduce(data.shape(), attrs.reduced_axes(data.shape()));
  const bool last = attrs.select_last_index;
  dispatch_dtype(data.dtype(), [&](auto tag) { arg_reduce_typed<decltype(tag), kMax>(data, out[0], plan, last); });
}

}  // namespace

void register_tensor_reduce_kernels(KernelRegistry& registry) {
  registry.add<ReduceAttrs>("sum", reduce_kernel("sum", Reduction::kSum));
  registry.add<ReduceAttrs>("mean", reduce_kernel("mean", Reduction::kMean));
  registry.add<ReduceAttrs>("prod", reduce_kernel("prod", Reduction::kProd));
  registry.add<ReduceAttrs>("max", reduce_kernel("max", Reduction::kMax));
  registry.add<ReduceAttrs>("min", reduce_kernel("min", Reduction::kMin));
  registry.add<ArgReduceAttrs>("argmax", arg_reduce_kernel<true>);
  registry.add<ArgReduceAttrs>("argmin", arg_reduce_kernel<false>);
}

}  // namespace kiln
