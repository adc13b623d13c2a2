// Reference kernels: nn.lstm, nn.gru, nn.rnn. The arithmetic of the unrolled form the ONNX
// converter otherwise emits, in its order: per step the projection plus h times R (nn.dense's
// dot product, gemm_ref.h), then the gate math with sigmoid and tanh as the unary kernels compute
// them. The packed weight (panels of 32 columns of R^T, each gate padded to whole panels) is
// unpacked once into R's rows.
#include "kiln/attrs/recurrent.h"

#include "runtime/kernels/nn/compute_view.h"
#include "runtime/kernels/nn/gemm_ref.h"

namespace kiln {

namespace {

constexpr int64_t kPanel = 32;

template <class C>
C sigmoid(C v) {
  return C(1) / (1 + std::exp(-v));
}

struct SequenceShape {
  int64_t seq, batch, hidden, gates;
};

SequenceShape sequence_shape(std::span<const NDArray> inputs, int64_t gates) {
  const Shape& proj = inputs[0].shape();
  return {proj[0], proj[1], inputs[1].shape()[1], gates};
}

// R's rows (gates * hidden, hidden) from the panels: R[g*hidden + u][k] = panel column g*hp + u, row k.
template <class C>
std::vector<C> unpack_weight(const C* panels, const SequenceShape& s) {
  const int64_t hp = (s.hidden + kPanel - 1) / kPanel * kPanel;
  std::vector<C> rows(static_cast<size_t>(s.gates * s.hidden * s.hidden));
  for (int64_t g = 0; g < s.gates; ++g)
    for (int64_t u = 0; u < s.hidden; ++u) {
      const int64_t col = g * hp + u;
      const C* panel = panels + (col / kPanel) * s.hidden * kPanel + col % kPanel;
      C* row = rows.data() + (g * s.hidden + u) * s.hidden;
      for (int64_t k = 0; k < s.hidden; ++k) row[k] = panel[k * kPanel];
    }
  return rows;
}

int64_t time_of(int64_t step, const SequenceShape& s, bool reverse) { return reverse ? s.seq - 1 - step : step; }

// pre[b][j] = x[b][j] + h[b] . R[first + j] for j < count: the step's projection plus nn.dense(h, R rows).
template <class C>
void step_product(const C* x, int64_t x_row, const C* h, const std::vector<C>& r, int64_t first, int64_t count,
                  const SequenceShape& s, std::vector<C>& pre) {
  pre.resize(static_cast<size_t>(s.batch * count));
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t j = 0; j < count; ++j)
      pre[b * count + j] =
          x[b * x_row + j] + gemm_ref::dot(h + b * s.hidden, r.data() + (first + j) * s.hidden, s.hidden);
}

void lstm_kernel(const RecurrentAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const SequenceShape s = sequence_shape(inputs, 4);
  dispatch_compute(inputs[0].dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> proj(inputs[0]), weight(inputs[1]), h0(inputs[2]), c0(inputs[3]), peep(inputs[4]);
    OutView<C> out(outputs[0]);
    const std::vector<C> r = unpack_weight(weight.data(), s);
    const int64_t n = s.hidden, width = 4 * n;
    std::vector<C> h(h0.data(), h0.data() + s.batch * n), c(c0.data(), c0.data() + s.batch * n), pre;
    const C *pi = peep.data(), *po = pi + n, *pf = pi + 2 * n;
    for (int64_t step = 0; step < s.seq; ++step) {
      const int64_t t = time_of(step, s, attrs.reverse);
      step_product(proj.data() + t * s.batch * width, width, h.data(), r, 0, width, s, pre);
      for (int64_t b = 0; b < s.batch; ++b) {
        const C* p = pre.data() + b * width;
        for (int64_t u = 0; u < n; ++u) {
          C& cell = c[b * n + u];
          const C ig = sigmoid<C>(p[u] + pi[u] * cell);
          const C fg = sigmoid<C>(p[2 * n + u] + pf[u] * cell);
          const C g = std::tanh(p[3 * n + u]);
          cell = fg * cell + ig * g;
          const C og = sigmoid<C>(p[n + u] + po[u] * cell);
          h[b * n + u] = og * std::tanh(cell);
          out.data()[(t * s.batch + b) * n + u] = attrs.output_cell ? cell : h[b * n + u];
        }
      }
    }
    out.commit();
  });
}

void gru_kernel(const RecurrentAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const SequenceShape s = sequence_shape(inputs, 3);
  dispatch_compute(inputs[0].dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> proj(inputs[0]), weight(inputs[1]), rb_h(inputs[2]), h0(inputs[3]);
    OutView<C> out(outputs[0]);
    const std::vector<C> r = unpack_weight(weight.data(), s);
    const int64_t n = s.hidden, width = 3 * n;
    std::vector<C> h(h0.data(), h0.data() + s.batch * n), zr, hh, rh(static_cast<size_t>(s.batch * n));
    const std::vector<C> zeros(static_cast<size_t>(s.batch * width), C(0));
    for (int64_t step = 0; step < s.seq; ++step) {
      const int64_t t = time_of(step, s, attrs.reverse);
      const C* x = proj.data() + t * s.batch * width;
      step_product(x, width, h.data(), r, 0, 2 * n, s, zr);
      for (int64_t b = 0; b < s.batch; ++b)
        for (int64_t u = 0; u < n; ++u) rh[b * n + u] = sigmoid<C>(zr[b * 2 * n + n + u]) * h[b * n + u];
      // linear_before_reset: h Rh^T (+ Rbh) then scaled by r; otherwise (r * h) Rh^T.
      step_product(zeros.data(), width, attrs.linear_before_reset ? h.data() : rh.data(), r, 2 * n, n, s, hh);
      for (int64_t b = 0; b < s.batch; ++b)
        for (int64_t u = 0; u < n; ++u) {
          const C z = sigmoid<C>(zr[b * 2 * n + u]);
          const C rg = sigmoid<C>(zr[b * 2 * n + n + u]);
          const C recurrent = hh[b * n + u] + rb_h.data()[u];
          const C candidate = std::tanh(attrs.linear_before_reset ? x[b * width + 2 * n + u] + rg * recurrent
                                                                  : x[b * width + 2 * n + u] + recurrent);
          C& hb = h[b * n + u];
          hb = (1 - z) * candidate + z * hb;
          out.data()[(t * s.batch + b) * n + u] = hb;
        }
    }
    out.commit();
  });
}

void rnn_kernel(const RecurrentAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const SequenceShape s = sequence_shape(inputs, 1);
  dispatch_compute(inputs[0].dtype(), [&](auto tag) {
    using C = decltype(tag);
    ConstView<C> proj(inputs[0]), weight(inputs[1]), h0(inputs[2]);
    OutView<C> out(outputs[0]);
    const std::vector<C> r = unpack_weight(weight.data(), s);
    const int64_t n = s.hidden;
    std::vector<C> h(h0.data(), h0.data() + s.batch * n), pre;
    for (int64_t step = 0; step < s.seq; ++step) {
      const int64_t t = time_of(step, s, attrs.reverse);
      step_product(proj.data() + t * s.batch * n, n, h.data(), r, 0, n, s, pre);
      for (int64_t i = 0; i < s.batch * n; ++i) h[i] = std::tanh(pre[i]);
      std::copy(h.begin(), h.end(), out.data() + t * s.batch * n);
    }
    out.commit();
  });
}

}  // namespace

void register_nn_recurrent_kernels(KernelRegistry& registry) {
  registry.add<RecurrentAttrs>("nn.lstm", lstm_kernel);
  registry.add<RecurrentAttrs>("nn.gru", gru_kernel);
  registry.add<RecurrentAttrs>("nn.rnn", rnn_kernel);
}

}  // namespace kiln
