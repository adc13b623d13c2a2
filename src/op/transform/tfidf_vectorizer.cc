// Op: tfidf_vectorizer (ONNX TfIdfVectorizer over integer tokens).
#include <algorithm>

#include "op/op_util.h"
#include "op/transform/transform_util.h"

namespace kiln {

namespace {

Type tfidf_vectorizer_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  if (!is_int(data.dtype) || (data.ndim() != 1 && data.ndim() != 2))
    throw std::move(Error("argument 'data' must be a 1-D or 2-D integer tensor of tokens")
                        .expected("(C) or (N, C) integers", cat(dtype_name(data.dtype), " ", shape_str(data.shape))));
  const std::string& mode = attrs.get_string("mode");
  check(mode == "TF" || mode == "IDF" || mode == "TFIDF", "attribute 'mode' must be TF, IDF or TFIDF, found ", mode);
  int64_t min_gram = attrs.get_int("min_gram_length"), max_gram = attrs.get_int("max_gram_length");
  check(min_gram >= 1 && min_gram <= max_gram, "attributes min_gram_length ", min_gram, " and max_gram_length ",
        max_gram, " must satisfy 1 <= min <= max");
  check(attrs.get_int("max_skip_count") >= 0, "attribute 'max_skip_count' must not be negative");
  std::vector<int64_t> indexes = attrs.get_ints("ngram_indexes");
  std::vector<int64_t> counts = attrs.get_ints("ngram_counts");
  std::vector<int64_t> pool = attrs.get_ints("pool_int64s");
  check(!indexes.empty(), "attribute 'ngram_indexes' must not be empty");
  for (int64_t slot : indexes)
    check(slot >= 0, "attribute 'ngram_indexes' ", ints_str(indexes), " must hold output slots >= 0");
  for (size_t i = 0; i < counts.size(); ++i)
    check(counts[i] >= 0 && counts[i] <= static_cast<int64_t>(pool.size()) && (i == 0 || counts[i] >= counts[i - 1]),
          "attribute 'ngram_counts' ", ints_str(counts), " must be ascending offsets into a pool of ", pool.size());
  if (!attrs.is_none("weights"))
    check(attrs.get_doubles("weights").size() == indexes.size(), "attribute 'weights' needs one weight per n-gram (",
          indexes.size(), ")");
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
      .required_attr("mode", AttrKind::kString)
      .required_attr("min_gram_length", AttrKind::kInt)
      .required_attr("max_gram_length", AttrKind::kInt)
      .required_attr("max_skip_count", AttrKind::kInt)
      .required_attr("ngram_counts", AttrKind::kInts)
      .required_attr("ngram_indexes", AttrKind::kInts)
      .required_attr("pool_int64s", AttrKind::kInts)
      .attr("weights", AttrKind::kFloats, AttrValue())
      .set_relation(relation_of("tfidf_vectorizer", tfidf_vectorizer_relation))
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
