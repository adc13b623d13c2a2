// Op: unreachable(message, shape, dtype), a value that must never be computed. The ONNX
// importer puts it in place of an If branch that does not convert for the input shapes
// given (exporters write each branch only for the inputs it is taken with), so the model
// still imports and runs whenever the other branch is taken, as in ONNX Runtime. It has
// no arguments and the type of the output it stands for (shape may hold unknown
// dimensions, -1); running it throws `message`. It is nondeterministic so that no pass
// folds it into a constant, and opaque so that fusion leaves it alone.
#include "kiln/attrs/control.h"
#include "kiln/attrs/dtype_attr.h"
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {
namespace {

// The shape is checked by UnreachableAttrs::validate; its -1 extents are kiln's unknown ones.
Type unreachable_relation(const std::vector<Type>&, const UnreachableAttrs& attrs) {
  static_assert(kAnyDim == -1);
  return tensor_type(attrs.shape, parse_dtype_attr("dtype", attrs.dtype));
}

}  // namespace

void register_control_unreachable_ops(OpRegistry& registry) {
  registry.add("unreachable")
      .describe(
          "Stands for a value that cannot be computed (an If branch that does not convert for the given "
          "input shapes): typed as a tensor of attribute shape and dtype, and throws message when run.")
      .attrs<UnreachableAttrs>()
      .set_relation<UnreachableAttrs>(unreachable_relation)
      .set_pattern(OpPattern::kOpaque)
      .set_nondeterministic();
}

}  // namespace kiln
