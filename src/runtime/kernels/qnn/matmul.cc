// Reference kernel: qnn.matmul, numpy matmul of zero-point-shifted integers accumulated in
// int64 and stored in the int32 output.
#include "kiln/attrs/qnn.h"
#include "runtime/kernels/qnn/quant_util.h"

namespace kiln {

namespace {

void qnn_matmul_kernel(const QnnMatmulAttrs&, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray &a = inputs[0], &b = inputs[1];
  NDArray& out = outputs[0];
  const Shape &as = a.shape(), &bs = b.shape(), &os = out.shape();
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  // a_zero_point is per row of a (axis -2), b_zero_point per column of b (axis -1).
  QuantParam a_zero(inputs[2], as, -2), b_zero(inputs[3], bs, -1);
  std::vector<int64_t> av = a.to_ints(), bv = b.to_ints();
  for (size_t i = 0; i < av.size(); ++i) av[i] -= static_cast<int64_t>(a_zero(static_cast<int64_t>(i)));
  for (size_t i = 0; i < bv.size(); ++i) bv[i] -= static_cast<int64_t>(b_zero(static_cast<int64_t>(i)));
  Shape out_batch(os.begin(), os.end() - 2);
  BroadcastIndexer a_batch(Shape(as.begin(), as.end() - 2), out_batch),
      b_batch(Shape(bs.begin(), bs.end() - 2), out_batch);
  int64_t o = 0;
  for (int64_t batch = 0; batch < num_elements(out_batch); ++batch) {
    const int64_t* ap = av.data() + a_batch(batch) * m * k;
    const int64_t* bp = bv.data() + b_batch(batch) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t sum = 0;
        for (int64_t r = 0; r < k; ++r) sum += ap[i * k + r] * bp[r * n + j];
        out.set(o++, saturate(static_cast<double>(sum), out.dtype()));
      }
  }
}

}  // namespace

void register_qnn_matmul_kernels(KernelRegistry& registry) {
  registry.add<QnnMatmulAttrs>("qnn.matmul", qnn_matmul_kernel);
}

}  // namespace kiln
