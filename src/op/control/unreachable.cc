// Op: unreachable(message, shape, dtype), a value that must never be computed. The ONNX
// importer puts it in place of an If branch that does not convert for the input shapes
// given (exporters write each branch only for the inputs it is taken with), so the model
// still imports and runs whenever the other branch is taken, as in ONNX Runtime. It has
// no arguments and the type of the output it stands for (shape may hold unknown
// dimensions, -1); running it throws `message`. It is nondeterministic so that no pass
// folds it into a constant, and opaque so that fusion leaves it alone.
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {
namespace {

Shape shape_attr(const Attrs& attrs) {
  Shape shape = attrs.get_ints("shape");
  for (int64_t d : shape)
    if (d < kAnyDim)
      throw std::move(Error(cat("attribute 'shape' has a negative dimension: ", shape_str(shape)))
                          .expected("dimensions >= 0, or -1 for unknown", cat(d)));
  return shape;
}

DType dtype_attr(const Attrs& attrs) {
  const std::string& name = attrs.get_string("dtype");
  DType dtype;
  if (!try_parse_dtype(name, &dtype))
    throw std::move(
        Error("attribute 'dtype' is not a dtype").expected("a dtype such as \"float32\"", cat('"', name, '"')));
  return dtype;
}

Type unreachable_relation(const std::vector<Type>&, const Attrs& attrs) {
  return tensor_type(shape_attr(attrs), dtype_attr(attrs));
}

}  // namespace

void register_control_unreachable_ops(OpRegistry& registry) {
  registry.add("unreachable")
      .describe(
          "Stands for a value that cannot be computed (an If branch that does not convert for the given "
          "input shapes): typed as a tensor of attribute shape and dtype, and throws message when run.")
      .required_attr("message", AttrKind::kString)
      .required_attr("shape", AttrKind::kInts)
      .attr("dtype", AttrKind::kString, "float32")
      .set_relation(named_relation("unreachable", unreachable_relation))
      .set_pattern(OpPattern::kOpaque)
      .set_nondeterministic();
}

}  // namespace kiln
