// Ops: transpose.
#include "kiln/attrs/transform.h"
#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/op_util.h"
#include "op/transform/transform_util.h"

namespace kiln {

namespace {

// The permutation that `axes` describes for a tensor of rank `ndim` (None reverses the dims).
std::vector<int64_t> transpose_permutation(const TransposeAttrs& attrs, const Shape& shape) {
  int64_t ndim = static_cast<int64_t>(shape.size());
  std::vector<int64_t> perm;
  if (!attrs.axes) {
    for (int64_t d = ndim - 1; d >= 0; --d) perm.push_back(d);
    return perm;
  }
  const std::vector<int64_t>& axes = *attrs.axes;
  if (static_cast<int64_t>(axes.size()) != ndim)
    throw std::move(Error(cat("'axes' must list every dim of argument 'data' with shape ", shape_str(shape)))
                        .expected(cat(ndim, " axes"), ints_str(axes)));
  std::vector<bool> seen(axes.size(), false);
  for (int64_t axis : axes) {
    int64_t a = normalize_axis(axis, ndim, "transpose axis");
    if (seen[a])
      throw std::move(Error(cat("'axes' is not a permutation: dim ", a, " appears twice"))
                          .expected(cat("a permutation of the ", ndim, " dims of ", shape_str(shape)), ints_str(axes)));
    seen[a] = true;
    perm.push_back(a);
  }
  return perm;
}

Type transpose_relation(const std::vector<Type>& args, const TransposeAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  Shape out;
  for (int64_t a : transpose_permutation(attrs, data.shape)) out.push_back(data.shape[a]);
  return tensor_type(std::move(out), data.dtype);
}

}  // namespace

void register_transform_transpose_ops(OpRegistry& registry) {
  OpDef& transpose = registry.add("transpose")
                         .describe("Permutes the dims: output dim i is input dim axes[i]. axes=None reverses the dims.")
                         .arg("data")
                         .attrs<TransposeAttrs>()
                         .set_relation<TransposeAttrs>(transpose_relation)
                         .set_pattern(OpPattern::kInjective);
  set_compute<TransposeAttrs>(transpose, [](const ComputeInput& call, const TransposeAttrs& attrs) {
    const te::Tensor x = call.args[0];
    const std::vector<int64_t> perm = transpose_permutation(attrs, x.shape());
    return std::vector<te::Tensor>{
        te::compute(expect_tensor(call.out_type, "result").shape, call.name, [&](const te::Indices& i) {
          std::vector<tir::PrimExpr> index(perm.size());
          for (size_t d = 0; d < perm.size(); ++d) index[static_cast<size_t>(perm[d])] = i[d];
          return x(index);
        })};
  });
}

}  // namespace kiln
