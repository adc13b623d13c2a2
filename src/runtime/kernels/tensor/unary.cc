// Reference kernels: sigmoid, tanh, exp, log, sqrt, rsqrt, erf, the trigonometric and
// hyperbolic functions, floor, ceil, round, trunc, abs, negative, sign, clip, isnan, isinf,
// isfinite, logical_not, cast. Input and output have the same shape; cast and the
// predicates change the dtype.
#include "kiln/attrs/unary.h"

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
using kernels::map_elements;

// A kernel for float dtypes only; fn is called with float or double.
template <class Fn>
KernelFn float_kernel(std::string name, Fn fn) {
  return [name, fn](const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
    kernels::map_float_elements(in[0], out[0], name, fn);
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

// -1, 0 or 1; NaN stays NaN (as numpy.sign); unsigned values are never negative.
struct Sign {
  template <class C>
  C operator()(C v) const {
    if constexpr (std::is_floating_point_v<C>)
      if (std::isnan(v)) return v;
    if constexpr (std::is_signed_v<C>)
      if (v < 0) return C(-1);
    return v > 0 ? C(1) : C(0);
  }
};

// Halves to even: nearbyint in the default rounding mode (kiln never changes it).
struct RoundHalfEven {
  template <class C>
  C operator()(C v) const {
    return std::nearbyint(v);
  }
};

// A bool result from float data.
template <class Pred>
KernelFn predicate_kernel(std::string name, Pred pred) {
  return [name, pred](const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
    dispatch_dtype(in[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kernels::kIsFloatStorage<T>) {
        const T* x = in[0].data<T>();
        bool* y = out[0].data<bool>();
        for (int64_t i = 0, n = in[0].numel(); i < n; ++i) y[i] = pred(load(x[i]));
      } else {
        throw Error(cat("dtype ", dtype_name(in[0].dtype()), " is not supported; a float dtype is required")).op(name);
      }
    });
  };
}

void logical_not_kernel(const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
  const bool* x = in[0].data<bool>();
  bool* y = out[0].data<bool>();
  for (int64_t i = 0, n = in[0].numel(); i < n; ++i) y[i] = !x[i];
}

void clip_kernel(const ClipAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  const double a_min = attrs.a_min;
  const double a_max = attrs.a_max;
  dispatch_dtype(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      throw Error("bool data is not supported").op("clip");
    } else {
      using C = kernels::Compute<T>;
      const C lo = kernels::clip_bound<C>(a_min, true);
      const C hi = kernels::clip_bound<C>(a_max, false);
      map_elements<T>(in[0], out[0], [lo, hi](C v) { return kernels::clip_value(v, lo, hi); });
    }
  });
}

void cast_kernel(const CastAttrs&, std::span<const NDArray> in, std::span<NDArray> out) {
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
  registry.add("sin", float_kernel("sin", [](auto v) { return std::sin(v); }));
  registry.add("cos", float_kernel("cos", [](auto v) { return std::cos(v); }));
  registry.add("tan", float_kernel("tan", [](auto v) { return std::tan(v); }));
  registry.add("asin", float_kernel("asin", [](auto v) { return std::asin(v); }));
  registry.add("acos", float_kernel("acos", [](auto v) { return std::acos(v); }));
  registry.add("atan", float_kernel("atan", [](auto v) { return std::atan(v); }));
  registry.add("sinh", float_kernel("sinh", [](auto v) { return std::sinh(v); }));
  registry.add("cosh", float_kernel("cosh", [](auto v) { return std::cosh(v); }));
  registry.add("asinh", float_kernel("asinh", [](auto v) { return std::asinh(v); }));
  registry.add("acosh", float_kernel("acosh", [](auto v) { return std::acosh(v); }));
  registry.add("atanh", float_kernel("atanh", [](auto v) { return std::atanh(v); }));
  registry.add("floor", float_kernel("floor", [](auto v) { return std::floor(v); }));
  registry.add("ceil", float_kernel("ceil", [](auto v) { return std::ceil(v); }));
  registry.add("round", float_kernel("round", RoundHalfEven{}));
  registry.add("trunc", float_kernel("trunc", [](auto v) { return std::trunc(v); }));
  registry.add("sign", numeric_kernel("sign", Sign{}));
  registry.add("isnan", predicate_kernel("isnan", [](auto v) { return std::isnan(v); }));
  registry.add("isinf", predicate_kernel("isinf", [](auto v) { return std::isinf(v); }));
  registry.add("isfinite", predicate_kernel("isfinite", [](auto v) { return std::isfinite(v); }));
  registry.add("logical_not", logical_not_kernel);
  registry.add("abs", numeric_kernel("abs", Abs{}));
  registry.add("negative", numeric_kernel("negative", Negative{}));
  registry.add<ClipAttrs>("clip", clip_kernel);
  registry.add<CastAttrs>("cast", cast_kernel);
  for (const char* op : {"sigmoid", "tanh", "exp",   "log",   "sqrt", "rsqrt", "erf",      "sin",   "cos",
                         "tan",     "asin", "acos",  "atan",  "sinh", "cosh",  "asinh",    "acosh", "atanh",
                         "floor",   "ceil", "round", "trunc", "sign", "abs",   "negative", "clip"})
    registry.add_output_fn(op, same_shape_output());
  for (const char* op : {"isnan", "isinf", "isfinite", "logical_not"})
    registry.add_output_fn(op, same_shape_output(DType::kBool));
  registry.add_output_fn("cast", [](const Attrs& attrs, std::span<const NDArray> in) {
    return std::vector<OutputSpec>{{in[0].shape(), attrs_from<CastAttrs>(attrs, "cast").to()}};
  });
}

}  // namespace kiln
