// Reference kernels: sigmoid, tanh, exp, log, sqrt, rsqrt, erf, abs, negative, clip, cast.
// Input and output have the same shape; all but cast also have the same dtype.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/tensor/element.h"

namespace kiln {
namespace {

using kernels::load;
using kernels::store;

template <class T, class Fn>
void map_elements(const NDArray& in, NDArray& out, Fn fn) {
  const T* x = in.data<T>();
  T* y = out.data<T>();
  const int64_t n = in.numel();
  for (int64_t i = 0; i < n; ++i) y[i] = store<T>(fn(load(x[i])));
}

// A kernel for float dtypes only; fn is called with float or double.
template <class Fn>
KernelFn float_kernel(std::string name, Fn fn) {
  return [name, fn](const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
    dispatch_dtype(in[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kernels::kIsFloatStorage<T>)
        map_elements<T>(in[0], out[0], fn);
      else
        throw Error(cat("dtype ", dtype_name(in[0].dtype()), " is not supported; a float dtype is required")).op(name);
    });
  };
}

// A kernel for every dtype but bool; fn is called with the compute type.
template <class Fn>
KernelFn numeric_kernel(std::string name, Fn fn) {
  return [name, fn](const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
    dispatch_dtype(in[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool>)
        throw Error("bool data is not supported").op(name);
      else
        map_elements<T>(in[0], out[0], fn);
    });
  };
}

struct Abs {
  template <class C>
  C operator()(C v) const {
    if constexpr (std::is_floating_point_v<C>)
      return std::abs(v);
    else if constexpr (std::is_signed_v<C>)
      return v < 0 ? kernels::wrapping_neg(v) : v;
    else
      return v;
  }
};

struct Negative {
  template <class C>
  C operator()(C v) const {
    if constexpr (std::is_floating_point_v<C>)
      return -v;
    else
      return kernels::wrapping_neg(v);
  }
};

// A clip bound in the compute type C. Integer bounds are rounded inward (a_min up, a_max
// down) so that comparisons in C give the same answer as comparisons of real numbers.
template <class C>
C clip_bound(double bound, bool is_lower) {
  if constexpr (std::is_floating_point_v<C>) {
    using L = std::numeric_limits<C>;
    if (bound > static_cast<double>(L::max())) return L::infinity();
    if (bound < static_cast<double>(L::lowest())) return -L::infinity();
    return static_cast<C>(bound);
  } else {
    return kernels::saturating_trunc<C>(is_lower ? std::ceil(bound) : std::floor(bound));
  }
}

void clip_kernel(const Attrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  const double a_min = attrs.get_double("a_min");
  const double a_max = attrs.get_double("a_max");
  dispatch_dtype(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      throw Error("bool data is not supported").op("clip");
    } else {
      using C = kernels::Compute<T>;
      const C lo = clip_bound<C>(a_min, true);
      const C hi = clip_bound<C>(a_max, false);
      // Lower bound first, then upper: a_min > a_max yields a_max; NaN stays NaN.
      map_elements<T>(in[0], out[0], [lo, hi](C v) {
        C low_clipped = v < lo ? lo : v;
        return low_clipped > hi ? hi : low_clipped;
      });
    }
  });
}

void cast_kernel(const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
  const NDArray& src = in[0];
  NDArray& dst = out[0];
  if (src.dtype() == dst.dtype()) {
    if (src.nbytes()) std::memcpy(dst.raw(), src.raw(), src.nbytes());
    return;
  }
  const int64_t n = src.numel();
  dispatch_dtype(src.dtype(), [&](auto from_tag) {
    using From = decltype(from_tag);
    const From* x = src.data<From>();
    dispatch_dtype(dst.dtype(), [&](auto to_tag) {
      using To = decltype(to_tag);
      To* y = dst.data<To>();
      for (int64_t i = 0; i < n; ++i) y[i] = kernels::convert_element<To>(x[i]);
    });
  });
}

}  // namespace

void register_tensor_unary_kernels(KernelRegistry& registry) {
  registry.add("sigmoid", float_kernel("sigmoid", [](auto v) { return decltype(v)(1) / (1 + std::exp(-v)); }));
  registry.add("tanh", float_kernel("tanh", [](auto v) { return std::tanh(v); }));
  registry.add("exp", float_kernel("exp", [](auto v) { return std::exp(v); }));
  registry.add("log", float_kernel("log", [](auto v) { return std::log(v); }));
  registry.add("sqrt", float_kernel("sqrt", [](auto v) { return std::sqrt(v); }));
  registry.add("rsqrt", float_kernel("rsqrt", [](auto v) { return decltype(v)(1) / std::sqrt(v); }));
  registry.add("erf", float_kernel("erf", [](auto v) { return std::erf(v); }));
  registry.add("abs", numeric_kernel("abs", Abs{}));
  registry.add("negative", numeric_kernel("negative", Negative{}));
  registry.add("clip", clip_kernel);
  registry.add("cast", cast_kernel);
}

}  // namespace kiln
