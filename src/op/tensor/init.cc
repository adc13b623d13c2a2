// Ops: zeros, ones (no arguments) and full(fill_value), which make a tensor of attribute
// shape and dtype. full's fill_value is a scalar tensor argument (so it may be computed);
// its dtype attribute defaults to "" meaning fill_value's own dtype.
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {
namespace {

Shape static_shape_attr(const Attrs& attrs) {
  Shape shape = attrs.get_ints("shape");
  for (int64_t d : shape)
    if (d < 0)
      throw std::move(Error(cat("attribute 'shape' has a negative dimension: ", shape_str(shape)))
                          .expected("dimensions >= 0", cat(d)));
  return shape;
}

DType dtype_attr(const Attrs& attrs, DType if_empty) {
  const std::string& name = attrs.get_string("dtype");
  if (name.empty()) return if_empty;
  DType dtype;
  if (!try_parse_dtype(name, &dtype))
    throw std::move(
        Error("attribute 'dtype' is not a dtype").expected("a dtype such as \"float32\"", cat('"', name, '"')));
  return dtype;
}

Type constant_fill_relation(const std::vector<Type>&, const Attrs& attrs) {
  return tensor_type(static_shape_attr(attrs), dtype_attr(attrs, DType::kFloat32));
}

Type full_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& fill = arg_tensor(args, 0, "fill_value");
  if (fill.ndim() != 0)
    throw std::move(Error("argument 'fill_value' must be a scalar").expected("shape ()", shape_str(fill.shape)));
  return tensor_type(static_shape_attr(attrs), dtype_attr(attrs, fill.dtype));
}

void add_constant_fill_op(OpRegistry& registry, const std::string& name, const std::string& doc) {
  registry.add(name)
      .describe(doc)
      .required_attr("shape", AttrKind::kInts)
      .attr("dtype", AttrKind::kString, "float32")
      .set_relation(named_relation(name, constant_fill_relation))
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
      .required_attr("shape", AttrKind::kInts)
      .attr("dtype", AttrKind::kString, "")
      .set_relation(named_relation("full", full_relation))
      .set_pattern(OpPattern::kElemwise);
}

}  // namespace kiln
