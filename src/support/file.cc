#include "kiln/support/file.h"

#include <fstream>
#include <sstream>

#include "kiln/support/error.h"

namespace kiln {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open file").file(path);
  std::ostringstream os;
  os << in.rdbuf();
  if (in.bad()) throw Error("cannot read file").file(path);
  return os.str();
}

void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw Error("cannot write file").file(path);
}

}  // namespace kiln
