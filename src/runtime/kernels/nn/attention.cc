// Reference kernel: nn.attention. Per batch entry the arithmetic of the ops it replaces, in their
// order: nn.matmul's product (gemm_ref.h), the multiply by the scale, the add of the mask, the
// softmax kernel's row (max, exp(x - max) summed in order, times 1 / sum), the second product;
// so the interpreter gives the same bits before and after FuseAttention.
#include "kiln/attrs/attention.h"

#include "runtime/kernels/nn/compute_view.h"
#include "runtime/kernels/nn/gemm_ref.h"

namespace kiln {

namespace {

template <class C>
void softmax_rows(C* x, int64_t rows, int64_t n) {
  for (int64_t i = 0; i < rows; ++i) {
    C* row = x + i * n;
    C max = -std::numeric_limits<C>::infinity();
    for (int64_t j = 0; j < n; ++j) max = std::max(max, row[j]);
    if (std::isinf(max) && max < 0) max = C(0);
    C sum = C(0);
    for (int64_t j = 0; j < n; ++j) {
      row[j] = std::exp(row[j] - max);
      sum += row[j];
    }
    const C inv = C(1) / sum;
    for (int64_t j = 0; j < n; ++j) row[j] *= inv;
  }
}

void attention_kernel(const AttentionAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const Shape& qs = inputs[0].shape();
  const size_t rank = qs.size() - 2;
  const int64_t sq = qs[rank], d = qs[rank + 1], sk = inputs[1].shape()[rank], dv = inputs[2].shape()[rank + 1];
  const Shape batch(qs.begin(), qs.end() - 2);
  Shape scores_shape = batch;
  scores_shape.push_back(sq);
  scores_shape.push_back(sk);
  const bool has_mask = inputs.size() > 3;
  dispatch_compute(inputs[0].dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> q(inputs[0]), k(inputs[1]), v(inputs[2]);
    std::optional<ConstView<C>> mask;
    if (has_mask) mask.emplace(inputs[3]);
    const BroadcastIndexer mask_index(has_mask ? inputs[3].shape() : Shape{}, scores_shape);
    OutView<C> out(outputs[0]);
    std::vector<C> v_rows, scores(static_cast<size_t>(sq * sk)), rows(static_cast<size_t>(sq * dv));
    const C scale = static_cast<C>(attrs.scale);
    for (int64_t b = 0; b < num_elements(batch); ++b) {
      gemm_ref::gemm_nt(q.data() + b * sq * d, k.data() + b * sk * d, scores.data(), sq, sk, d);
      for (int64_t i = 0; i < sq * sk; ++i) {
        if (attrs.scale != 1.0) scores[i] *= scale;
        if (has_mask) scores[i] += mask->data()[mask_index(b * sq * sk + i)];
      }
      softmax_rows(scores.data(), sq, sk);
      const C* vr = gemm_ref::rows_by_depth(v.data() + b * sk * dv, dv, sk, true, v_rows);
      if (!attrs.rows_outer) {
        gemm_ref::gemm_nt(scores.data(), vr, out.data() + b * sq * dv, sq, dv, sk);
        continue;
      }
      // (Sq, batch * Dv): this batch entry's columns of every output row.
      gemm_ref::gemm_nt(scores.data(), vr, rows.data(), sq, dv, sk);
      for (int64_t i = 0; i < sq; ++i)
        std::copy_n(rows.data() + i * dv, dv, out.data() + (i * num_elements(batch) + b) * dv);
    }
    out.commit();
  });
}

}  // namespace

void register_nn_attention_kernels(KernelRegistry& registry) {
  registry.add<AttentionAttrs>("nn.attention", attention_kernel);
}

}  // namespace kiln
