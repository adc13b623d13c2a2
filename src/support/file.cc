#include "kiln/support/file.h"

#include <fstream>
#include <sstream>

#include "kiln/support/error.h"

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

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open file").file(path);
  std::string bytes = read_all(in);
  if (in.bad()) throw Error("cannot read file").file(path);
  return bytes;
}

void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw Error("cannot write file").file(path);
}

}  // namespace kiln
