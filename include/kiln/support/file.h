// Reading and writing a whole file, with an error that names it.
#pragma once

#include <istream>
#include <string>
#include <string_view>

namespace kiln {

// The rest of `in`'s bytes: one read of the known size when the stream can seek (a 100 MB model
// read through a stream buffer copy took 4x as long), else copied through the buffer.
std::string read_all(std::istream& in);
// The bytes of the file at `path`; a kiln::Error naming the file when it cannot be opened or read.
std::string read_file(const std::string& path);
// Writes `bytes` as the whole file at `path`; a kiln::Error naming the file when it cannot be
// written (flushing included).
void write_file(const std::string& path, std::string_view bytes);

}  // namespace kiln
