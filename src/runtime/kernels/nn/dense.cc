// Reference kernels: nn.dense, nn.dense_packed, nn.matmul, nn.batch_matmul.
// All three reduce to out (M, N) = a (M, K) times b (N, K) transposed, where both operands
// are row-major with K contiguous; operands stored the other way round are transposed
// into a buffer first.
#include "kiln/attrs/nn.h"
#include "runtime/kernels/nn/compute_view.h"
#include "runtime/kernels/nn/gemm_ref.h"

namespace kiln {

namespace {

using gemm_ref::gemm_nt;
using gemm_ref::rows_by_depth;

struct MatmulGeometry {
  Shape a_batch, b_batch, out_batch;
  int64_t m, n, k;
  bool a_transposed, b_stored_kn;  // a stored (K, M); b stored (K, N) rather than (N, K)
};

template <class C>
void batched_matmul(const C* a, const C* b, C* out, const MatmulGeometry& g) {
  BroadcastIndexer a_index(g.a_batch, g.out_batch), b_index(g.b_batch, g.out_batch);
  std::vector<C> a_buffer, b_buffer;
  int64_t packed_b = -1;  // batch of b currently packed in b_buffer, reused while b broadcasts
  const C* b_rows = nullptr;
  const int64_t batches = num_elements(g.out_batch);
  for (int64_t i = 0; i < batches; ++i) {
    const int64_t ai = a_index(i), bi = b_index(i);
    const C* a_rows = rows_by_depth(a + ai * g.m * g.k, g.m, g.k, g.a_transposed, a_buffer);
    if (bi != packed_b) {
      b_rows = rows_by_depth(b + bi * g.n * g.k, g.n, g.k, g.b_stored_kn, b_buffer);
      packed_b = bi;
    }
    gemm_nt(a_rows, b_rows, out + i * g.m * g.n, g.m, g.n, g.k);
  }
}

// Integers into int32: the exact sum modulo 2^32 (unsigned 64-bit arithmetic wraps where int64
// would overflow), as int32 arithmetic in any order gives it, so generated code may sum in int32.
void run_int32_matmul(const NDArray& a, const NDArray& b, NDArray& out, const MatmulGeometry& g) {
  std::vector<int64_t> ai = a.to_ints(), bi = b.to_ints();
  std::vector<uint64_t> au(ai.begin(), ai.end()), bu(bi.begin(), bi.end()), ou(static_cast<size_t>(out.numel()));
  batched_matmul(au.data(), bu.data(), ou.data(), g);
  int32_t* dst = out.data<int32_t>();
  for (size_t i = 0; i < ou.size(); ++i) dst[i] = static_cast<int32_t>(static_cast<uint32_t>(ou[i]));
}

void run_matmul(const NDArray& a, const NDArray& b, NDArray& out, const MatmulGeometry& g) {
  if (is_int(a.dtype()) && out.dtype() == DType::kInt32) {
    run_int32_matmul(a, b, out, g);
    return;
  }
  dispatch_compute(a.dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> av(a), bv(b);
    OutView<C> ov(out);
    batched_matmul(av.data(), bv.data(), ov.data(), g);
    ov.commit();
  });
}

void dense_kernel(const DenseAttrs&, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const Shape& x = inputs[0].shape();
  const Shape& w = inputs[1].shape();
  check(!x.empty() && w.size() == 2, "nn.dense expects data (..., K) and a 2-D weight");
  MatmulGeometry g{{}, {}, {}, num_elements(Shape(x.begin(), x.end() - 1)), w[0], w[1], false, false};
  run_matmul(inputs[0], inputs[1], outputs[0], g);
}

// Batch dims and (rows, cols) of an operand as stored; a vector becomes a row or a column.
struct StoredMatrix {
  Shape batch;
  int64_t rows, cols;
};
StoredMatrix stored_matrix(const Shape& s, bool vector_is_row) {
  if (s.size() == 1) return vector_is_row ? StoredMatrix{{}, 1, s[0]} : StoredMatrix{{}, s[0], 1};
  return {Shape(s.begin(), s.end() - 2), s[s.size() - 2], s[s.size() - 1]};
}

void matmul_kernel(const MatmulAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray& a = inputs[0];
  const NDArray& b = inputs[1];
  // Vectors ignore the transpose flags, as in the type relation.
  bool ta = a.ndim() > 1 && attrs.transpose_a;
  bool tb = b.ndim() > 1 && attrs.transpose_b;
  StoredMatrix sa = stored_matrix(a.shape(), true), sb = stored_matrix(b.shape(), false);
  MatmulGeometry g;
  g.a_batch = sa.batch;
  g.b_batch = sb.batch;
  // The result ends with M unless a is a vector, and with N unless b is one.
  const Shape& out = outputs[0].shape();
  size_t matrix_dims = (a.ndim() > 1 ? 1 : 0) + (b.ndim() > 1 ? 1 : 0);
  g.out_batch = Shape(out.begin(), out.end() - static_cast<int64_t>(matrix_dims));
  g.m = ta ? sa.cols : sa.rows;
  g.k = ta ? sa.rows : sa.cols;
  g.n = tb ? sb.rows : sb.cols;
  g.a_transposed = ta;
  // b (N, K) is wanted: a stored (K, N) matrix, or a vector (K, 1), needs the transpose.
  g.b_stored_kn = !tb;
  run_matmul(a, b, outputs[0], g);
}

void batch_matmul_kernel(const BatchMatmulAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const Shape& x = inputs[0].shape();
  const Shape& y = inputs[1].shape();
  check(x.size() == 3 && y.size() == 3, "nn.batch_matmul expects 3-D operands");
  bool ta = attrs.transpose_a, tb = attrs.transpose_b;
  MatmulGeometry g{{x[0]}, {y[0]}, {outputs[0].shape()[0]}, ta ? x[2] : x[1], tb ? y[1] : y[2], ta ? x[1] : x[2],
                   ta,     !tb};
  run_matmul(inputs[0], inputs[1], outputs[0], g);
}

// The packed weight (P, K, block) back in (units, K) rows, then the plain product.
void dense_packed_kernel(const DensePackedAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const Shape& x = inputs[0].shape();
  const Shape& w = inputs[1].shape();
  check(!x.empty() && w.size() == 3, "nn.dense_packed expects data (..., K) and a weight (panels, K, block)");
  const int64_t k = w[1], block = w[2], units = attrs.units;
  const int64_t m = num_elements(Shape(x.begin(), x.end() - 1));
  dispatch_compute(inputs[0].dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> xv(inputs[0]), wv(inputs[1]);
    OutView<C> ov(outputs[0]);
    std::vector<C> rows(static_cast<size_t>(units * k));
    for (int64_t j = 0; j < units; ++j)
      for (int64_t p = 0; p < k; ++p) rows[j * k + p] = wv.data()[(j / block) * k * block + p * block + j % block];
    gemm_nt(xv.data(), rows.data(), ov.data(), m, units, k);
    ov.commit();
  });
}

}  // namespace

void register_nn_dense_kernels(KernelRegistry& registry) {
  registry.add<DenseAttrs>("nn.dense", dense_kernel);
  registry.add<DensePackedAttrs>("nn.dense_packed", dense_packed_kernel);
  registry.add<MatmulAttrs>("nn.matmul", matmul_kernel);
  registry.add<BatchMatmulAttrs>("nn.batch_matmul", batch_matmul_kernel);
}

}  // namespace kiln
