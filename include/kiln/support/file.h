// Reading a whole file, with an error that names it.
#pragma once

#include <string>

namespace kiln {

// The bytes of the file at `path`; a kiln::Error naming the file when it cannot be opened or read.
std::string read_file(const std::string& path);

}  // namespace kiln
