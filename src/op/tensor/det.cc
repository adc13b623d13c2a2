// Op: det(data) -- determinants of the square matrices in the last two axes of data, shape
// (..., M, M) -> (...). Float dtypes; the reference kernel factors in double.
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {
namespace {

Type det_relation(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  require_dtype("data", data.dtype, DTypeClass::kFloat);
  const int64_t rank = data.ndim();
  if (rank < 2)
    throw std::move(Error("argument 'data' must hold square matrices in its last two axes")
                        .expected("shape (..., M, M)", shape_str(data.shape)));
  const int64_t rows = data.shape[static_cast<size_t>(rank - 2)], cols = data.shape[static_cast<size_t>(rank - 1)];
  if (rows != cols && rows != kAnyDim && cols != kAnyDim)
    throw std::move(Error("argument 'data' must hold square matrices in its last two axes")
                        .expected("shape (..., M, M)", shape_str(data.shape)));
  return tensor_type(Shape(data.shape.begin(), data.shape.end() - 2), data.dtype);
}

}  // namespace

void register_tensor_det_ops(OpRegistry& registry) {
  registry.add("det")
      .describe("Determinant of each square matrix in the last two axes: (..., M, M) -> (...).")
      .arg("data")
      .set_relation(named_relation("det", det_relation))
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
