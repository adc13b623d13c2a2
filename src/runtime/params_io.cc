#include "runtime/params_io.h"

#include <bit>
#include <cstring>
#include <set>

#include "kiln/support/error.h"
#include "runtime/file_io.h"

namespace kiln {

namespace {

static_assert(std::endian::native == std::endian::little, "params.bin is read and written on little-endian hosts");

constexpr std::string_view kMagic = "KILNPRM1";

template <class T>
std::string_view scalar_bytes(const T& value) {
  return {reinterpret_cast<const char*>(&value), sizeof(T)};
}

// Hands params.bin's bytes, piece by piece, to `put(std::string_view)`: the string and the
// file form share the layout, and the file form writes each tensor's data where it lies
// instead of copying a 100 MB model's weights into one string first.
template <class Put>
void put_params(const NamedArrays& params, Put&& put) {
  put(kMagic);
  const uint64_t count = params.size();
  put(scalar_bytes(count));
  std::set<std::string, std::less<>> names;
  for (const auto& [name, array] : params) {
    check(array.defined(), "params: tensor '", name, "' is undefined");
    check(names.insert(name).second, "params: tensor '", name, "' given twice");
    check(name.size() <= UINT32_MAX, "params: tensor name of ", name.size(), " bytes is too long");
    const uint32_t name_size = static_cast<uint32_t>(name.size());
    put(scalar_bytes(name_size));
    put(name);
    const std::string header = npy_header(array);
    const uint64_t record_size = header.size() + array.nbytes();
    put(scalar_bytes(record_size));
    put(header);
    put(std::string_view(static_cast<const char*>(array.raw()), array.nbytes()));
  }
}

// Reads the records in order, each read checked against what is left of the input.
class Reader {
 public:
  Reader(std::string_view bytes, const std::string& what) : bytes_(bytes), what_(what) {}

  std::string_view take(uint64_t size, std::string_view field) {
    if (size > bytes_.size() - offset_)
      throw Error(cat("params file is truncated: ", field, " at byte ", offset_, " needs ", size, " bytes, ",
                      bytes_.size() - offset_, " remain"))
          .file(what_);
    std::string_view part = bytes_.substr(offset_, size);
    offset_ += size;
    return part;
  }
  template <class T>
  T scalar(std::string_view field) {
    T value;
    std::memcpy(&value, take(sizeof(T), field).data(), sizeof(T));
    return value;
  }
  uint64_t remaining() const { return bytes_.size() - offset_; }

 private:
  std::string_view bytes_;
  const std::string& what_;
  uint64_t offset_ = 0;
};

}  // namespace

std::string serialize_params(const NamedArrays& params) {
  std::string out;
  put_params(params, [&](std::string_view bytes) { out += bytes; });
  return out;
}

NamedArrays parse_params(std::string_view bytes, const std::string& what) {
  Reader reader(bytes, what);
  if (reader.remaining() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic)
    throw Error("not a kiln params file")
        .file(what)
        .expected("magic \"KILNPRM1\"", cat('"', bytes.substr(0, kMagic.size()), '"'));
  reader.take(kMagic.size(), "magic");
  const uint64_t count = reader.scalar<uint64_t>("tensor count");
  // Every record takes at least 12 bytes, so a count beyond that is corrupt, not a huge file.
  if (count > reader.remaining() / 12)
    throw Error(cat("params file claims ", count, " tensors in ", reader.remaining(), " bytes")).file(what);
  NamedArrays params;
  std::set<std::string, std::less<>> names;
  for (uint64_t i = 0; i < count; ++i) {
    const std::string field = cat("tensor #", i);
    const auto name_length = reader.scalar<uint32_t>(field + " name length");
    std::string name(reader.take(name_length, field + " name"));
    const auto npy_length = reader.scalar<uint64_t>(cat("tensor '", name, "' length"));
    std::string_view npy = reader.take(npy_length, cat("tensor '", name, "'"));
    if (!names.insert(name).second) throw Error(cat("params file holds tensor '", name, "' twice")).file(what);
    params.emplace_back(name, parse_npy(npy, cat(what, ": tensor '", name, "'")));
  }
  if (reader.remaining() != 0)
    throw Error(cat("params file has ", reader.remaining(), " unexpected bytes after its last tensor")).file(what);
  return params;
}

NamedArrays read_params(const std::string& path) { return parse_params(InputFile(path).read_all(), path); }

void write_params(const std::string& path, const NamedArrays& params) {
  AtomicFile file(path);
  try {
    put_params(params, [&](std::string_view bytes) { file.write(bytes); });
  } catch (Error& e) {
    e.file(path);
    throw;
  }
  file.commit();
}

}  // namespace kiln
