#include "frontend/onnx/tensor_proto.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>

#include "kiln/support/error.h"
#include "kiln/support/limits.h"
#include "kiln/support/strings.h"

namespace kiln::frontend {

static_assert(std::endian::native == std::endian::little, "raw_data is little-endian; big-endian hosts need swapping");

namespace {

namespace fs = std::filesystem;
using onnx::TensorProto;

struct ElemType {
  int onnx_type;
  const char* name;
  std::optional<DType> dtype;
};

const ElemType kElemTypes[] = {
    {TensorProto::FLOAT, "float", DType::kFloat32},
    {TensorProto::UINT8, "uint8", DType::kUInt8},
    {TensorProto::INT8, "int8", DType::kInt8},
    {TensorProto::UINT16, "uint16", DType::kUInt16},
    {TensorProto::INT16, "int16", DType::kInt16},
    {TensorProto::INT32, "int32", DType::kInt32},
    {TensorProto::INT64, "int64", DType::kInt64},
    {TensorProto::STRING, "string", std::nullopt},
    {TensorProto::BOOL, "bool", DType::kBool},
    {TensorProto::FLOAT16, "float16", DType::kFloat16},
    {TensorProto::DOUBLE, "double", DType::kFloat64},
    {TensorProto::UINT32, "uint32", DType::kUInt32},
    {TensorProto::UINT64, "uint64", DType::kUInt64},
    {TensorProto::COMPLEX64, "complex64", std::nullopt},
    {TensorProto::COMPLEX128, "complex128", std::nullopt},
    {TensorProto::BFLOAT16, "bfloat16", DType::kBFloat16},
};

const ElemType* find_elem_type(int onnx_type) {
  for (const auto& e : kElemTypes)
    if (e.onnx_type == onnx_type) return &e;
  return nullptr;
}

std::string tensor_label(const TensorProto& t) {
  return t.name().empty() ? "a nameless tensor" : "tensor '" + t.name() + "'";
}

// Within the limits on rank and element count (bytes are checked when it is allocated).
int64_t checked_numel(const TensorProto& t) {
  return checked_tensor_elements(std::span<const int64_t>(t.dims().data(), static_cast<size_t>(t.dims_size())), 0,
                                 tensor_label(t));
}

Shape shape_of(const TensorProto& t) { return Shape(t.dims().begin(), t.dims().end()); }

// Copies little-endian element bytes; bools are normalised so every byte is 0 or 1.
NDArray from_raw_bytes(const TensorProto& t, DType dtype, const char* bytes, size_t size) {
  int64_t numel = checked_numel(t);
  size_t expected = static_cast<size_t>(numel) * dtype_bytes(dtype);
  if (size != expected)
    throw std::move(Error(cat(tensor_label(t), " of shape ", shape_str(shape_of(t)), " has the wrong amount of data"))
                        .expected(cat(expected, " bytes"), cat(size, " bytes")));
  NDArray out = NDArray::empty(shape_of(t), dtype);
  if (dtype == DType::kBool) {
    bool* dst = out.data<bool>();
    for (size_t i = 0; i < size; ++i) dst[i] = bytes[i] != 0;
  } else if (size > 0) {
    std::memcpy(out.raw(), bytes, size);
  }
  return out;
}

template <class Field>
void check_field_size(const TensorProto& t, const Field& field, int64_t numel, const char* field_name) {
  if (static_cast<int64_t>(field.size()) != numel)
    throw std::move(Error(cat(tensor_label(t), " of shape ", shape_str(shape_of(t)),
                              " has the wrong number of values in ", field_name))
                        .expected(cat(numel), cat(field.size())));
}

NDArray from_typed_fields(const TensorProto& t, DType dtype) {
  int64_t numel = checked_numel(t);
  NDArray out = NDArray::empty(shape_of(t), dtype);
  switch (t.data_type()) {
    case TensorProto::FLOAT:
      check_field_size(t, t.float_data(), numel, "float_data");
      std::copy(t.float_data().begin(), t.float_data().end(), out.data<float>());
      break;
    case TensorProto::DOUBLE:
      check_field_size(t, t.double_data(), numel, "double_data");
      std::copy(t.double_data().begin(), t.double_data().end(), out.data<double>());
      break;
    case TensorProto::INT64:
      check_field_size(t, t.int64_data(), numel, "int64_data");
      std::copy(t.int64_data().begin(), t.int64_data().end(), out.data<int64_t>());
      break;
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      check_field_size(t, t.uint64_data(), numel, "uint64_data");
      for (int64_t i = 0; i < numel; ++i)
        store_from_int(out.raw(), dtype, static_cast<size_t>(i), static_cast<int64_t>(t.uint64_data(i)));
      break;
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      // int32_data holds the 16-bit patterns.
      check_field_size(t, t.int32_data(), numel, "int32_data");
      for (int64_t i = 0; i < numel; ++i) out.data<uint16_t>()[i] = static_cast<uint16_t>(t.int32_data(i));
      break;
    default:  // int8/16/32, uint8/16, bool
      check_field_size(t, t.int32_data(), numel, "int32_data");
      for (int64_t i = 0; i < numel; ++i) store_from_int(out.raw(), dtype, static_cast<size_t>(i), t.int32_data(i));
      break;
  }
  return out;
}

bool has_typed_data(const TensorProto& t) {
  return t.float_data_size() > 0 || t.double_data_size() > 0 || t.int32_data_size() > 0 || t.int64_data_size() > 0 ||
         t.uint64_data_size() > 0;
}

// True when `path` resolves (through symbolic links) to somewhere outside `dir`.
bool leaves_directory(const fs::path& path, const std::string& dir) {
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(path, ec);
  const fs::path real_dir = fs::weakly_canonical(dir, ec);
  if (ec) return false;  // the open below reports what is wrong
  return std::mismatch(real_dir.begin(), real_dir.end(), real.begin(), real.end()).first != real_dir.end();
}

// Reads the byte range an external-data tensor points to, refusing paths that leave the
// model's directory, by name or through a link.
std::string read_external_bytes(const TensorProto& t, const std::string& base_dir) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& entry : t.external_data()) {
    try {
      if (entry.key() == "location") location = entry.value();
      if (entry.key() == "offset") offset = std::stoll(entry.value());
      if (entry.key() == "length") length = std::stoll(entry.value());
    } catch (const std::exception&) {
      throw Error(cat(tensor_label(t), " has a malformed external_data entry ", entry.key(), "='", entry.value(), "'"));
    }
  }
  check(!location.empty(), tensor_label(t), " is stored externally but names no location");
  check(!base_dir.empty(), tensor_label(t), " is stored in external file '", location,
        "' but the model was not loaded from a file, so there is no directory to find it in");
  fs::path rel(location);
  bool escapes = rel.is_absolute();
  for (const auto& part : rel) escapes = escapes || part == "..";
  check(!escapes, tensor_label(t), " names external file '", location, "' outside the model's directory");
  fs::path path = fs::path(base_dir) / rel;
  check(!leaves_directory(path, base_dir), tensor_label(t), " names external file '", location,
        "', a link to a file outside the model's directory");
  std::ifstream in(path, std::ios::binary);
  check(in.good(), tensor_label(t), " is stored in external file '", path.string(), "', which cannot be opened");
  std::error_code ec;
  int64_t file_size = static_cast<int64_t>(fs::file_size(path, ec));
  check(!ec, "cannot read the size of external data file '", path.string(), "'");
  if (length < 0) length = file_size - offset;
  check(offset >= 0 && length >= 0 && offset <= file_size && length <= file_size - offset, tensor_label(t), " reads ",
        length, " bytes at offset ", offset, " of external file '", path.string(), "', which has only ", file_size,
        " bytes");
  std::string bytes(static_cast<size_t>(length), '\0');
  in.seekg(offset);
  in.read(bytes.data(), length);
  check(in.good() || length == 0, "cannot read external data file '", path.string(), "'");
  return bytes;
}

}  // namespace

std::string onnx_elem_type_name(int elem_type) {
  const ElemType* e = find_elem_type(elem_type);
  return e ? e->name : cat("element type ", elem_type);
}

std::optional<DType> dtype_from_onnx(int elem_type) {
  const ElemType* e = find_elem_type(elem_type);
  return e ? e->dtype : std::nullopt;
}

DType expect_dtype_from_onnx(int elem_type, const std::string& what) {
  std::optional<DType> d = dtype_from_onnx(elem_type);
  if (!d) throw Error(cat(what, " has element type ", onnx_elem_type_name(elem_type), ", which kiln does not support"));
  return *d;
}

NDArray ndarray_from_tensor_proto(const TensorProto& t, const std::string& base_dir) {
  DType dtype = expect_dtype_from_onnx(t.data_type(), tensor_label(t));
  check(!t.has_segment(), tensor_label(t), " is segmented, which kiln does not support");
  if (t.data_location() == TensorProto::EXTERNAL) {
    std::string bytes = read_external_bytes(t, base_dir);
    return from_raw_bytes(t, dtype, bytes.data(), bytes.size());
  }
  if (t.has_raw_data()) return from_raw_bytes(t, dtype, t.raw_data().data(), t.raw_data().size());
  if (has_typed_data(t) || checked_numel(t) == 0) return from_typed_fields(t, dtype);
  throw Error(cat(tensor_label(t), " of shape ", shape_str(shape_of(t)), " holds no data"));
}

}  // namespace kiln::frontend
