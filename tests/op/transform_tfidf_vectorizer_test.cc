// tfidf_vectorizer: relation, errors, and the kernel on hand-counted n-grams.
#include "op/transform_test_util.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

using Ints = std::vector<int64_t>;

// Pool: 1-grams {2, 3}, 2-grams {(2, 3), (4, 2)} in slots 0..3.
Attrs tfidf_attrs(std::string mode, int64_t min_gram, int64_t max_gram, int64_t skip, AttrValue weights = {}) {
  return {{"mode", mode},
          {"min_gram_length", min_gram},
          {"max_gram_length", max_gram},
          {"max_skip_count", skip},
          {"ngram_counts", Ints{0, 2}},
          {"ngram_indexes", Ints{0, 1, 2, 3}},
          {"pool_int64s", Ints{2, 3, 2, 3, 4, 2}},
          {"weights", weights}};
}

TEST(TransformTfIdfVectorizer, TypeRelationAndErrors) {
  Type tokens = tensor_type({2, 6}, DType::kInt32);
  EXPECT_EQ(type_str(infer_op("tfidf_vectorizer", {tokens}, tfidf_attrs("TF", 1, 2, 0))), "Tensor[(2, 4), float32]");
  expect_mentions(infer_op_error("tfidf_vectorizer", {f32({6})}, tfidf_attrs("TF", 1, 2, 0)),
                  {"op 'tfidf_vectorizer'", "'data'", "float32 (6)"});
  expect_mentions(infer_op_error("tfidf_vectorizer", {tokens}, tfidf_attrs("BM25", 1, 2, 0)),
                  {"op 'tfidf_vectorizer'", "'mode'", "BM25"});
  expect_mentions(infer_op_error("tfidf_vectorizer", {tokens}, tfidf_attrs("TF", 1, 2, 0, std::vector<double>{1.0})),
                  {"op 'tfidf_vectorizer'", "'weights'", "(4)"});
}

TEST(TransformTfIdfVectorizer, CountsByHand) {
  // Tokens 2 3 4 2 3 5: unigrams 2 (x2), 3 (x2); bigrams adjacent (2,3) x2, (4,2) x1.
  NDArray tokens = tensor({6}, {2, 3, 4, 2, 3, 5}, DType::kInt64);
  expect_close(run_op("tfidf_vectorizer", {tokens}, tfidf_attrs("TF", 1, 2, 0))[0], {2, 2, 2, 1});
  // Only bigrams; skip up to 1 adds (2, 4)? not in pool; (3, 2) no; (4, 3) no; (2, 5)... none: the same.
  expect_close(run_op("tfidf_vectorizer", {tokens}, tfidf_attrs("TF", 2, 2, 1))[0], {0, 0, 2, 1});
  // Skip up to 2: pairs 3 apart add (2, 2)? no; (3, 3)? no; (4, 5)? no. Skip 3 (distance 4) adds (2, 3) at 0-4.
  expect_close(run_op("tfidf_vectorizer", {tokens}, tfidf_attrs("TF", 2, 2, 3))[0], {0, 0, 3, 1});
  // Unigrams count once however large the skip.
  expect_close(run_op("tfidf_vectorizer", {tokens}, tfidf_attrs("TF", 1, 1, 3))[0], {2, 2, 0, 0});
  std::vector<double> w{0.5, 2, 3, 4};
  expect_close(run_op("tfidf_vectorizer", {tokens}, tfidf_attrs("IDF", 1, 2, 0, w))[0], {0.5, 2, 3, 4});
  expect_close(run_op("tfidf_vectorizer", {tokens}, tfidf_attrs("TFIDF", 1, 2, 0, w))[0], {1, 4, 6, 4});
  NDArray batch = tensor({2, 3}, {2, 3, 9, 4, 2, 2}, DType::kInt32);
  expect_close(run_op("tfidf_vectorizer", {batch}, tfidf_attrs("TF", 1, 2, 0))[0], {1, 1, 1, 0, 2, 0, 0, 1});
}

}  // namespace
}  // namespace kiln::testing
