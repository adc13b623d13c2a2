// Reference kernel: einsum. For every output element, sums the product of the operands
// over every value of the labels not in the output. Each operand reads through one stride
// per label (the sum of its strides for a label repeated in its term, which walks the
// diagonal; 0 where its extent is 1 and the label's is larger, which broadcasts). Floats
// accumulate in double, integers in 64 bits, wrapping.
#include <type_traits>
#include <vector>

#include "kiln/attrs/tensor.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/tensor/einsum_equation.h"
#include "runtime/kernels/tensor/element.h"

namespace kiln {
namespace {

using kernels::load;

struct EinsumPlan {
  std::vector<int64_t> extent;                // per label
  std::vector<std::vector<int64_t>> strides;  // per operand, per label
  std::vector<int> output_labels, summed_labels;
};

EinsumPlan plan_einsum(const EinsumEquation& eq, std::span<const NDArray> operands) {
  EinsumPlan plan;
  const size_t labels = static_cast<size_t>(eq.num_labels());
  plan.extent.assign(labels, 1);
  for (size_t k = 0; k < operands.size(); ++k)
    for (size_t d = 0; d < eq.operand_labels[k].size(); ++d) {
      int64_t& e = plan.extent[static_cast<size_t>(eq.operand_labels[k][d])];
      if (operands[k].shape()[d] != 1) e = operands[k].shape()[d];
    }
  for (size_t k = 0; k < operands.size(); ++k) {
    std::vector<int64_t> strides = contiguous_strides(operands[k].shape());
    std::vector<int64_t>& per_label = plan.strides.emplace_back(labels, 0);
    for (size_t d = 0; d < eq.operand_labels[k].size(); ++d)
      if (operands[k].shape()[d] != 1) per_label[static_cast<size_t>(eq.operand_labels[k][d])] += strides[d];
  }
  plan.output_labels = eq.output_labels;
  std::vector<bool> in_output(labels, false);
  for (int l : eq.output_labels) in_output[static_cast<size_t>(l)] = true;
  for (size_t l = 0; l < labels; ++l)
    if (!in_output[l]) plan.summed_labels.push_back(static_cast<int>(l));
  return plan;
}

// Advances a multi-index over `labels` (last fastest); false after the last one.
bool next_index(std::vector<int64_t>& index, const std::vector<int>& labels, const std::vector<int64_t>& extent) {
  for (size_t i = labels.size(); i-- > 0;) {
    if (++index[static_cast<size_t>(labels[i])] < extent[static_cast<size_t>(labels[i])]) return true;
    index[static_cast<size_t>(labels[i])] = 0;
  }
  return false;
}

template <class T>
void einsum_typed(const EinsumPlan& plan, std::span<const NDArray> operands, NDArray& out) {
  using C = kernels::Compute<T>;
  using Acc = std::conditional_t<std::is_floating_point_v<C>, double, uint64_t>;
  T* y = out.data<T>();
  const int64_t n = out.numel();
  std::vector<int64_t> index(plan.extent.size(), 0);
  for (int64_t o = 0; o < n; ++o) {
    Acc sum = 0;
    bool more = true;
    for (int64_t e : plan.extent) more = more && e > 0;
    while (more) {
      Acc product = 1;
      for (size_t k = 0; k < operands.size(); ++k) {
        int64_t offset = 0;
        for (size_t l = 0; l < index.size(); ++l) offset += index[l] * plan.strides[k][l];
        const C v = load(operands[k].data<T>()[offset]);
        if constexpr (std::is_floating_point_v<C>)
          product *= static_cast<double>(v);
        else
          product *= static_cast<uint64_t>(static_cast<int64_t>(v));  // wraps modulo 2^64
      }
      sum += product;
      more = next_index(index, plan.summed_labels, plan.extent);
    }
    y[o] = kernels::store<T>(static_cast<C>(sum));
    next_index(index, plan.output_labels, plan.extent);
  }
}

void einsum_kernel(const EinsumAttrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
  std::vector<int64_t> ranks;
  for (const NDArray& a : in) ranks.push_back(a.ndim());
  const EinsumPlan plan = plan_einsum(parse_einsum_equation(attrs.equation, ranks), in);
  dispatch_dtype(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>)
      throw Error("bool operands are not supported").op("einsum");
    else
      einsum_typed<T>(plan, in, out[0]);
  });
}

}  // namespace

void register_tensor_einsum_kernels(KernelRegistry& registry) { registry.add<EinsumAttrs>("einsum", einsum_kernel); }

}  // namespace kiln
