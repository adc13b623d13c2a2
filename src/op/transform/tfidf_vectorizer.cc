// Op: tfidf_vectorizer (ONNX TfIdfVectorizer over integer tokens).
#include <algorithm>

#include "kiln/attrs/transform.h"
#include "op/op_util.h"

namespace kiln {

namespace {

// TfIdfVectorizerAttrs::validate() has checked the attributes on their own.
Type tfidf_vectorizer_relation(const std::vector<Type>& args, const TfIdfVectorizerAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  if (!is_int(data.dtype) || (data.ndim() != 1 && data.ndim() != 2))
    throw std::move(Error("argument 'data' must be a 1-D or 2-D integer tensor of tokens")
                        .expected("(C) or (N, C) integers", cat(dtype_name(data.dtype), " ", shape_str(data.shape))));
  const std::vector<int64_t>& indexes = attrs.ngram_indexes;
  int64_t width = *std::max_element(indexes.begin(), indexes.end()) + 1;
  Shape out = data.ndim() == 1 ? Shape{width} : Shape{data.shape[0], width};
  return tensor_type(std::move(out), DType::kFloat32);
}

}  // namespace

void register_transform_tfidf_vectorizer_ops(OpRegistry& registry) {
  registry.add("tfidf_vectorizer")
      .describe(
          "Counts the n-grams of 'pool_int64s' (n in [min_gram_length, max_gram_length], tokens up to "
          "max_skip_count apart) in each row of 'data' into slot ngram_indexes[k] of the float32 result; mode TF "
          "gives counts, IDF the weight of each present n-gram, TFIDF count * weight (ONNX TfIdfVectorizer).")
      .arg("data")
      .attrs<TfIdfVectorizerAttrs>()
      .set_relation<TfIdfVectorizerAttrs>(tfidf_vectorizer_relation)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
