// Shared by the TpuLang tests: where emitted files go, and deterministic weights.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "kiln/runtime/ndarray.h"

namespace kiln::testing::tpulang {

// KILN_TPULANG_MLIR_DIR when set (tests/cli/tpulang_mlir_parses.sh collects every emitted file
// there to run mlir-opt on them), else a scratch folder of this process.
inline std::string emit_dir() {
  if (const char* dir = std::getenv("KILN_TPULANG_MLIR_DIR"); dir && *dir) {
    std::filesystem::create_directories(dir);
    return dir;
  }
  // Removed when the test program exits.
  struct Scratch {
    std::filesystem::path dir = std::filesystem::temp_directory_path() / ("kiln_tpulang_" + std::to_string(getpid()));
    Scratch() { std::filesystem::create_directories(dir); }
    ~Scratch() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  };
  static const Scratch scratch;
  return scratch.dir.string();
}

// Values in [-1, 1) from a fixed linear congruential sequence.
inline NDArray weights(Shape shape, uint32_t seed = 1, DType dtype = DType::kFloat32) {
  NDArray a = NDArray::empty(std::move(shape), dtype);
  uint32_t state = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < a.numel(); ++i) {
    state = state * 1664525u + 1013904223u;
    a.set(i, static_cast<double>(state >> 8) / double(1u << 24) * 2.0 - 1.0);
  }
  return a;
}

}  // namespace kiln::testing::tpulang
