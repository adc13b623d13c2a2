// CombineParallelDense (Relay's). With to_batch (the default), denses of the same 2-D data
// with weights of one shape become one nn.batch_matmul of the stacked data and the stacked
// weights, split back into the branches:
//   %0 = nn.dense(%x, %w1);  %1 = nn.dense(%x, %w2)
//   ->
//   %2 = stack((%x, %x));  %3 = stack((%w1, %w2));  %4 = nn.batch_matmul(%2, %3, transpose_b=True);
//   %5 = split(%4, indices_or_sections=2);  squeeze(%5.0, axis=[0]), squeeze(%5.1, axis=[0])
// Without it, denses of the same data with weights of the same input features become one
// dense whose weight joins theirs along the units, each branch the slice of its units.
// Follow-on elementwise and broadcast calls are joined too.
#include "kiln/attrs/nn.h"
#include "kiln/transform/pass.h"
#include "transform/combine_parallel.h"

namespace kiln {

namespace {

DenseAttrs dense_attrs(const CallNode& call) { return attrs_from<DenseAttrs>(call.attrs, "nn.dense"); }

// A dense with a typed 2-D weight of known units; data of rank `data_rank` when given.
bool plain_dense(const CallNode& call, int64_t data_rank) {
  if (call.args.size() != 2) return false;
  const auto* data = call.args[0]->checked_type() ? as_tensor(call.args[0]->checked_type()) : nullptr;
  const auto* weight = call.args[1]->checked_type() ? as_tensor(call.args[1]->checked_type()) : nullptr;
  return data && weight && weight->ndim() == 2 && weight->shape[0] > 0 &&
         (data_rank == 0 || data->ndim() == data_rank) && call.checked_type() && as_tensor(call.checked_type());
}

bool same_dtypes(const CallNode& a, const CallNode& b) {
  return dense_attrs(a).out_dtype == dense_attrs(b).out_dtype &&
         as_tensor(a.args[1]->checked_type())->dtype == as_tensor(b.args[1]->checked_type())->dtype;
}

class ParallelDenseToBatchCombiner : public ParallelOpBatchCombiner {
 public:
  explicit ParallelDenseToBatchCombiner(int64_t min_num_branches)
      : ParallelOpBatchCombiner("nn.dense", min_num_branches) {}

 protected:
  // nn.batch_matmul takes (B, M, K) data.
  bool is_supported_op(const CallNode& call) const override { return plain_dense(call, 2); }

  bool can_ops_be_combined(const CallNode& a, const CallNode& b) const override {
    const Shape& wa = as_tensor(a.args[1]->checked_type())->shape;
    const Shape& wb = as_tensor(b.args[1]->checked_type())->shape;
    return same_dtypes(a, b) && wa == wb && wa[1] != kAnyDim;
  }

  Expr make_combined_op(const Group& group) const override {
    std::vector<Expr> data, weights;
    for (const Branch& branch : group) {
      data.push_back(branch[0]->args[0]);
      weights.push_back(branch[0]->args[1]);
    }
    Attrs attrs;
    std::string out_dtype = dense_attrs(*group[0][0]).out_dtype;
    if (!out_dtype.empty()) attrs.set("out_dtype", out_dtype);
    attrs.set("transpose_b", true);
    return call_op("nn.batch_matmul", {stack(std::move(data), 0), stack(std::move(weights), 0)}, std::move(attrs));
  }
};

class ParallelDenseToDenseCombiner : public ParallelOpConcatCombiner {
 public:
  explicit ParallelDenseToDenseCombiner(int64_t min_num_branches)
      : ParallelOpConcatCombiner("nn.dense", min_num_branches) {}

 protected:
  bool is_supported_op(const CallNode& call) const override { return plain_dense(call, 0); }

  bool can_ops_be_combined(const CallNode& a, const CallNode& b) const override {
    const Shape& wa = as_tensor(a.args[1]->checked_type())->shape;
    const Shape& wb = as_tensor(b.args[1]->checked_type())->shape;
    return same_dtypes(a, b) && wa[1] == wb[1];
  }

  Expr make_combined_op(const Group& group) const override { return call_on_joined_weights(group, "units"); }

  int64_t channel_axis(const CallNode& op) const override { return tensor_type_of(op)->ndim() - 1; }
};

}  // namespace

IRModule combine_parallel_dense_pass(const IRModule& mod, int64_t min_num_branches, bool to_batch) {
  if (to_batch) return ParallelDenseToBatchCombiner(min_num_branches).combine(mod);
  return ParallelDenseToDenseCombiner(min_num_branches).combine(mod);
}

}  // namespace kiln
