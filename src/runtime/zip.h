// The subset of the zip format that .npz archives use: stored and deflated entries,
// zip64 records when reading (NumPy writes every entry with a zip64 extra field).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "runtime/file_io.h"

namespace kiln::zip {

// Calls fn(name, contents) for each entry of the archive `bytes`, in directory order,
// after checking its CRC-32. `what` names the archive in errors.
void for_each_entry(std::string_view bytes, const std::string& what,
                    const std::function<void(const std::string& name, std::string_view contents)>& fn);

// Writes entries into `out` one by one; finish() writes the central directory.
class Writer {
 public:
  Writer(AtomicFile& out, bool compress) : out_(out), compress_(compress) {}
  void add(const std::string& name, std::string_view contents);
  void finish();

 private:
  AtomicFile& out_;
  bool compress_;
  std::string central_directory_;
  size_t count_ = 0;
};

}  // namespace kiln::zip
