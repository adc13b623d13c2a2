// Op: einsum(data: tuple of tensors; equation) -- Einstein summation, as numpy.einsum and
// Relay's einsum: "ij,jk->ik" is a matrix product, "ii->i" a diagonal, "...ij->...ji"
// transposes batches. Without "->" the output is the ellipsis dimensions followed by the
// letters used once, alphabetically. Dimensions sharing a label must agree, except that an
// extent of 1 broadcasts (as in numpy); ellipsis dimensions broadcast from the right.
// Ellipsis dimensions left out of an explicit output are summed. Operands share one
// numeric dtype; integer sums wrap.
#include "kiln/attrs/tensor.h"
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"
#include "runtime/kernels/tensor/einsum_equation.h"

namespace kiln {
namespace {

Type einsum_relation(const std::vector<Type>& args, const EinsumAttrs& attrs) {
  const TupleTypeNode* tuple = as_tuple(args.at(0));
  if (!tuple || tuple->fields.empty())
    throw std::move(
        Error("argument 'data' must be a non-empty tuple of tensors").expected("(Tensor, ...)", type_str(args[0])));
  std::vector<const TensorTypeNode*> operands;
  std::vector<int64_t> ranks;
  for (size_t k = 0; k < tuple->fields.size(); ++k) {
    operands.push_back(&expect_tensor(tuple->fields[k], cat("operand ", k, " of argument 'data'")));
    require_dtype(cat("data.", k), operands[k]->dtype, DTypeClass::kNumeric);
    require_same_dtype("data.0", operands[0]->dtype, cat("data.", k), operands[k]->dtype);
    ranks.push_back(operands[k]->ndim());
  }
  const std::string& equation = attrs.equation;
  EinsumEquation eq = parse_einsum_equation(equation, ranks);

  // Extent of each label: 1 until a larger one is seen; unknown (-1) defers to known ones.
  std::vector<int64_t> extent(static_cast<size_t>(eq.num_labels()), 1);
  std::vector<bool> unknown(extent.size(), false);
  for (size_t k = 0; k < operands.size(); ++k) {
    for (size_t d = 0; d < eq.operand_labels[k].size(); ++d) {
      const size_t label = static_cast<size_t>(eq.operand_labels[k][d]);
      const int64_t dim = operands[k]->shape[d];
      if (dim == kAnyDim) {
        unknown[label] = true;
      } else if (dim != 1) {
        if (extent[label] != 1 && extent[label] != dim) {
          std::string shapes;
          for (const auto* op : operands) shapes += (shapes.empty() ? "" : ", ") + shape_str(op->shape);
          throw std::move(Error(cat("einsum equation '", equation, "' gives label '", eq.label_names[label],
                                    "' different extents in operands of shapes ", shapes))
                              .expected(cat(extent[label]), cat(dim)));
        }
        extent[label] = dim;
      }
    }
  }
  Shape out;
  for (int label : eq.output_labels) {
    const size_t l = static_cast<size_t>(label);
    out.push_back(unknown[l] && extent[l] == 1 ? kAnyDim : extent[l]);
  }
  return tensor_type(std::move(out), operands[0]->dtype);
}

}  // namespace

void register_tensor_einsum_ops(OpRegistry& registry) {
  registry.add("einsum")
      .describe("Einstein summation over a tuple of operands, by the equation (numpy.einsum's notation).")
      .arg("data")
      .attrs<EinsumAttrs>()
      .set_relation<EinsumAttrs>(einsum_relation)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
