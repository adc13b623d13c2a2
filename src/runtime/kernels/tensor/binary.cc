// Reference kernels: add, subtract, multiply, divide, power, maximum, minimum, mod,
// floor_mod, left_shift, right_shift and the comparisons equal, not_equal, less, less_equal, greater, greater_equal.
// Both inputs have the same dtype (the type relation checks it) and broadcast numpy-style.
#include <cmath>
#include <string>
#include <type_traits>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/tensor/broadcast.h"
#include "runtime/kernels/tensor/element.h"

namespace kiln {
namespace {

using kernels::BroadcastRow;
using kernels::Compute;
using kernels::load;
using kernels::store;

struct Add {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return kernels::wrapping_add(a, b);
    else
      return a + b;
  }
};

struct Subtract {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return kernels::wrapping_sub(a, b);
    else
      return a - b;
  }
};

struct Multiply {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return kernels::wrapping_mul(a, b);
    else
      return a * b;
  }
};

// Integer division truncates toward zero, as C and ONNX's Div do (numpy's // and Relay's
// floor_divide round toward -inf instead; those are other ops).
struct Divide {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) throw Error("integer division by zero").op("divide");
      // MIN / -1 overflows; it wraps to MIN like the other integer ops.
      if constexpr (std::is_signed_v<C>)
        if (b == C(-1)) return kernels::wrapping_neg(a);
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
};

// Integer power by squaring (wrapping). A negative exponent gives the truncated value of
// 1 / base^-exp, i.e. 0 unless |base| == 1, consistent with truncating division.
struct Power {
  template <class C>
  C operator()(C base, C exp) const {
    if constexpr (std::is_floating_point_v<C>) {
      return std::pow(base, exp);
    } else {
      if constexpr (std::is_signed_v<C>) {
        if (exp < 0) {
          if (base == 0) throw Error("integer zero raised to a negative power").op("power");
          if (base == 1) return C(1);
          if (base == C(-1)) return exp % 2 == 0 ? C(1) : C(-1);
          return C(0);
        }
      }
      C result = 1;
      while (exp > 0) {
        if (exp % 2 == 1) result = kernels::wrapping_mul(result, base);
        base = kernels::wrapping_mul(base, base);
        exp = static_cast<C>(exp / 2);
      }
      return result;
    }
  }
};

// NaN propagates, as in numpy.maximum / numpy.minimum.
struct Maximum {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>)
      if (std::isnan(a)) return a;
    return a > b ? a : b;
  }
};
struct Minimum {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>)
      if (std::isnan(a)) return a;
    return a < b ? a : b;
  }
};

// Remainder with the sign of the dividend (C fmod, ONNX Mod with fmod=1).
struct TruncMod {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) throw Error("integer modulo by zero").op("mod");
      // MIN % -1 overflows in C although the remainder is 0.
      if constexpr (std::is_signed_v<C>)
        if (b == C(-1)) return C(0);
      return static_cast<C>(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
};

// Remainder with the sign of the divisor (Python %, ONNX Mod with fmod=0).
struct FloorMod {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) throw Error("integer modulo by zero").op("floor_mod");
      if constexpr (std::is_signed_v<C>) {
        if (b == C(-1)) return C(0);
        C r = static_cast<C>(a % b);
        return r != 0 && ((r < 0) != (b < 0)) ? static_cast<C>(r + b) : r;
      } else {
        return static_cast<C>(a % b);
      }
    } else {
      C r = std::fmod(a, b);
      return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
    }
  }
};

template <class C>
void check_shift_amount(C amount, const char* op) {
  if constexpr (std::is_signed_v<C>)
    if (amount < 0) throw Error(cat("negative shift amount ", static_cast<int64_t>(amount))).op(op);
}

// Shifts are done on the unsigned type of the same width, where every shift below the
// width is defined; wider shifts (undefined in C) give 0.
struct LeftShift {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
      check_shift_amount(b, "left_shift");
      using U = kernels::WrapUnsigned<C>;
      if (static_cast<uint64_t>(b) >= sizeof(C) * 8) return C(0);
      return static_cast<C>(static_cast<U>(static_cast<U>(a) << b));
    } else {
      (void)a, (void)b;
      throw Error("a shift needs integer operands").op("left_shift");
    }
  }
};

struct RightShift {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
      check_shift_amount(b, "right_shift");
      if (static_cast<uint64_t>(b) >= sizeof(C) * 8) {
        if constexpr (std::is_signed_v<C>)
          if (a < 0) return C(-1);
        return C(0);
      }
      // >> of a negative signed value is arithmetic since C++20.
      return static_cast<C>(a >> b);
    } else {
      (void)a, (void)b;
      throw Error("a shift needs integer operands").op("right_shift");
    }
  }
};

struct Equal {
  template <class C>
  bool operator()(C a, C b) const {
    return a == b;
  }
};
struct NotEqual {
  template <class C>
  bool operator()(C a, C b) const {
    return a != b;
  }
};
struct Less {
  template <class C>
  bool operator()(C a, C b) const {
    return a < b;
  }
};
struct LessEqual {
  template <class C>
  bool operator()(C a, C b) const {
    return a <= b;
  }
};
struct Greater {
  template <class C>
  bool operator()(C a, C b) const {
    return a > b;
  }
};
struct GreaterEqual {
  template <class C>
  bool operator()(C a, C b) const {
    return a >= b;
  }
};

// out = op(a, b) elementwise; T is the input storage type, R the result storage type.
template <class T, class R, class Op>
void binary_loop(const NDArray& a, const NDArray& b, NDArray& out, Op op) {
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  R* po = out.data<R>();
  if (a.shape() == b.shape()) {
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) po[i] = store<R>(op(load(pa[i]), load(pb[i])));
    return;
  }
  kernels::for_each_broadcast_row<2>(out.shape(), {a.shape(), b.shape()}, [&](const BroadcastRow<2>& row) {
    const T* x = pa + row.in_offset[0];
    const T* y = pb + row.in_offset[1];
    R* z = po + row.out_offset;
    const int64_t n = row.length;
    if (row.in_step[0] && row.in_step[1]) {
      for (int64_t i = 0; i < n; ++i) z[i] = store<R>(op(load(x[i]), load(y[i])));
    } else if (row.in_step[0]) {
      const auto yv = load(y[0]);
      for (int64_t i = 0; i < n; ++i) z[i] = store<R>(op(load(x[i]), yv));
    } else if (row.in_step[1]) {
      const auto xv = load(x[0]);
      for (int64_t i = 0; i < n; ++i) z[i] = store<R>(op(xv, load(y[i])));
    } else {
      const R v = store<R>(op(load(x[0]), load(y[0])));
      for (int64_t i = 0; i < n; ++i) z[i] = v;
    }
  });
}

// Arithmetic: every dtype but bool; the result has the input dtype.
template <class Op>
KernelFn arithmetic_kernel(std::string name) {
  return [name](const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
    dispatch_dtype(in[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool>)
        throw Error("bool operands are not supported").op(name);
      else
        binary_loop<T, T>(in[0], in[1], out[0], Op{});
    });
  };
}

// Comparisons: every dtype; the result is bool.
template <class Op>
KernelFn comparison_kernel() {
  return [](const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
    dispatch_dtype(in[0].dtype(), [&](auto tag) { binary_loop<decltype(tag), bool>(in[0], in[1], out[0], Op{}); });
  };
}

}  // namespace

void register_tensor_binary_kernels(KernelRegistry& registry) {
  registry.add("add", arithmetic_kernel<Add>("add"));
  registry.add("subtract", arithmetic_kernel<Subtract>("subtract"));
  registry.add("multiply", arithmetic_kernel<Multiply>("multiply"));
  registry.add("divide", arithmetic_kernel<Divide>("divide"));
  registry.add("power", arithmetic_kernel<Power>("power"));
  registry.add("maximum", arithmetic_kernel<Maximum>("maximum"));
  registry.add("minimum", arithmetic_kernel<Minimum>("minimum"));
  registry.add("mod", arithmetic_kernel<TruncMod>("mod"));
  registry.add("floor_mod", arithmetic_kernel<FloorMod>("floor_mod"));
  registry.add("left_shift", arithmetic_kernel<LeftShift>("left_shift"));
  registry.add("right_shift", arithmetic_kernel<RightShift>("right_shift"));
  registry.add("equal", comparison_kernel<Equal>());
  registry.add("not_equal", comparison_kernel<NotEqual>());
  registry.add("less", comparison_kernel<Less>());
  registry.add("less_equal", comparison_kernel<LessEqual>());
  registry.add("greater", comparison_kernel<Greater>());
  registry.add("greater_equal", comparison_kernel<GreaterEqual>());
  for (const char* op : {"add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "mod", "floor_mod",
                         "left_shift", "right_shift"})
    registry.add_output_fn(op, broadcast_output());
  for (const char* op : {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"})
    registry.add_output_fn(op, broadcast_output(DType::kBool));
}

}  // namespace kiln
