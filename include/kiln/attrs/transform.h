// Attribute declarations of the data-movement ops (reshape, transpose, concatenate, stack, one_hot,
// unique, tfidf_vectorizer, ...); see kiln/attrs/reflect.h for the mechanism. The op files
// (src/op/transform) derive their schemas from these, the reference kernels
// (src/runtime/kernels/transform) and the ONNX converters build and read the same structs.
// Fields without a default are still written `{}`: GCC warns (-Wmissing-field-initializers)
// when a designated initializer, as the converters write them, leaves out a field without one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/attrs/reflect.h"

namespace kiln {

struct ReshapeAttrs {
  std::vector<int64_t> newshape{};
  int64_t allowzero = 0;

  template <class V>
  void visit(V& v) {
    v("newshape", newshape,
      "The new shape: an extent, or 0 (copy the input dim; a real 0 with allowzero=1), -1 (inferred), -2 (copy "
      "the remaining input dims), -3 (merge two input dims), -4 a b (split one input dim into (a, b)).",
      kRequired);
    v("allowzero", allowzero, "1: a 0 in newshape is a zero extent, not a copy of the input dim (0 or 1).");
  }
  void validate() const;
};

struct SqueezeAttrs {
  std::optional<std::vector<int64_t>> axis{};

  template <class V>
  void visit(V& v) {
    v("axis", axis, "The unit dims to remove (negative counts from the end); None removes every unit dim.");
  }
  // The result's shape for data of shape `data`; unknown dims (-1) are removed only when named.
  std::vector<int64_t> result_shape(const std::vector<int64_t>& data) const;
};

struct ExpandDimsAttrs {
  int64_t axis = 0;
  int64_t num_newaxis = 1;

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Input dim the new axes go before; negative counts from the end (-1 appends).", kRequired);
    v("num_newaxis", num_newaxis, "Number of unit dims to insert (>= 0).");
  }
  void validate() const;
};

struct TransposeAttrs {
  std::optional<std::vector<int64_t>> axes{};

  template <class V>
  void visit(V& v) {
    v("axes", axes, "Output dim i is input dim axes[i] (negative counts from the end); None reverses the dims.");
  }
  // The permutation axes describes for data of shape `data` (None reverses the dims).
  std::vector<int64_t> permutation(const std::vector<int64_t>& data) const;
};

struct LayoutTransformAttrs {
  std::string src_layout{};
  std::string dst_layout{};

  template <class V>
  void visit(V& v) {
    v("src_layout", src_layout, "Layout of the data (kiln/attrs/layout.h): NCHW, NCHW8c, OIHW8i8o, ...", kRequired);
    v("dst_layout", dst_layout, "Layout of the result: the same primal axes, blocked as wanted.", kRequired);
  }
  void validate() const;
};

struct ConcatenateAttrs {
  int64_t axis = 0;

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Axis the tensors are joined along; negative counts from the end.");
  }
};

// stack: Relay's stack(data, axis).
struct StackAttrs {
  int64_t axis = 0;

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Position of the new axis in the result; negative counts from the end (-1 appends).");
  }
};

struct SplitAttrs {
  AttrValue indices_or_sections{};
  int64_t axis = 0;

  template <class V>
  void visit(V& v) {
    v("indices_or_sections", indices_or_sections,
      "A number of equal sections (> 0), or a list of ascending split indices.", kRequired);
    v("axis", axis, "Axis the data is cut along; negative counts from the end.");
  }
  void validate() const;
  bool is_sections() const { return indices_or_sections.is_int(); }
  int64_t sections() const { return indices_or_sections.as_int(); }
  std::vector<int64_t> indices() const { return indices_or_sections.as_ints(); }
};

// one_hot's attributes but the depth (dyn.one_hot takes it at run time).
struct OneHotAxisAttrs {
  int64_t axis = -1;
  std::string dtype = "float32";

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Position of the new axis in the result; negative counts from the end (-1 appends).");
    v("dtype", dtype, "Dtype of the result.");
  }
  void validate() const;
};

struct OneHotAttrs : OneHotAxisAttrs {
  int64_t depth = 0;

  template <class V>
  void visit(V& v) {
    v("depth", depth, "Extent of the new axis (>= 0); indices outside [0, depth) give all off_value.", kRequired);
    OneHotAxisAttrs::visit(v);
  }
  void validate() const;
  // The result's shape for indices of shape `indices` (depth may be '?').
  std::vector<int64_t> result_shape(const std::vector<int64_t>& indices) const;
};

struct ReverseSequenceAttrs {
  int64_t seq_axis = 1;
  int64_t batch_axis = 0;

  template <class V>
  void visit(V& v) {
    v("seq_axis", seq_axis, "Axis reversed within each sequence; negative counts from the end.");
    v("batch_axis", batch_axis, "Axis of the batch entries, one sequence length each; must differ from seq_axis.");
  }
};

struct UniqueAttrs {
  bool sorted = true;
  std::optional<int64_t> axis{};

  template <class V>
  void visit(V& v) {
    v("sorted", sorted, "Ascending distinct values (lexicographic for slices); else in order of first occurrence.");
    v("axis", axis, "Deduplicate the slices along this axis; None deduplicates the elements of the flattened data.");
  }
};

// ONNX TfIdfVectorizer over integer tokens.
struct TfIdfVectorizerAttrs {
  std::string mode{};
  int64_t min_gram_length = 1;
  int64_t max_gram_length = 1;
  int64_t max_skip_count = 0;
  std::vector<int64_t> ngram_counts{};
  std::vector<int64_t> ngram_indexes{};
  std::vector<int64_t> pool_int64s{};
  std::optional<std::vector<double>> weights{};

  template <class V>
  void visit(V& v) {
    v("mode", mode, "TF (counts), IDF (the weight of each present n-gram) or TFIDF (count * weight).", kRequired);
    v("min_gram_length", min_gram_length, "Shortest n-gram counted (>= 1).", kRequired);
    v("max_gram_length", max_gram_length, "Longest n-gram counted (>= min_gram_length).", kRequired);
    v("max_skip_count", max_skip_count, "Most tokens skipped between the tokens of an n-gram (>= 0).", kRequired);
    v("ngram_counts", ngram_counts, "Offset in pool_int64s where the n-grams of each length n = 1, 2, ... start.",
      kRequired);
    v("ngram_indexes", ngram_indexes, "Output slot of each n-gram of the pool, in pool order.", kRequired);
    v("pool_int64s", pool_int64s, "The n-grams counted, grouped by length, tokens concatenated.", kRequired);
    v("weights", weights, "IDF weight of each n-gram of the pool; None weighs each 1.");
  }
  void validate() const;
};

}  // namespace kiln
