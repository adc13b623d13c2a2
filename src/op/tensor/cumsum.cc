// Op: cumsum(data; axis, exclusive, reverse) -- running sums along one axis (Relay's cumsum,
// plus `reverse`, which sums from the end as ONNX CumSum's reverse=1 does). axis None sums
// the flattened data (the result is 1-D), as in Relay. Integer sums wrap on overflow.
#include "kiln/attrs/tensor.h"
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {
namespace {

Type cumsum_relation(const std::vector<Type>& args, const CumsumAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  require_dtype("data", data.dtype, DTypeClass::kNumeric);
  if (!attrs.axis) {
    int64_t n = data.is_static() ? num_elements(data.shape) : kAnyDim;
    return tensor_type({n}, data.dtype);
  }
  checked_axis(*attrs.axis, "axis", data.shape);
  return args[0];
}

}  // namespace

void register_tensor_cumsum_ops(OpRegistry& registry) {
  registry.add("cumsum")
      .describe(
          "Running sum along `axis` (None: over the flattened data). exclusive leaves each element "
          "out of its own sum (the first sum is 0); reverse sums from the end of the axis.")
      .arg("data")
      .attrs<CumsumAttrs>()
      .set_relation<CumsumAttrs>(cumsum_relation)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
