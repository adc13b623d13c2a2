// Ops: random.uniform, random.normal (tensors of attribute shape), random.bernoulli (0/1
// draws with the probabilities of its argument) and random.multinomial (class indices drawn
// from unnormalised log-probabilities). Relay threads an explicit key through its random
// ops; kiln's take a 'seed' attribute instead, as ONNX does: equal seeds give equal
// samples, and no seed draws a fresh one on every run.
#include "op/tensor/elemwise_checks.h"

namespace kiln {

namespace {

DType dtype_attr(const Attrs& attrs, DType if_empty) {
  const std::string& name = attrs.get_string("dtype");
  if (name.empty()) return if_empty;
  DType t;
  if (!try_parse_dtype(name, &t))
    throw std::move(
        Error("attribute 'dtype' is not a dtype").expected("a dtype such as \"float32\"", cat('"', name, '"')));
  return t;
}

Shape shape_attr(const Attrs& attrs) {
  Shape shape = attrs.get_ints("shape");
  for (int64_t d : shape)
    if (d < 0)
      throw std::move(Error(cat("attribute 'shape' has a negative dimension: ", shape_str(shape)))
                          .expected("dimensions >= 0", cat(d)));
  return shape;
}

Type sample_relation(const std::vector<Type>&, const Attrs& attrs) {
  DType t = dtype_attr(attrs, DType::kFloat32);
  require_dtype("dtype", t, DTypeClass::kFloat);
  return tensor_type(shape_attr(attrs), t);
}

Type bernoulli_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& probs = arg_tensor(args, 0, "probs");
  require_dtype("probs", probs.dtype, DTypeClass::kFloat);
  return tensor_type(probs.shape, dtype_attr(attrs, probs.dtype));
}

Type multinomial_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& logits = arg_tensor(args, 0, "logits");
  require_dtype("logits", logits.dtype, DTypeClass::kFloat);
  if (logits.ndim() != 2)
    throw std::move(Error("argument 'logits' must be a matrix").expected("(batch, classes)", shape_str(logits.shape)));
  int64_t samples = attrs.get_int("sample_size");
  if (samples < 1) throw std::move(Error("attribute 'sample_size' must be positive").expected(">= 1", cat(samples)));
  DType t = dtype_attr(attrs, DType::kInt32);
  if (t != DType::kInt32 && t != DType::kInt64)
    throw std::move(
        Error("attribute 'dtype' must be an index dtype").expected("int32 or int64", std::string(dtype_name(t))));
  return tensor_type({logits.shape[0], samples}, t);
}

}  // namespace

void register_random_ops(OpRegistry& registry) {
  registry.add("random.uniform")
      .describe("Samples of the uniform distribution on [low, high), of attribute shape and float dtype.")
      .required_attr("shape", AttrKind::kInts)
      .attr("low", AttrKind::kFloat, 0.0)
      .attr("high", AttrKind::kFloat, 1.0)
      .attr("dtype", AttrKind::kString, "float32")
      .attr("seed", AttrKind::kInt, AttrValue())
      .set_relation(named_relation("random.uniform", sample_relation))
      .set_pattern(OpPattern::kOpaque)
      .set_nondeterministic();

  registry.add("random.normal")
      .describe("Samples of the normal distribution N(mean, scale^2), of attribute shape and float dtype.")
      .required_attr("shape", AttrKind::kInts)
      .attr("mean", AttrKind::kFloat, 0.0)
      .attr("scale", AttrKind::kFloat, 1.0)
      .attr("dtype", AttrKind::kString, "float32")
      .attr("seed", AttrKind::kInt, AttrValue())
      .set_relation(named_relation("random.normal", sample_relation))
      .set_pattern(OpPattern::kOpaque)
      .set_nondeterministic();

  registry.add("random.bernoulli")
      .describe("1 with probability probs[i], else 0, in dtype (\"\": the dtype of probs).")
      .arg("probs")
      .attr("dtype", AttrKind::kString, "")
      .attr("seed", AttrKind::kInt, AttrValue())
      .set_relation(named_relation("random.bernoulli", bernoulli_relation))
      .set_pattern(OpPattern::kOpaque)
      .set_nondeterministic();

  registry.add("random.multinomial")
      .describe(
          "sample_size class indices per row of logits (batch, classes), drawn with probabilities "
          "softmax(logits); result (batch, sample_size) of dtype int32 or int64.")
      .arg("logits")
      .attr("sample_size", AttrKind::kInt, 1)
      .attr("dtype", AttrKind::kString, "int32")
      .attr("seed", AttrKind::kInt, AttrValue())
      .set_relation(named_relation("random.multinomial", multinomial_relation))
      .set_pattern(OpPattern::kOpaque)
      .set_nondeterministic();
}

}  // namespace kiln
