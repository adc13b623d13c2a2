#include "ir/text_format.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln::text {

namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

struct SuffixInfo {
  std::string_view suffix;
  DType dtype;
};

// Literal suffixes; an empty suffix means int32 or (with a '.' or exponent) float32.
constexpr SuffixInfo kSuffixes[] = {
    {"f", DType::kFloat32},   {"f32", DType::kFloat32}, {"f16", DType::kFloat16}, {"bf16", DType::kBFloat16},
    {"f64", DType::kFloat64}, {"i8", DType::kInt8},     {"i16", DType::kInt16},   {"i32", DType::kInt32},
    {"i64", DType::kInt64},   {"u8", DType::kUInt8},    {"u16", DType::kUInt16},  {"u32", DType::kUInt32},
    {"u64", DType::kUInt64},
};

std::string_view suffix_of(DType t) {
  switch (t) {
    case DType::kFloat32: return "f";
    case DType::kInt32: return "";
    default:
      for (const auto& s : kSuffixes)
        if (s.dtype == t) return s.suffix;
      return "";
  }
}

// nan, -nan, inf, -inf or the shortest decimal text.
template <class T>
std::string real_text(T value) {
  if (std::isnan(value)) return std::signbit(value) ? "-nan" : "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  if constexpr (std::is_same_v<T, float>)
    return format_float(value);
  else
    return format_double(value);
}

template <class T>
std::optional<T> parse_real(std::string_view digits, bool negative, int special, std::string* error) {
  T value{};
  if (special == 1) {
    value = std::numeric_limits<T>::quiet_NaN();
  } else if (special == 2) {
    value = std::numeric_limits<T>::infinity();
  } else {
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc::result_out_of_range) {
      // from_chars reports underflow too; tiny values read through strtod instead.
      std::string copy(digits);
      double d = std::strtod(copy.c_str(), nullptr);
      if (std::isinf(d) || std::fabs(d) > static_cast<double>(std::numeric_limits<T>::max())) {
        *error = "out of range";
        return std::nullopt;
      }
      value = static_cast<T>(d);
    } else if (ec != std::errc() || end != digits.data() + digits.size()) {
      *error = "malformed number";
      return std::nullopt;
    }
  }
  return negative ? -value : value;
}

bool fits(DType t, uint64_t magnitude, bool negative) {
  auto limit = [&](uint64_t max_positive) {
    return negative ? magnitude <= max_positive + 1 : magnitude <= max_positive;
  };
  switch (t) {
    case DType::kInt8: return limit(127);
    case DType::kInt16: return limit(32767);
    case DType::kInt32: return limit(2147483647);
    case DType::kInt64: return limit(9223372036854775807ULL);
    case DType::kUInt8: return !negative && magnitude <= 255;
    case DType::kUInt16: return !negative && magnitude <= 65535;
    case DType::kUInt32: return !negative && magnitude <= 4294967295ULL;
    case DType::kUInt64: return !negative || magnitude == 0;
    default: return false;
  }
}

template <class T>
NDArray scalar_of(DType t, T value) {
  NDArray out = NDArray::empty({}, t);
  std::memcpy(out.raw(), &value, sizeof(T));
  return out;
}

}  // namespace

size_t plain_name_length(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    if (is_name_char(text[i])) {
      ++i;
    } else if (text[i] == ':' && i + 1 < text.size() && text[i + 1] == ':') {
      i += 2;
    } else {
      break;
    }
  }
  while (i > 0 && text[i - 1] == '.') --i;
  return i;
}

bool is_plain_name(std::string_view name) {
  return !name.empty() && !is_digit(name[0]) && plain_name_length(name) == name.size();
}

std::string quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

std::string name_text(std::string_view name) { return is_plain_name(name) ? std::string(name) : quote(name); }

std::optional<std::string> scalar_literal(const NDArray& scalar) {
  if (!scalar.defined() || scalar.ndim() != 0) return std::nullopt;
  const void* raw = scalar.raw();
  DType t = scalar.dtype();
  std::string out;
  switch (t) {
    case DType::kFloat32: {
      float v;
      std::memcpy(&v, raw, sizeof v);
      out = real_text(v);
      break;
    }
    case DType::kFloat64: {
      double v;
      std::memcpy(&v, raw, sizeof v);
      out = real_text(v);
      break;
    }
    case DType::kFloat16:
    case DType::kBFloat16: {
      uint16_t bits;
      std::memcpy(&bits, raw, sizeof bits);
      out = real_text(t == DType::kFloat16 ? half_to_float(bits) : bfloat16_to_float(bits));
      break;
    }
    case DType::kBool: {
      uint8_t b;
      std::memcpy(&b, raw, 1);
      if (b > 1) return std::nullopt;
      return std::string(b ? "True" : "False");
    }
    case DType::kUInt64: {
      uint64_t v;
      std::memcpy(&v, raw, sizeof v);
      out = std::to_string(v);
      break;
    }
    default: out = std::to_string(scalar.int_at(0)); break;
  }
  out += suffix_of(t);
  std::string error;
  std::optional<NDArray> back = parse_scalar_literal(out, &error);
  if (!back || !back->same_as(scalar)) return std::nullopt;
  return out;
}

std::optional<NDArray> parse_scalar_literal(std::string_view text, std::string* error) {
  std::string_view s = text;
  bool negative = !s.empty() && s[0] == '-';
  if (negative) s.remove_prefix(1);
  int special = 0;  // 1: nan, 2: inf
  bool float_syntax = false;
  size_t i = 0;
  if (starts_with(s, "nan") || starts_with(s, "inf")) {
    special = s[0] == 'n' ? 1 : 2;
    float_syntax = true;
    i = 3;
  } else {
    auto digits = [&] {
      size_t start = i;
      while (i < s.size() && is_digit(s[i])) ++i;
      return i > start;
    };
    if (!digits()) {
      *error = "malformed number";
      return std::nullopt;
    }
    if (i < s.size() && s[i] == '.') {
      ++i;
      float_syntax = true;
      if (!digits()) {
        *error = "malformed number";
        return std::nullopt;
      }
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      ++i;
      float_syntax = true;
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
      if (!digits()) {
        *error = "malformed exponent";
        return std::nullopt;
      }
    }
  }
  std::string_view number = s.substr(0, i);
  std::string_view suffix = s.substr(i);
  DType t = float_syntax ? DType::kFloat32 : DType::kInt32;
  if (!suffix.empty()) {
    bool known = false;
    for (const auto& entry : kSuffixes) {
      if (entry.suffix == suffix) {
        t = entry.dtype;
        known = true;
      }
    }
    if (!known) {
      *error = cat("unknown literal suffix '", suffix, "'");
      return std::nullopt;
    }
  }
  switch (t) {
    case DType::kFloat64: {
      auto v = parse_real<double>(number, negative, special, error);
      if (!v) return std::nullopt;
      return scalar_of(t, *v);
    }
    case DType::kFloat32:
    case DType::kFloat16:
    case DType::kBFloat16: {
      auto v = parse_real<float>(number, negative, special, error);
      if (!v) return std::nullopt;
      if (t == DType::kFloat32) return scalar_of(t, *v);
      return scalar_of(t, t == DType::kFloat16 ? float_to_half(*v) : float_to_bfloat16(*v));
    }
    default: break;
  }
  if (float_syntax) {
    *error = cat("an integer literal of type ", dtype_name(t), " cannot have a fraction or exponent");
    return std::nullopt;
  }
  uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), magnitude);
  if (ec != std::errc() || end != number.data() + number.size() || !fits(t, magnitude, negative)) {
    *error = cat("integer literal out of range for ", dtype_name(t));
    return std::nullopt;
  }
  if (t == DType::kUInt64) return scalar_of(t, magnitude);
  int64_t value = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  NDArray out = NDArray::empty({}, t);
  store_from_int(out.raw(), t, 0, value);
  return out;
}

namespace {
constexpr char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

std::string base64_encode(const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  for (size_t i = 0; i < size; i += 3) {
    uint32_t chunk = uint32_t(bytes[i]) << 16;
    if (i + 1 < size) chunk |= uint32_t(bytes[i + 1]) << 8;
    if (i + 2 < size) chunk |= uint32_t(bytes[i + 2]);
    out += kBase64Alphabet[(chunk >> 18) & 63];
    out += kBase64Alphabet[(chunk >> 12) & 63];
    out += i + 1 < size ? kBase64Alphabet[(chunk >> 6) & 63] : '=';
    out += i + 2 < size ? kBase64Alphabet[chunk & 63] : '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    int pad = 0;
    uint32_t chunk = 0;
    for (size_t j = 0; j < 4; ++j) {
      char c = text[i + j];
      if (c == '=' && last && j >= 2) {
        ++pad;
        chunk <<= 6;
        continue;
      }
      int v = base64_value(c);
      if (v < 0 || pad > 0) return std::nullopt;
      chunk = (chunk << 6) | uint32_t(v);
    }
    out += static_cast<char>((chunk >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((chunk >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(chunk & 0xff);
  }
  return out;
}

}  // namespace kiln::text
