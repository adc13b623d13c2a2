// Element-level building blocks of the elementwise, broadcast and reduction kernels.
//
// Storage types come from dispatch_dtype; arithmetic happens in a "compute type":
// float16 and bfloat16 are widened to float, everything else computes in itself.
// Integer arithmetic wraps modulo 2^bits (as numpy and C on unsigned do) instead of
// overflowing, because signed overflow is undefined behaviour and inputs are user data.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "kiln/runtime/dtype.h"
#include "kiln/runtime/ndarray.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln::kernels {

template <class T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<Half> {
  using type = float;
};
template <>
struct ComputeTypeOf<BFloat16> {
  using type = float;
};
template <class T>
using Compute = typename ComputeTypeOf<T>::type;

template <class T>
constexpr bool kIsFloatStorage = std::is_floating_point_v<Compute<T>>;
template <class T>
constexpr bool kIsIntStorage = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class T>
inline Compute<T> load(T v) {
  return v;
}
inline float load(Half v) { return half_to_float(v.bits); }
inline float load(BFloat16 v) { return bfloat16_to_float(v.bits); }

template <class T>
inline T store(Compute<T> v) {
  if constexpr (std::is_same_v<T, Half>)
    return Half{float_to_half(v)};
  else if constexpr (std::is_same_v<T, BFloat16>)
    return BFloat16{float_to_bfloat16(v)};
  else
    return v;
}

// An unsigned type at least as wide as `unsigned`, so that e.g. uint16 * uint16 does not
// promote to (overflowing) int.
template <class T>
using WrapUnsigned = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T>
inline T wrapping_add(T a, T b) {
  using U = WrapUnsigned<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T>
inline T wrapping_sub(T a, T b) {
  using U = WrapUnsigned<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T>
inline T wrapping_mul(T a, T b) {
  using U = WrapUnsigned<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}
template <class T>
inline T wrapping_neg(T a) {
  return wrapping_sub(T(0), a);
}

// Float to integer: truncation toward zero, saturating at the type's range, NaN -> 0
// (C leaves out-of-range conversions undefined; saturation is what most hardware does).
template <class I, class F>
inline I saturating_trunc(F x) {
  using L = std::numeric_limits<I>;
  if (std::isnan(x)) return I(0);
  if (x <= static_cast<F>(L::min())) return L::min();
  if (x >= static_cast<F>(L::max())) return L::max();
  return static_cast<I>(x);
}

// A clip bound in the compute type C. Float bounds past C's range become the infinity of that
// side; integer bounds are rounded inward (a_min up, a_max down) so that comparisons in C give
// the same answer as comparisons of real numbers.
template <class C>
C clip_bound(double bound, bool is_lower) {
  if constexpr (std::is_floating_point_v<C>) {
    using L = std::numeric_limits<C>;
    if (bound > static_cast<double>(L::max())) return L::infinity();
    if (bound < static_cast<double>(L::lowest())) return -L::infinity();
    return static_cast<C>(bound);
  } else {
    return saturating_trunc<C>(is_lower ? std::ceil(bound) : std::floor(bound));
  }
}

// v clipped to [lo, hi], lower bound first: lo > hi yields hi; NaN stays NaN.
template <class C>
C clip_value(C v, C lo, C hi) {
  const C low_clipped = v < lo ? lo : v;
  return low_clipped > hi ? hi : low_clipped;
}

// Converts one element between any two storage types, as cast does: float -> int
// truncates toward zero (saturating), int -> int wraps, anything -> bool is "!= 0".
template <class To, class From>
inline To convert_element(From v) {
  auto x = load(v);
  using X = decltype(x);
  using C = Compute<To>;
  if constexpr (std::is_same_v<C, bool>)
    return x != X(0);
  else if constexpr (std::is_integral_v<C> && std::is_floating_point_v<X>)
    return saturating_trunc<C>(x);
  else
    return store<To>(static_cast<C>(x));
}

// out[i] = fn(in[i]) for storage type T, computing in Compute<T>.
template <class T, class Fn>
void map_elements(const NDArray& in, NDArray& out, Fn fn) {
  const T* x = in.data<T>();
  T* y = out.data<T>();
  const int64_t n = in.numel();
  for (int64_t i = 0; i < n; ++i) y[i] = store<T>(fn(load(x[i])));
}

// The same for float dtypes only (fn gets float or double); any other dtype is an error
// naming `op`.
template <class Fn>
void map_float_elements(const NDArray& in, NDArray& out, const std::string& op, Fn fn) {
  dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloatStorage<T>)
      map_elements<T>(in, out, fn);
    else
      throw Error(cat("dtype ", dtype_name(in.dtype()), " is not supported; a float dtype is required")).op(op);
  });
}

}  // namespace kiln::kernels
