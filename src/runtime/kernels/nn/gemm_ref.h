// The reference kernels' matrix product (nn.dense, nn.matmul, nn.attention): one arithmetic, so
// that a fused op gives bit for bit what the chain of ops it replaces gives.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::gemm_ref {

// Dot product with eight independent partial sums, so the compiler can vectorise it.
template <class C>
C dot(const C* a, const C* b, int64_t k) {
  C partial[8] = {};
  int64_t i = 0;
  for (; i + 8 <= k; i += 8)
    for (int j = 0; j < 8; ++j) partial[j] += a[i + j] * b[i + j];
  C sum = C(0);
  for (; i < k; ++i) sum += a[i] * b[i];
  for (int j = 0; j < 8; ++j) sum += partial[j];
  return sum;
}

template <class C>
void gemm_nt(const C* a, const C* b, C* out, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) out[i * n + j] = dot(a + i * k, b + j * k, k);
}

// A matrix of `rows` x `depth` with depth contiguous: `src` itself, or its transpose
// (stored depth x rows) copied into `buffer`.
template <class C>
const C* rows_by_depth(const C* src, int64_t rows, int64_t depth, bool stored_transposed, std::vector<C>& buffer) {
  if (!stored_transposed) return src;
  buffer.resize(static_cast<size_t>(rows * depth));
  for (int64_t d = 0; d < depth; ++d)
    for (int64_t r = 0; r < rows; ++r) buffer[r * depth + d] = src[d * rows + r];
  return buffer.data();
}

}  // namespace kiln::gemm_ref
