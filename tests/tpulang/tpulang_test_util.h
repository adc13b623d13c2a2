// Shared by the TpuLang tests: where emitted files go, and deterministic weights.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "kiln/runtime/ndarray.h"
#include "kiln/tpulang/ops.h"

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

// One chain through every op function (x: 1x4x8x8), ending in a 1x5x2 tensor; its graph has
// six weights.
inline kiln::tpulang::Tensor every_op_graph(kiln::tpulang::Graph& g, const kiln::tpulang::Tensor& x) {
  using namespace kiln::tpulang;
  Tensor c = conv(x, g.tensor({4, 1, 3, 3}, "dw", "float32", weights({4, 1, 3, 3}, 4)), {}, {}, {}, {1, 1, 1, 1}, 4);
  Tensor d = deconv(c, g.tensor({4, 2, 2, 2}, "up", "float32", weights({4, 2, 2, 2}, 5)), {}, {2, 2});
  Tensor p = maxpool(d, {2, 2}, {2, 2});
  Tensor q = avgpool(p, {3, 3}, {1, 1}, {1, 1, 1, 1}, false, true);
  Tensor act = gelu(sigmoid(leaky_relu(clamp(relu(q), 0, 6), 0.1)));
  Tensor pr = prelu(act, g.tensor({2}, "slope", "float32", weights({2}, 6)));
  Tensor cat2 = concat({pr, tanh(pr)}, 1);
  Tensor arith = div(mul(sub(add(cat2, cat2), cat2), cat2), add(cat2, cat2));
  Tensor flat = reshape(arith, {1, 4, -1});
  Tensor m = matmul(flat, g.tensor({64, 5}, "fc", "float32", weights({64, 5}, 7)),
                    g.tensor({5}, "fc_bias", "float32", weights({5}, 8)));
  Tensor ln = layer_norm(m, g.tensor({5}, "gamma", "float32", weights({5}, 9)), {}, 1e-5, -1);
  Tensor sm = softmax(permute(ln, {0, 2, 1}), 1);
  Tensor sq = squeeze(unsqueeze(sm, {0}), {0});
  return slice(sq, {0, 1}, {1, 4}, {1, 2}, {0, 2});
}

}  // namespace kiln::testing::tpulang
