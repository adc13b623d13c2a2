// Helpers of the runtime tests: temporary folders, error capture, kernel libraries built
// from C source with the system compiler at test time.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>

#include "kiln/support/error.h"
#include "test_util.h"

namespace kiln::runtime_test {

// A fresh directory under /tmp, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln_runtime_XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Runs a shell command; returns its exit status and, in *output, its stdout and stderr.
inline int run_command(const std::string& command, std::string* output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed");
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output->append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Compiles C `source` into the shared library `library` against kiln's kernel ABI header.
inline void compile_library(const std::string& source, const std::string& library) {
  const std::string source_path = library + ".c";
  write_text(source_path, source);
  std::string output;
  const int status = run_command(
      cat("cc -shared -fPIC -O1 -Wall -Werror -I", KILN_SOURCE_DIR, "/include -o ", library, " ", source_path),
      &output);
  std::filesystem::remove(source_path);
  if (status != 0) throw std::runtime_error("cc failed:\n" + output);
}

}  // namespace kiln::runtime_test
