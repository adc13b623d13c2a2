#include "kiln/runtime/dtype.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "kiln/support/error.h"

namespace kiln {

namespace {
struct DTypeInfo {
  DType type;
  std::string_view name;
  size_t bytes;
};
constexpr DTypeInfo kInfo[] = {
    {DType::kFloat32, "float32", 4}, {DType::kFloat16, "float16", 2}, {DType::kBFloat16, "bfloat16", 2},
    {DType::kFloat64, "float64", 8}, {DType::kInt8, "int8", 1},       {DType::kInt16, "int16", 2},
    {DType::kInt32, "int32", 4},     {DType::kInt64, "int64", 8},     {DType::kUInt8, "uint8", 1},
    {DType::kUInt16, "uint16", 2},   {DType::kUInt32, "uint32", 4},   {DType::kUInt64, "uint64", 8},
    {DType::kBool, "bool", 1},
};
const DTypeInfo& info(DType t) { return kInfo[static_cast<size_t>(t)]; }
}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }
size_t dtype_bytes(DType t) { return info(t).bytes; }

bool try_parse_dtype(std::string_view name, DType* out) {
  for (const auto& i : kInfo) {
    if (i.name == name) {
      *out = i.type;
      return true;
    }
  }
  return false;
}

DType parse_dtype(std::string_view name) {
  DType t;
  if (!try_parse_dtype(name, &t)) throw Error(cat("unknown dtype '", name, "'"));
  return t;
}

bool is_float(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat64;
}
bool is_signed_int(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64;
}
bool is_unsigned_int(DType t) {
  return t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32 || t == DType::kUInt64;
}

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while (!(mant & 0x400));
      bits = sign | uint32_t(127 - 15 - e) << 23 | (mant & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffff;
  if (absx >= 0x7f800000) return uint16_t(sign | 0x7c00 | (absx > 0x7f800000 ? 0x200 : 0));
  if (absx >= 0x477ff000) return uint16_t(sign | 0x7c00);  // overflow to inf
  if (absx < 0x38800000) {                                  // subnormal or zero in half
    float a;
    std::memcpy(&a, &absx, 4);
    return uint16_t(sign | uint32_t(std::nearbyint(a * 16777216.0f)));  // a / 2^-24
  }
  uint32_t mant = absx & 0x7fffff;
  uint32_t exp = (absx >> 23) - 127 + 15;
  uint32_t h = exp << 10 | mant >> 13;
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;
  return uint16_t(sign | h);
}

uint16_t float_to_bfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

namespace {
template <class T>
double to_double(T v) {
  return static_cast<double>(v);
}
double to_double(Half v) { return half_to_float(v.bits); }
double to_double(BFloat16 v) { return bfloat16_to_float(v.bits); }

template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half{float_to_half(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16{float_to_bfloat16(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_integral_v<T>) {
    // As integer conversions: the integral part wraps modulo 2^bits (tests feed wide values to
    // int8 on purpose); only what int64 / uint64 cannot hold saturates, and NaN is 0.
    if (std::isnan(v)) return T(0);
    if (v < -0x1p63) return std::numeric_limits<T>::min();
    if (v < 0x1p63) return static_cast<T>(static_cast<int64_t>(v));
    if (v < 0x1p64) return static_cast<T>(static_cast<uint64_t>(v));
    return std::numeric_limits<T>::max();
  } else {
    return static_cast<T>(v);
  }
}
}  // namespace

double load_as_double(const void* data, DType t, size_t i) {
  return dispatch_dtype(t, [&](auto tag) { return to_double(static_cast<const decltype(tag)*>(data)[i]); });
}

void store_from_double(void* data, DType t, size_t i, double v) {
  dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    static_cast<T*>(data)[i] = from_double<T>(v);
  });
}

int64_t load_as_int(const void* data, DType t, size_t i) {
  return dispatch_dtype(t, [&](auto tag) -> int64_t {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>)
      return static_cast<int64_t>(static_cast<const T*>(data)[i]);
    else
      return static_cast<int64_t>(to_double(static_cast<const T*>(data)[i]));
  });
}

void store_from_int(void* data, DType t, size_t i, int64_t v) {
  dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>)
      static_cast<T*>(data)[i] = static_cast<T>(v);
    else
      static_cast<T*>(data)[i] = from_double<T>(static_cast<double>(v));
  });
}

}  // namespace kiln
