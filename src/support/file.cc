#include "kiln/support/file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

std::string read_all(std::istream& in) {
  const std::istream::pos_type start = in.tellg();
  if (start != std::istream::pos_type(-1) && in.seekg(0, std::ios::end)) {
    const std::streamoff size = in.tellg() - start;
    in.seekg(start);
    std::string bytes(static_cast<size_t>(size), '\0');
    in.read(bytes.data(), size);
    bytes.resize(static_cast<size_t>(in.gcount()));
    if (in.gcount() == size) in.clear(in.rdstate() & std::ios::badbit);
    return bytes;
  }
  in.clear(in.rdstate() & std::ios::badbit);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

bool read_to_end(int fd, std::string* out) {
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out->append(buffer, static_cast<size_t>(n));
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open file").file(path);
  std::string bytes = read_all(in);
  if (in.bad()) throw Error("cannot read file").file(path);
  return bytes;
}

namespace {

// Closes the descriptor on every way out of the constructor.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

FileBytes::FileBytes(const std::string& path) {
  Descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) throw Error(cat("cannot open file: ", std::strerror(errno))).file(path);
  struct stat info {};
  if (::fstat(file.fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
    size_ = static_cast<size_t>(info.st_size);
    void* map = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, file.fd, 0);
    if (map != MAP_FAILED) {
      map_ = map;
      return;
    }
  }
  if (!read_to_end(file.fd, &read_)) throw Error(cat("cannot read file: ", std::strerror(errno))).file(path);
}

FileBytes::FileBytes(FileBytes&& other) noexcept
    : map_(std::exchange(other.map_, nullptr)), size_(other.size_), read_(std::move(other.read_)) {}

FileBytes& FileBytes::operator=(FileBytes&& other) noexcept {
  if (this != &other) {
    unmap();
    map_ = std::exchange(other.map_, nullptr);
    size_ = other.size_;
    read_ = std::move(other.read_);
  }
  return *this;
}

FileBytes::~FileBytes() { unmap(); }

void FileBytes::unmap() noexcept {
  if (map_) ::munmap(map_, size_);
  map_ = nullptr;
}

void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw Error("cannot write file").file(path);
}

}  // namespace kiln
