// Reading and writing a whole file, with an error that names it.
#pragma once

#include <istream>
#include <string>
#include <string_view>

namespace kiln {

// The rest of `in`'s bytes: one read of the known size when the stream can seek (a 100 MB model
// read through a stream buffer copy took 4x as long), else copied through the buffer.
std::string read_all(std::istream& in);
// Appends what descriptor `fd` yields until its end (a pipe's, a file's), retrying an interrupted
// read; false on a read error, with errno set and what came before it appended.
bool read_to_end(int fd, std::string* out);
// The bytes of the file at `path`; a kiln::Error naming the file when it cannot be opened or read.
std::string read_file(const std::string& path);
// A file's bytes, read-only. A regular file is mapped, not copied: a 100 MB model costs neither
// a zero-filled buffer's page faults nor a copy out of the page cache. Anything else (a pipe,
// /dev/stdin) is read into memory. Errors name the file.
class FileBytes {
 public:
  explicit FileBytes(const std::string& path);
  FileBytes(FileBytes&& other) noexcept;
  FileBytes& operator=(FileBytes&& other) noexcept;
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  ~FileBytes();

  std::string_view view() const { return map_ ? std::string_view(static_cast<const char*>(map_), size_) : read_; }

 private:
  void unmap() noexcept;

  void* map_ = nullptr;
  size_t size_ = 0;
  std::string read_;
};

// Writes `bytes` as the whole file at `path`; a kiln::Error naming the file when it cannot be
// written (flushing included).
void write_file(const std::string& path, std::string_view bytes);

}  // namespace kiln
