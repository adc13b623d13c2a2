// CombineParallelBatchMatmul (Relay's): batch_matmuls of the same x with y of one batch,
// dtype and transposition become one batch_matmul whose y joins theirs along N, each branch
// the slice of its N columns of the result:
//   %0 = nn.batch_matmul(%x, %y1);  %1 = nn.batch_matmul(%x, %y2)   (%y1: (B, N1, K), %y2: (B, N2, K))
//   ->
//   %0 = concatenate((%y1, %y2), axis=1);  %1 = nn.batch_matmul(%x, %0);
//   strided_slice(%1, begin=[0, 0, 0], end=[-1, -1, N1], strides=[1, 1, 1], slice_mode="size"), ...
// Relay takes only transpose_b=True; a y stored (B, K, N) is joined along its axis 2 here.
// Follow-on elementwise and broadcast calls are joined too.
#include "kiln/attrs/nn.h"
#include "kiln/transform/pass.h"
#include "transform/combine_parallel.h"

namespace kiln {

namespace {

BatchMatmulAttrs batch_matmul_attrs(const CallNode& call) {
  return attrs_from<BatchMatmulAttrs>(call.attrs, "nn.batch_matmul");
}

// The axis of y that holds N.
int64_t n_axis(const CallNode& call) { return batch_matmul_attrs(call).transpose_b ? 1 : 2; }

class ParallelBatchMatmulCombiner : public ParallelOpConcatCombiner {
 public:
  explicit ParallelBatchMatmulCombiner(int64_t min_num_branches)
      : ParallelOpConcatCombiner("nn.batch_matmul", min_num_branches) {}

 protected:
  bool is_supported_op(const CallNode& call) const override {
    if (call.args.size() != 2) return false;
    const TensorTypeNode* y = tensor_type_of(*call.args[1]);
    const TensorTypeNode* out = tensor_type_of(call);
    return y && out && y->ndim() == 3 && out->ndim() == 3 && out->shape[2] > 0;
  }

  bool can_ops_be_combined(const CallNode& a, const CallNode& b) const override {
    const BatchMatmulAttrs x = batch_matmul_attrs(a), y = batch_matmul_attrs(b);
    const TensorTypeNode& ya = *tensor_type_of(*a.args[1]);
    const TensorTypeNode& yb = *tensor_type_of(*b.args[1]);
    int64_t k = 3 - n_axis(a);  // the other one of axes 1 and 2
    return x.transpose_a == y.transpose_a && x.transpose_b == y.transpose_b && x.out_dtype == y.out_dtype &&
           ya.dtype == yb.dtype && ya.shape[0] == yb.shape[0] && ya.shape[0] != kAnyDim &&
           ya.shape[static_cast<size_t>(k)] == yb.shape[static_cast<size_t>(k)];
  }

  Expr make_combined_op(const Group& group) const override {
    const CallNode& root = *group[0][0];
    std::vector<Expr> ys;
    for (const Branch& branch : group) ys.push_back(branch[0]->args[1]);
    return make_call(root.callee, {root.args[0], join(std::move(ys), n_axis(root))}, root.attrs);
  }

  int64_t channel_axis(const CallNode&) const override { return 2; }
};

}  // namespace

IRModule combine_parallel_batch_matmul_pass(const IRModule& mod, int64_t min_num_branches) {
  return ParallelBatchMatmulCombiner(min_num_branches).combine(mod);
}

}  // namespace kiln
