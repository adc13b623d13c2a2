// What every fuzz target accepts: a kiln::Error about the input is the right answer to a bad
// input; anything else (a crash, a sanitizer report, another exception escaping, an
// Error::bug) is a finding and aborts the run so libFuzzer keeps the input.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "kiln/support/error.h"

namespace kiln::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

template <class Body>
void expect_only_user_errors(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    if (!e.is_bug()) return;
    std::fprintf(stderr, "kiln reported a bug: %s\n", e.what());
    std::abort();
  }
}

// A fresh empty folder for this process (external data, artifact files), removed at exit.
inline const std::filesystem::path& scratch_dir() {
  struct Dir {
    std::filesystem::path path;
    Dir() {
      path = std::filesystem::temp_directory_path() / ("kiln-fuzz-" + std::to_string(::getpid()));
      std::filesystem::create_directories(path);
    }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Dir dir;
  return dir.path;
}

}  // namespace kiln::fuzz
