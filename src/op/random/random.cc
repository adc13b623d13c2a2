// Ops: random.uniform, random.normal (tensors of attribute shape), random.bernoulli (0/1
// draws with the probabilities of its argument) and random.multinomial (class indices drawn
// from unnormalised log-probabilities). Relay threads an explicit key through its random
// ops; kiln's take a 'seed' attribute instead, as ONNX does: equal seeds give equal
// samples, and no seed draws a fresh one on every run.
#include "kiln/attrs/random.h"

#include "kiln/attrs/dtype_attr.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {

namespace {

// random.uniform and random.normal; the shape is checked by the declarations' validate().
template <class A>
Type sample_relation(const std::vector<Type>&, const A& attrs) {
  DType t = dtype_attr_or("dtype", attrs.dtype, DType::kFloat32);
  require_dtype("dtype", t, DTypeClass::kFloat);
  return tensor_type(attrs.shape, t);
}

Type bernoulli_relation(const std::vector<Type>& args, const BernoulliAttrs& attrs) {
  const TensorTypeNode& probs = arg_tensor(args, 0, "probs");
  require_dtype("probs", probs.dtype, DTypeClass::kFloat);
  return tensor_type(probs.shape, dtype_attr_or("dtype", attrs.dtype, probs.dtype));
}

// sample_size and dtype are checked by MultinomialAttrs::validate.
Type multinomial_relation(const std::vector<Type>& args, const MultinomialAttrs& attrs) {
  const TensorTypeNode& logits = arg_tensor(args, 0, "logits");
  require_dtype("logits", logits.dtype, DTypeClass::kFloat);
  if (logits.ndim() != 2)
    throw std::move(Error("argument 'logits' must be a matrix").expected("(batch, classes)", shape_str(logits.shape)));
  return tensor_type({logits.shape[0], attrs.sample_size}, dtype_attr_or("dtype", attrs.dtype, DType::kInt32));
}

}  // namespace

void register_random_ops(OpRegistry& registry) {
  registry.add("random.uniform")
      .describe("Samples of the uniform distribution on [low, high), of attribute shape and float dtype.")
      .attrs<RandomUniformAttrs>()
      .set_relation<RandomUniformAttrs>(sample_relation<RandomUniformAttrs>)
      .set_pattern(OpPattern::kOpaque)
      .set_nondeterministic();

  registry.add("random.normal")
      .describe("Samples of the normal distribution N(mean, scale^2), of attribute shape and float dtype.")
      .attrs<RandomNormalAttrs>()
      .set_relation<RandomNormalAttrs>(sample_relation<RandomNormalAttrs>)
      .set_pattern(OpPattern::kOpaque)
      .set_nondeterministic();

  registry.add("random.bernoulli")
      .describe("1 with probability probs[i], else 0, in dtype (\"\": the dtype of probs).")
      .arg("probs")
      .attrs<BernoulliAttrs>()
      .set_relation<BernoulliAttrs>(bernoulli_relation)
      .set_pattern(OpPattern::kOpaque)
      .set_nondeterministic();

  registry.add("random.multinomial")
      .describe(
          "sample_size class indices per row of logits (batch, classes), drawn with probabilities "
          "softmax(logits); result (batch, sample_size) of dtype int32 or int64.")
      .arg("logits")
      .attrs<MultinomialAttrs>()
      .set_relation<MultinomialAttrs>(multinomial_relation)
      .set_pattern(OpPattern::kOpaque)
      .set_nondeterministic();
}

}  // namespace kiln
