// Reference kernel: det. Each matrix is factored by Gaussian elimination with partial
// pivoting (LU) in double; the determinant is the product of the pivots, negated once per
// row swap. A zero pivot column means the determinant is 0.
#include <cmath>
#include <utility>
#include <vector>

#include "runtime/kernels/kernel_util.h"

namespace kiln {
namespace {

double determinant(std::vector<double>& a, int64_t n) {
  auto el = [&](int64_t r, int64_t c) -> double& { return a[static_cast<size_t>(r * n + c)]; };
  double det = 1;
  for (int64_t col = 0; col < n; ++col) {
    int64_t pivot = col;
    for (int64_t r = col + 1; r < n; ++r)
      if (std::abs(el(r, col)) > std::abs(el(pivot, col))) pivot = r;
    if (el(pivot, col) == 0) return 0;
    if (pivot != col) {
      for (int64_t c = 0; c < n; ++c) std::swap(el(pivot, c), el(col, c));
      det = -det;
    }
    det *= el(col, col);
    for (int64_t r = col + 1; r < n; ++r) {
      const double factor = el(r, col) / el(col, col);
      for (int64_t c = col + 1; c < n; ++c) el(r, c) -= factor * el(col, c);
    }
  }
  return det;
}

void det_kernel(const Attrs&, std::span<const NDArray> in, std::span<NDArray> out) {
  const NDArray& data = in[0];
  const int64_t n = data.shape().back();
  const int64_t matrices = out[0].numel();
  std::vector<double> a(static_cast<size_t>(n * n));
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t i = 0; i < n * n; ++i) a[static_cast<size_t>(i)] = data.at(m * n * n + i);
    out[0].set(m, determinant(a, n));
  }
}

}  // namespace

void register_tensor_det_kernels(KernelRegistry& registry) { registry.add("det", det_kernel); }

}  // namespace kiln
