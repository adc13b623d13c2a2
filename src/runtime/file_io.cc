#include "runtime/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "kiln/support/error.h"

namespace kiln {

namespace {

Error io_error(const std::string& path, const std::string& action) {
  return std::move(Error(cat("cannot ", action, ": ", std::strerror(errno))).file(path));
}

// Unique within the process (counter) and across processes (pid); O_EXCL settles races.
std::string next_temp_path(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return cat(path, ".tmp-", ::getpid(), "-", counter.fetch_add(1));
}

}  // namespace

InputFile::InputFile(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw io_error(path_, "open for reading");
  struct stat info;
  if (::fstat(fd_, &info) != 0) {
    Error error = io_error(path_, "read");
    ::close(fd_);
    throw error;
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd_);
    throw std::move(Error("not a regular file").file(path_));
  }
  size_ = static_cast<uint64_t>(info.st_size);
}

InputFile::~InputFile() { ::close(fd_); }

void InputFile::read_at(uint64_t offset, void* data, size_t size) const {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::pread(fd_, p, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw io_error(path_, "read");
    if (n == 0) throw std::move(Error("file is truncated").file(path_));
    p += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
}

std::string InputFile::read_all() const {
  std::string bytes(static_cast<size_t>(size_), '\0');
  read_at(0, bytes.data(), bytes.size());
  return bytes;
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    temp_path_ = next_temp_path(path_);
    // 0666 lets the umask decide the final permissions, as for any newly created file.
    fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST) break;
  }
  if (fd_ < 0) throw io_error(path_, "create a file in the destination directory");
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(temp_path_.c_str());
  }
}

void AtomicFile::write(const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd_, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw io_error(path_, "write");
    p += n;
    size -= static_cast<size_t>(n);
    written_ += static_cast<uint64_t>(n);
  }
}

void AtomicFile::commit() {
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 || ::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    Error error = io_error(path_, "write");
    ::unlink(temp_path_.c_str());
    throw error;
  }
}

}  // namespace kiln
