// Ops: zeros, ones (no arguments) and full(fill_value), which make a tensor of attribute
// shape and dtype. full's fill_value is a scalar tensor argument (so it may be computed);
// its dtype attribute defaults to "" meaning fill_value's own dtype.
#include "kiln/attrs/tensor.h"
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {
namespace {

Type constant_fill_relation(const std::vector<Type>&, const ConstantFillAttrs& attrs) {
  return tensor_type(attrs.shape, attrs.result_dtype());
}

Type full_relation(const std::vector<Type>& args, const FullAttrs& attrs) {
  const TensorTypeNode& fill = arg_tensor(args, 0, "fill_value");
  if (fill.ndim() != 0)
    throw std::move(Error("argument 'fill_value' must be a scalar").expected("shape ()", shape_str(fill.shape)));
  return tensor_type(attrs.shape, attrs.result_dtype(fill.dtype));
}

void add_constant_fill_op(OpRegistry& registry, const std::string& name, const std::string& doc) {
  registry.add(name)
      .describe(doc)
      .attrs<ConstantFillAttrs>()
      .set_relation<ConstantFillAttrs>(constant_fill_relation)
      .set_pattern(OpPattern::kElemwise);
}

}  // namespace

void register_tensor_init_ops(OpRegistry& registry) {
  add_constant_fill_op(registry, "zeros", "A tensor of attribute shape and dtype filled with 0.");
  add_constant_fill_op(registry, "ones", "A tensor of attribute shape and dtype filled with 1.");
  registry.add("full")
      .describe(
          "A tensor of attribute shape filled with the scalar fill_value, converted to attribute dtype "
          "(as cast converts; \"\" keeps fill_value's dtype).")
      .arg("fill_value")
      .attrs<FullAttrs>()
      .set_relation<FullAttrs>(full_relation)
      .set_pattern(OpPattern::kElemwise);
}

}  // namespace kiln
