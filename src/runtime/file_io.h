// Whole-file reads and all-or-nothing writes, with errors that name the file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

// A file open for reading at any offset; errors name the file.
class InputFile {
 public:
  explicit InputFile(std::string path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  uint64_t size() const { return size_; }
  // Reads exactly `size` bytes at `offset`; throws when the file ends before.
  void read_at(uint64_t offset, void* data, size_t size) const;
  std::string read_all() const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// A file written under a temporary name beside its destination and renamed into place
// by commit(). Destroyed without commit() (an error on the way), it removes the
// temporary, so a failed write leaves neither a half-written file nor litter behind.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t size);
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }
  // Bytes written so far.
  uint64_t offset() const { return written_; }
  const std::string& path() const { return path_; }
  void commit();

 private:
  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  uint64_t written_ = 0;
};

}  // namespace kiln
