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

}  // namespace kiln
