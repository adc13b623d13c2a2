#include "kiln/runtime/npy.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <set>

#include "kiln/support/error.h"
#include "kiln/support/strings.h"
#include "runtime/file_io.h"
#include "runtime/zip.h"

namespace kiln {

static_assert(std::endian::native == std::endian::little, "tensor files assume a little-endian host");

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kPreambleV1 = 10;  // magic, version, 2-byte header length
constexpr size_t kPreambleV2 = 12;  // magic, version, 4-byte header length
constexpr size_t kHeaderAlignment = 64;

Error npy_error(const std::string& what, const std::string& message) { return std::move(Error(message).file(what)); }

struct NpyHeader {
  DType dtype = DType::kFloat32;
  bool byte_swapped = false;  // stored big-endian
  Shape shape;
  size_t data_offset = 0;
};

// "<f4", "|b1", ">i8" ...; bfloat16 has no NumPy dtype and is rejected.
DType dtype_from_descr(std::string_view descr, bool* byte_swapped, const std::string& what) {
  auto unsupported = [&] {
    return npy_error(what,
                     cat("unsupported dtype '", descr, "' (supported: float16/32/64, int8-64, uint8-64 and bool)"));
  };
  std::string_view code = descr;
  char order = '=';
  if (!code.empty() && std::string_view("<>|=").find(code[0]) != std::string_view::npos) {
    order = code[0];
    code.remove_prefix(1);
  }
  if (code.size() < 2) throw unsupported();
  char kind = code[0];
  std::string_view size = code.substr(1);
  struct Code {
    char kind;
    std::string_view size;
    DType dtype;
  };
  static constexpr Code kCodes[] = {
      {'f', "2", DType::kFloat16}, {'f', "4", DType::kFloat32}, {'f', "8", DType::kFloat64}, {'i', "1", DType::kInt8},
      {'i', "2", DType::kInt16},   {'i', "4", DType::kInt32},   {'i', "8", DType::kInt64},   {'u', "1", DType::kUInt8},
      {'u', "2", DType::kUInt16},  {'u', "4", DType::kUInt32},  {'u', "8", DType::kUInt64},  {'b', "1", DType::kBool},
  };
  for (const auto& c : kCodes) {
    if (c.kind == kind && c.size == size) {
      *byte_swapped = order == '>' && dtype_bytes(c.dtype) > 1;
      return c.dtype;
    }
  }
  throw unsupported();
}

std::string descr_of(DType dtype) {
  if (dtype == DType::kBFloat16) throw Error("bfloat16 tensors cannot be stored in .npy files (NumPy has no bfloat16)");
  char kind = is_float(dtype) ? 'f' : is_signed_int(dtype) ? 'i' : is_unsigned_int(dtype) ? 'u' : 'b';
  size_t bytes = dtype_bytes(dtype);
  return cat(bytes == 1 ? '|' : '<', kind, bytes);
}

// Reads the Python dict literal of a .npy header, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& what) : text_(text), what_(what) {}

  NpyHeader parse() {
    NpyHeader h;
    std::set<std::string> seen;
    expect('{');
    while (!try_consume('}')) {
      std::string key = string_literal();
      expect(':');
      if (!seen.insert(key).second) throw fail(cat("key '", key, "' appears twice"));
      if (key == "descr") {
        skip_space();
        if (peek() != '\'' && peek() != '"')
          throw fail("structured dtypes (a list as 'descr') are not supported; save a plain array");
        h.dtype = dtype_from_descr(string_literal(), &h.byte_swapped, what_);
      } else if (key == "fortran_order") {
        if (bool_literal())
          throw fail("Fortran-order arrays are not supported; save a C-contiguous array (np.ascontiguousarray)");
      } else if (key == "shape") {
        h.shape = shape_literal();
      } else {
        throw fail(cat("unexpected key '", key, "'"));
      }
      if (!try_consume(',')) {
        expect('}');
        break;
      }
    }
    for (const char* key : {"descr", "fortran_order", "shape"})
      if (!seen.count(key)) throw fail(cat("key '", key, "' is missing"));
    skip_space();
    if (pos_ != text_.size()) throw fail("unexpected text after the closing '}'");
    return h;
  }

 private:
  Error fail(const std::string& message) const {
    std::string_view shown = text_.substr(0, 200);
    while (!shown.empty() && std::isspace(static_cast<unsigned char>(shown.back()))) shown.remove_suffix(1);
    return npy_error(what_, cat("bad .npy header: ", message, " in ", shown));
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool try_consume(char c) {
    skip_space();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!try_consume(c)) throw fail(cat("expected '", c, "'"));
  }
  std::string string_literal() {
    skip_space();
    char quote = peek();
    if (quote != '\'' && quote != '"') throw fail("expected a quoted string");
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) throw fail("unterminated string");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }
  bool bool_literal() {
    skip_space();
    for (auto [word, value] :
         {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    throw fail("expected True or False");
  }
  int64_t int_literal() {
    skip_space();
    int64_t v = 0;
    size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (v > (INT64_MAX - 9) / 10) throw fail("dimension too large");
      v = v * 10 + (text_[pos_++] - '0');
    }
    if (pos_ == start) throw fail("expected a non-negative integer dimension");
    if (peek() == 'L') ++pos_;  // Python 2 long suffix
    return v;
  }
  Shape shape_literal() {
    Shape shape;
    expect('(');
    while (!try_consume(')')) {
      shape.push_back(int_literal());
      if (!try_consume(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }

  std::string_view text_;
  const std::string& what_;
  size_t pos_ = 0;
};

// Size of the preamble (magic, version, header length) and of the header that follows,
// from the first bytes of the file (at least kPreambleV2 of them, when the file has them).
std::pair<size_t, size_t> preamble_and_header_size(std::string_view start, const std::string& what) {
  if (start.size() < kPreambleV1 || start.substr(0, kMagic.size()) != kMagic)
    throw npy_error(what, starts_with(start, "PK\x03\x04") ? "not a .npy file (a zip archive: read it as .npz)"
                                                           : "not a .npy file (missing the \\x93NUMPY magic)");
  auto major = static_cast<uint8_t>(start[6]);
  auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<uint8_t>(start[i])); };
  if (major == 1) return {kPreambleV1, byte(8) | byte(9) << 8};
  if (major == 2 || major == 3) {
    if (start.size() < kPreambleV2) throw npy_error(what, "file is truncated inside the .npy preamble");
    return {kPreambleV2, byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24};
  }
  throw npy_error(what, cat("unsupported .npy format version ", int(major), ".", int(static_cast<uint8_t>(start[7]))));
}

// Bytes of data the header promises, with overflow checks against corrupt shapes.
uint64_t data_size(const NpyHeader& h, const std::string& what) {
  uint64_t bytes = dtype_bytes(h.dtype);
  for (int64_t d : h.shape)
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
      throw npy_error(what, cat("shape ", shape_str(h.shape), " is too large"));
  return bytes;
}

NpyHeader parse_header(std::string_view header_text, size_t data_offset, const std::string& what) {
  NpyHeader h = HeaderParser(header_text, what).parse();
  h.data_offset = data_offset;
  return h;
}

// Booleans must be 0 or 1 in memory; big-endian data is swapped to host order.
void fix_up_data(NDArray& array, bool byte_swapped) {
  auto* bytes = static_cast<uint8_t*>(array.raw());
  if (array.dtype() == DType::kBool)
    for (size_t i = 0; i < array.nbytes(); ++i) bytes[i] = bytes[i] != 0;
  if (!byte_swapped) return;
  size_t width = dtype_bytes(array.dtype());
  for (size_t i = 0; i < array.nbytes(); i += width) std::reverse(bytes + i, bytes + i + width);
}

void check_data_size(uint64_t expected, uint64_t found, const NpyHeader& h, const std::string& what) {
  if (found < expected)
    throw std::move(npy_error(what, cat("file is truncated: data for shape ", shape_str(h.shape), " ",
                                        dtype_name(h.dtype), " needs more bytes"))
                        .expected(cat(expected, " bytes"), cat(found)));
  if (found > expected)
    throw std::move(
        npy_error(what, cat("unexpected bytes after the data for shape ", shape_str(h.shape), " ", dtype_name(h.dtype)))
            .expected(cat(expected, " bytes"), cat(found)));
}

std::string header_bytes(const NDArray& array) {
  std::string shape = "(" + join(array.shape(), ", ") + (array.ndim() == 1 ? ",)" : ")");
  std::string dict = cat("{'descr': '", descr_of(array.dtype()), "', 'fortran_order': False, 'shape': ", shape, ", }");
  // Pad with spaces and end with '\n' so that the data starts 64-byte aligned, as NumPy does.
  auto padded_header_len = [&](size_t preamble) {
    size_t total = (preamble + dict.size() + 1 + kHeaderAlignment - 1) / kHeaderAlignment * kHeaderAlignment;
    return total - preamble;
  };
  bool v1 = padded_header_len(kPreambleV1) <= 0xffff;  // version 1.0 has a 2-byte header length
  size_t header_len = padded_header_len(v1 ? kPreambleV1 : kPreambleV2);
  dict.append(header_len - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::string out(kMagic);
  out.push_back(static_cast<char>(v1 ? 1 : 2));
  out.push_back(0);
  for (size_t i = 0; i < (v1 ? 2u : 4u); ++i) out.push_back(static_cast<char>((header_len >> (8 * i)) & 0xff));
  return out + dict;
}

}  // namespace

NDArray parse_npy(std::string_view bytes, const std::string& what) {
  auto [preamble, header_len] = preamble_and_header_size(bytes, what);
  if (bytes.size() < preamble + header_len) throw npy_error(what, "file is truncated inside the .npy header");
  NpyHeader h = parse_header(bytes.substr(preamble, header_len), preamble + header_len, what);
  uint64_t expected = data_size(h, what);
  check_data_size(expected, bytes.size() - h.data_offset, h, what);
  NDArray array = NDArray::empty(h.shape, h.dtype);
  if (expected) std::memcpy(array.raw(), bytes.data() + h.data_offset, expected);
  fix_up_data(array, h.byte_swapped);
  return array;
}

NDArray read_npy(const std::string& path) {
  // Reads the data straight into the tensor: weight files can be large.
  InputFile file(path);
  std::string start(static_cast<size_t>(std::min<uint64_t>(file.size(), kPreambleV2)), '\0');
  file.read_at(0, start.data(), start.size());
  auto [preamble, header_len] = preamble_and_header_size(start, path);
  if (file.size() < preamble + header_len) throw npy_error(path, "file is truncated inside the .npy header");
  std::string header_text(header_len, '\0');
  file.read_at(preamble, header_text.data(), header_len);
  NpyHeader h = parse_header(header_text, preamble + header_len, path);
  uint64_t expected = data_size(h, path);
  check_data_size(expected, file.size() - h.data_offset, h, path);
  NDArray array = NDArray::empty(h.shape, h.dtype);
  file.read_at(h.data_offset, array.raw(), expected);
  fix_up_data(array, h.byte_swapped);
  return array;
}

std::string npy_header(const NDArray& array) {
  check(array.defined(), "cannot serialize an undefined tensor");
  return header_bytes(array);
}

std::string serialize_npy(const NDArray& array) {
  std::string out = npy_header(array);
  out.append(static_cast<const char*>(array.raw()), array.nbytes());
  return out;
}

void write_npy(const std::string& path, const NDArray& array) {
  check(array.defined(), "cannot write an undefined tensor to ", path);
  std::string header;
  try {
    header = header_bytes(array);
  } catch (Error& e) {
    e.file(path);
    throw;
  }
  AtomicFile out(path);
  out.write(header);
  out.write(array.raw(), array.nbytes());
  out.commit();
}

NamedArrays read_npz(const std::string& path) {
  std::string bytes = InputFile(path).read_all();
  NamedArrays arrays;
  zip::for_each_entry(bytes, path, [&](const std::string& name, std::string_view contents) {
    std::string key = ends_with(name, ".npy") ? name.substr(0, name.size() - 4) : name;
    arrays.emplace_back(key, parse_npy(contents, path + ":" + name));
  });
  return arrays;
}

void write_npz(const std::string& path, const NamedArrays& arrays, bool compress) {
  std::set<std::string> keys;
  for (const auto& [key, array] : arrays) {
    if (!keys.insert(key).second) throw std::move(Error(cat("duplicate array name '", key, "'")).file(path));
    if (!array.defined()) throw std::move(Error(cat("array '", key, "' is undefined")).file(path));
    if (array.dtype() == DType::kBFloat16)
      throw std::move(Error(cat("array '", key, "' is bfloat16, which NumPy cannot store")).file(path));
  }
  AtomicFile out(path);
  zip::Writer writer(out, compress);
  for (const auto& [key, array] : arrays) writer.add(key + ".npy", serialize_npy(array));
  writer.finish();
  out.commit();
}

std::string sanitize_tensor_name(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    bool safe =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!safe) c = '_';
  }
  return out;
}

}  // namespace kiln
