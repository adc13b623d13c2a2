// Ops: one_hot, reverse_sequence.
#include "kiln/attrs/transform.h"
#include "op/op_util.h"

namespace kiln {

namespace {

void require_scalar(const std::string& name, const TensorTypeNode& t) {
  if (t.ndim() != 0)
    throw std::move(Error(cat("argument '", name, "' must be a scalar")).expected("shape ()", shape_str(t.shape)));
}

Type one_hot_relation(const std::vector<Type>& args, const OneHotAttrs& attrs) {
  const TensorTypeNode& indices = arg_tensor(args, 0, "indices");
  require_scalar("on_value", arg_tensor(args, 1, "on_value"));
  require_scalar("off_value", arg_tensor(args, 2, "off_value"));
  if (!is_int(indices.dtype))
    throw std::move(Error(cat("argument 'indices' with shape ", shape_str(indices.shape), " must hold integers"))
                        .expected("an integer dtype", std::string(dtype_name(indices.dtype))));
  normalize_axis(attrs.axis, indices.ndim() + 1, "one_hot axis");  // its error names the op
  return tensor_type(attrs.result_shape(indices.shape), parse_dtype(attrs.dtype));
}

Type reverse_sequence_relation(const std::vector<Type>& args, const ReverseSequenceAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& lengths = arg_tensor(args, 1, "seq_lengths");
  int64_t seq_axis = normalize_axis(attrs.seq_axis, data.ndim(), "reverse_sequence seq_axis");
  int64_t batch_axis = normalize_axis(attrs.batch_axis, data.ndim(), "reverse_sequence batch_axis");
  check(seq_axis != batch_axis, "attributes 'seq_axis' and 'batch_axis' must differ, both are ", seq_axis);
  int64_t batch = data.shape[batch_axis];
  if (!is_int(lengths.dtype) || lengths.ndim() != 1 ||
      (lengths.shape[0] != batch && lengths.shape[0] != kAnyDim && batch != kAnyDim))
    throw std::move(Error(cat("argument 'seq_lengths' must hold one integer per batch entry of argument 'data' ",
                              shape_str(data.shape)))
                        .expected(cat("integers of shape (", batch, ")"),
                                  cat(dtype_name(lengths.dtype), " ", shape_str(lengths.shape))));
  return args[0];
}

}  // namespace

void register_transform_one_hot_ops(OpRegistry& registry) {
  registry.add("one_hot")
      .describe(
          "out has the shape of 'indices' with 'depth' inserted at 'axis'; the entry is on_value where its "
          "position along 'axis' equals the index, else off_value (indices outside [0, depth) give all "
          "off_value, as in Relay). Result dtype: attribute 'dtype'.")
      .arg("indices")
      .arg("on_value")
      .arg("off_value")
      .attrs<OneHotAttrs>()
      .set_relation<OneHotAttrs>(one_hot_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);

  registry.add("reverse_sequence")
      .describe(
          "For each batch entry b (along 'batch_axis'), reverses the first seq_lengths[b] entries along "
          "'seq_axis' and keeps the rest (lengths beyond the extent are clamped).")
      .arg("data")
      .arg("seq_lengths")
      .attrs<ReverseSequenceAttrs>()
      .set_relation<ReverseSequenceAttrs>(reverse_sequence_relation)
      .set_pattern(OpPattern::kInjective);
}

}  // namespace kiln
