#include "runtime/zip.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "kiln/support/error.h"

namespace kiln::zip {

namespace {

constexpr uint32_t kLocalHeaderSig = 0x04034b50;
constexpr uint32_t kCentralHeaderSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50;
constexpr uint32_t kEnd64LocatorSig = 0x07064b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kStored = 0;
constexpr uint16_t kDeflated = 8;
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kEndSize = 22;
constexpr uint32_t kMax32 = 0xffffffff;
// zlib counts in uInt; larger buffers go through in pieces.
constexpr size_t kZlibChunk = size_t{1} << 30;
// DOS date 1980-01-01, time 00:00: fixed so that equal inputs give equal archives.
constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;

Error corrupt(const std::string& what, const std::string& detail) {
  return std::move(Error(cat("corrupt zip archive: ", detail)).file(what));
}

// Bounds-checked little-endian reads from the archive.
class ByteReader {
 public:
  ByteReader(std::string_view bytes, const std::string& what) : bytes_(bytes), what_(what) {}

  uint64_t uint(uint64_t offset, int width) const {
    need(offset, static_cast<uint64_t>(width), "a header");
    uint64_t v = 0;
    for (int i = width - 1; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(bytes_[offset + static_cast<uint64_t>(i)]);
    return v;
  }
  uint16_t u16(uint64_t offset) const { return static_cast<uint16_t>(uint(offset, 2)); }
  uint32_t u32(uint64_t offset) const { return static_cast<uint32_t>(uint(offset, 4)); }
  uint64_t u64(uint64_t offset) const { return uint(offset, 8); }
  std::string_view slice(uint64_t offset, uint64_t size, const char* part) const {
    need(offset, size, part);
    return bytes_.substr(offset, size);
  }
  void need(uint64_t offset, uint64_t size, const char* part) const {
    if (offset > bytes_.size() || size > bytes_.size() - offset)
      throw corrupt(what_, cat(part, " at offset ", offset, " runs past the end of the file (", bytes_.size(),
                               " bytes); the file is truncated"));
  }
  size_t size() const { return bytes_.size(); }

 private:
  std::string_view bytes_;
  const std::string& what_;
};

struct Directory {
  uint64_t entries = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

// The end-of-central-directory record is the last thing in the file, followed only by a
// comment of at most 64 KiB; the zip64 locator, when present, sits just before it.
Directory find_directory(const ByteReader& in, const std::string& what) {
  if (in.size() < kEndSize) throw corrupt(what, "too short to be a zip archive (no end-of-directory record)");
  uint64_t lowest = in.size() >= kEndSize + 0xffff ? in.size() - kEndSize - 0xffff : 0;
  for (uint64_t pos = in.size() - kEndSize + 1; pos-- > lowest;) {
    if (in.u32(pos) != kEndSig || pos + kEndSize + in.u16(pos + 20) != in.size()) continue;
    if (in.u16(pos + 4) != 0 || in.u16(pos + 6) != 0) throw corrupt(what, "multi-disk archives are not supported");
    Directory d{in.u16(pos + 10), in.u32(pos + 16), in.u32(pos + 12)};
    bool needs_zip64 = d.entries == 0xffff || d.offset == kMax32 || d.size == kMax32;
    if (pos >= 20 && in.u32(pos - 20) == kEnd64LocatorSig) {
      uint64_t end64 = in.u64(pos - 20 + 8);
      if (in.u32(end64) != kEnd64Sig) throw corrupt(what, "bad zip64 end-of-directory record");
      d = Directory{in.u64(end64 + 32), in.u64(end64 + 48), in.u64(end64 + 40)};
    } else if (needs_zip64) {
      throw corrupt(what, "zip64 end-of-directory locator missing");
    }
    return d;
  }
  throw corrupt(what, "no end-of-directory record (not a zip archive, or truncated)");
}

struct EntryInfo {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;
  uint64_t local_offset = 0;
};

// Fields saturated at 0xffffffff in the header are found, in this order, in the zip64 extra.
void apply_zip64_extra(const ByteReader& in, uint64_t extra, uint64_t extra_end, EntryInfo& e,
                       const std::string& what) {
  while (extra + 4 <= extra_end) {
    uint16_t id = in.u16(extra);
    uint64_t field_end = extra + 4 + in.u16(extra + 2);
    if (field_end > extra_end) throw corrupt(what, cat("extra field of entry '", e.name, "' is too long"));
    if (id == kZip64ExtraId) {
      uint64_t pos = extra + 4;
      for (uint64_t* field : {&e.size, &e.compressed_size, &e.local_offset}) {
        if (*field != kMax32) continue;
        if (pos + 8 > field_end) throw corrupt(what, cat("zip64 extra field of entry '", e.name, "' is too short"));
        *field = in.u64(pos);
        pos += 8;
      }
    }
    extra = field_end;
  }
}

EntryInfo read_central_header(const ByteReader& in, uint64_t& pos, const std::string& what) {
  if (in.u32(pos) != kCentralHeaderSig) throw corrupt(what, cat("bad central directory header at offset ", pos));
  EntryInfo e;
  e.flags = in.u16(pos + 8);
  e.method = in.u16(pos + 10);
  e.crc = in.u32(pos + 16);
  e.compressed_size = in.u32(pos + 20);
  e.size = in.u32(pos + 24);
  uint16_t name_len = in.u16(pos + 28), extra_len = in.u16(pos + 30), comment_len = in.u16(pos + 32);
  e.local_offset = in.u32(pos + 42);
  e.name = std::string(in.slice(pos + kCentralHeaderSize, name_len, "an entry name"));
  uint64_t extra = pos + kCentralHeaderSize + name_len;
  in.need(extra, extra_len, "an extra field");
  apply_zip64_extra(in, extra, extra + extra_len, e, what);
  pos = extra + extra_len + comment_len;
  return e;
}

std::string inflate_raw(std::string_view compressed, uint64_t size, const std::string& entry, const std::string& what) {
  // Deflate cannot expand data more than about 1032 times; a larger claim is a corrupt
  // header, and refusing it avoids a huge allocation.
  if (size > compressed.size() * 1032 + 1024) throw corrupt(what, cat("entry '", entry, "' has an implausible size"));
  std::string out(static_cast<size_t>(size), '\0');
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw corrupt(what, "cannot initialise zlib");
  size_t in_pos = 0, out_pos = 0;
  int status = Z_OK;
  while (status == Z_OK) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data() + in_pos));
    z.avail_in = static_cast<uInt>(std::min(kZlibChunk, compressed.size() - in_pos));
    z.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
    z.avail_out = static_cast<uInt>(std::min(kZlibChunk, out.size() - out_pos));
    uInt given_in = z.avail_in, given_out = z.avail_out;
    status = inflate(&z, Z_NO_FLUSH);
    in_pos += given_in - z.avail_in;
    out_pos += given_out - z.avail_out;
    if (status == Z_OK && given_in == z.avail_in && given_out == z.avail_out) status = Z_BUF_ERROR;
  }
  inflateEnd(&z);
  if (status != Z_STREAM_END || out_pos != out.size())
    throw corrupt(what, cat("entry '", entry, "' does not decompress to its recorded size of ", size, " bytes"));
  return out;
}

std::string deflate_raw(std::string_view data) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error("cannot initialise zlib");
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
  size_t in_pos = 0, out_pos = 0;
  int status = Z_OK;
  while (status == Z_OK) {
    size_t in_left = data.size() - in_pos;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + in_pos));
    z.avail_in = static_cast<uInt>(std::min(kZlibChunk, in_left));
    z.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
    z.avail_out = static_cast<uInt>(std::min(kZlibChunk, out.size() - out_pos));
    uInt given_in = z.avail_in, given_out = z.avail_out;
    status = deflate(&z, in_left <= kZlibChunk ? Z_FINISH : Z_NO_FLUSH);
    in_pos += given_in - z.avail_in;
    out_pos += given_out - z.avail_out;
  }
  deflateEnd(&z);
  if (status != Z_STREAM_END) throw Error("zlib could not compress an archive entry");
  out.resize(out_pos);
  return out;
}

uint32_t crc32_of(std::string_view data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t pos = 0; pos < data.size(); pos += kZlibChunk) {
    size_t n = std::min(kZlibChunk, data.size() - pos);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data() + pos), static_cast<uInt>(n));
  }
  return static_cast<uint32_t>(crc);
}

void put(std::string& out, uint64_t value, int width) {
  for (int i = 0; i < width; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

}  // namespace

void for_each_entry(std::string_view bytes, const std::string& what,
                    const std::function<void(const std::string& name, std::string_view contents)>& fn) {
  ByteReader in(bytes, what);
  Directory dir = find_directory(in, what);
  uint64_t pos = dir.offset;
  in.need(dir.offset, dir.size, "the central directory");
  for (uint64_t i = 0; i < dir.entries; ++i) {
    EntryInfo e = read_central_header(in, pos, what);
    if (e.flags & 1) throw corrupt(what, cat("entry '", e.name, "' is encrypted"));
    if (in.u32(e.local_offset) != kLocalHeaderSig)
      throw corrupt(what, cat("bad local header for entry '", e.name, "' at offset ", e.local_offset));
    uint64_t data = e.local_offset + kLocalHeaderSize + in.u16(e.local_offset + 26) + in.u16(e.local_offset + 28);
    std::string_view stored = in.slice(data, e.compressed_size, "entry data");
    std::string inflated;
    if (e.method == kDeflated) {
      inflated = inflate_raw(stored, e.size, e.name, what);
      stored = inflated;
    } else if (e.method != kStored) {
      throw corrupt(what, cat("entry '", e.name, "' uses unsupported compression method ", e.method));
    } else if (e.compressed_size != e.size) {
      throw corrupt(what, cat("stored entry '", e.name, "' has different compressed and plain sizes"));
    }
    if (crc32_of(stored) != e.crc) throw corrupt(what, cat("CRC-32 mismatch in entry '", e.name, "'"));
    fn(e.name, stored);
  }
}

void Writer::add(const std::string& name, std::string_view contents) {
  auto too_large = [&] {
    return std::move(Error("archives of 4 GiB or 65535 entries or more are not supported").file(out_.path()));
  };
  if (contents.size() >= kMax32 || count_ + 1 >= 0xffff || name.size() > 0xffff) throw too_large();
  std::string compressed = compress_ ? deflate_raw(contents) : std::string();
  std::string_view data = compress_ ? std::string_view(compressed) : contents;
  uint64_t offset = out_.offset();
  if (offset + data.size() + name.size() + kLocalHeaderSize >= kMax32) throw too_large();
  uint32_t crc = crc32_of(contents);
  uint16_t method = compress_ ? kDeflated : kStored;
  // Bit 11: the name is UTF-8.
  uint16_t flags =
      std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; }) ? 1 << 11 : 0;
  // Fields shared by the local and the central header, from "version needed" to "extra length".
  std::string common;
  put(common, 20, 2);
  put(common, flags, 2);
  put(common, method, 2);
  put(common, 0, 2);  // time
  put(common, kDosDate, 2);
  put(common, crc, 4);
  put(common, data.size(), 4);
  put(common, contents.size(), 4);
  put(common, name.size(), 2);
  put(common, 0, 2);  // extra length

  std::string local;
  put(local, kLocalHeaderSig, 4);
  local += common;
  local += name;
  out_.write(local);
  out_.write(data);

  std::string& central = central_directory_;
  put(central, kCentralHeaderSig, 4);
  put(central, 3 << 8 | 20, 2);  // made by: Unix, zip 2.0
  central += common;
  put(central, 0, 2);                        // comment length
  put(central, 0, 2);                        // disk
  put(central, 0, 2);                        // internal attributes
  put(central, uint32_t{0100644} << 16, 4);  // external: a regular file, rw-r--r--
  put(central, offset, 4);
  central += name;
  ++count_;
}

void Writer::finish() {
  uint64_t offset = out_.offset();
  if (offset + central_directory_.size() >= kMax32)
    throw std::move(Error("archives of 4 GiB or more are not supported").file(out_.path()));
  std::string end;
  put(end, kEndSig, 4);
  put(end, 0, 2);
  put(end, 0, 2);
  put(end, count_, 2);
  put(end, count_, 2);
  put(end, central_directory_.size(), 4);
  put(end, offset, 4);
  put(end, 0, 2);
  out_.write(central_directory_);
  out_.write(end);
}

}  // namespace kiln::zip
