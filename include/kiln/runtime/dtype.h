// Element types of tensors, shared by the IR, the kernels and the artifact format.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace kiln {

enum class DType : uint8_t {
  kFloat32,
  kFloat16,
  kBFloat16,
  kFloat64,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kBool,
};

// Relay's names: "float32", "int64", "bool", "bfloat16" ...
std::string_view dtype_name(DType t);
// Throws kiln::Error naming the text when it is not a dtype.
DType parse_dtype(std::string_view name);
bool try_parse_dtype(std::string_view name, DType* out);
size_t dtype_bytes(DType t);
bool is_float(DType t);  // float16/bfloat16/float32/float64
bool is_signed_int(DType t);
bool is_unsigned_int(DType t);
inline bool is_int(DType t) { return is_signed_int(t) || is_unsigned_int(t); }

// IEEE half and bfloat16 conversions (round to nearest even).
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
inline float bfloat16_to_float(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint16_t float_to_bfloat16(float f);

// Storage types: float16 and bfloat16 are stored as raw uint16_t bits.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// Calls fn(T{}) with the C++ storage type of `t` (float, double, int8_t ... bool, Half, BFloat16).
template <class Fn>
decltype(auto) dispatch_dtype(DType t, Fn&& fn) {
  switch (t) {
    case DType::kFloat32: return fn(float{});
    case DType::kFloat16: return fn(Half{});
    case DType::kBFloat16: return fn(BFloat16{});
    case DType::kFloat64: return fn(double{});
    case DType::kInt8: return fn(int8_t{});
    case DType::kInt16: return fn(int16_t{});
    case DType::kInt32: return fn(int32_t{});
    case DType::kInt64: return fn(int64_t{});
    case DType::kUInt8: return fn(uint8_t{});
    case DType::kUInt16: return fn(uint16_t{});
    case DType::kUInt32: return fn(uint32_t{});
    case DType::kUInt64: return fn(uint64_t{});
    case DType::kBool: return fn(bool{});
  }
  return fn(float{});
}

// Reads element i of raw storage of type t as double / writes a double into it.
double load_as_double(const void* data, DType t, size_t i);
void store_from_double(void* data, DType t, size_t i, double v);
int64_t load_as_int(const void* data, DType t, size_t i);
void store_from_int(void* data, DType t, size_t i, int64_t v);

}  // namespace kiln
