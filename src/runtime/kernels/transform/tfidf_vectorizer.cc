// Reference kernel: tfidf_vectorizer.
#include <algorithm>
#include <map>

#include "kiln/attrs/transform.h"
#include "kiln/support/strings.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/transform/copy_util.h"

namespace kiln {

namespace {

// Each n-gram of the pool with the index of its output slot and weight.
struct NgramTable {
  std::map<std::vector<int64_t>, int64_t> slot_of;  // n-gram -> k (its position among all n-grams)
  std::vector<int64_t> slots;
  std::vector<double> weights;
};

NgramTable ngram_table(const TfIdfVectorizerAttrs& attrs) {
  const std::vector<int64_t>& counts = attrs.ngram_counts;
  const std::vector<int64_t>& pool = attrs.pool_int64s;
  NgramTable table;
  table.slots = attrs.ngram_indexes;
  table.weights = attrs.weights.value_or(std::vector<double>(table.slots.size(), 1.0));
  int64_t k = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    // Entries [counts[i], counts[i+1]) of the pool are the (i+1)-grams.
    auto n = static_cast<int64_t>(i) + 1;
    int64_t end = i + 1 < counts.size() ? counts[i + 1] : static_cast<int64_t>(pool.size());
    for (int64_t at = counts[i]; at + n <= end; at += n, ++k) {
      check(k < static_cast<int64_t>(table.slots.size()), "tfidf_vectorizer: the pool holds more n-grams than the ",
            table.slots.size(), " of 'ngram_indexes'");
      table.slot_of.emplace(std::vector<int64_t>(pool.begin() + at, pool.begin() + at + n), k);
    }
  }
  return table;
}

void tfidf_vectorizer_kernel(const TfIdfVectorizerAttrs& attrs, std::span<const NDArray> inputs,
                             std::span<NDArray> outputs) {
  expect_arity("tfidf_vectorizer", inputs, 1, outputs, 1);
  const NDArray& data = inputs[0];
  NgramTable table = ngram_table(attrs);
  const int64_t min_gram = attrs.min_gram_length, max_gram = attrs.max_gram_length;
  const int64_t max_skip = attrs.max_skip_count;
  const std::string& mode = attrs.mode;
  int64_t width = *std::max_element(table.slots.begin(), table.slots.end()) + 1;
  int64_t rows = data.ndim() == 2 ? data.shape()[0] : 1;
  int64_t length = data.ndim() == 2 ? data.shape()[1] : data.numel();
  NDArray& out = outputs[0];
  expect_output("tfidf_vectorizer", out, data.ndim() == 2 ? Shape{rows, width} : Shape{width}, DType::kFloat32);
  for (int64_t row = 0; row < rows; ++row) {
    std::vector<int64_t> tokens(static_cast<size_t>(length));
    for (int64_t t = 0; t < length; ++t) tokens[t] = data.int_at(row * length + t);
    std::vector<int64_t> hits(table.slots.size(), 0);
    // Tokens `skip` apart form an n-gram; a 1-gram is the same for every skip, so count it once.
    for (int64_t skip = 0; skip <= max_skip; ++skip) {
      int64_t step = skip + 1;
      for (int64_t start = 0; start < length; ++start) {
        std::vector<int64_t> gram;
        for (int64_t n = 1; n <= max_gram && start + (n - 1) * step < length; ++n) {
          gram.push_back(tokens[start + (n - 1) * step]);
          if (n < min_gram || (n == 1 && skip > 0)) continue;
          auto it = table.slot_of.find(gram);
          if (it != table.slot_of.end()) ++hits[it->second];
        }
      }
    }
    std::vector<double> values(static_cast<size_t>(width), 0.0);
    for (size_t k = 0; k < hits.size(); ++k) {
      double v = mode == "TF"    ? static_cast<double>(hits[k])
                 : mode == "IDF" ? (hits[k] > 0 ? table.weights[k] : 0.0)
                                 : static_cast<double>(hits[k]) * table.weights[k];
      values[table.slots[k]] += v;
    }
    for (int64_t j = 0; j < width; ++j) out.set(row * width + j, values[j]);
  }
}

}  // namespace

void register_transform_tfidf_vectorizer_kernels(KernelRegistry& registry) {
  registry.add<TfIdfVectorizerAttrs>("tfidf_vectorizer", tfidf_vectorizer_kernel);
}

}  // namespace kiln
