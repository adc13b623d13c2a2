// Ops: transpose.
#include "kiln/attrs/transform.h"
#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/op_util.h"
#include "op/transform/transform_util.h"

namespace kiln {

namespace {

Type transpose_relation(const std::vector<Type>& args, const TransposeAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  Shape out;
  for (int64_t a : attrs.permutation(data.shape)) out.push_back(data.shape[a]);
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
    const std::vector<int64_t> perm = attrs.permutation(x.shape());
    return std::vector<te::Tensor>{
        te::compute(expect_tensor(call.out_type, "result").shape, call.name, [&](const te::Indices& i) {
          std::vector<tir::PrimExpr> index(perm.size());
          for (size_t d = 0; d < perm.size(); ++d) index[static_cast<size_t>(perm[d])] = i[d];
          return x(index);
        })};
  });
}

}  // namespace kiln
