#include "kiln/attrs/transform.h"

#include <algorithm>

#include "kiln/attrs/dtype_attr.h"
#include "kiln/attrs/layout.h"
#include "kiln/attrs/window.h"
#include "kiln/runtime/dtype.h"
#include "kiln/support/strings.h"

namespace kiln {

namespace {

std::string shown(const std::vector<int64_t>& values) { return AttrValue(values).to_string(); }

// Offsets into the pool of `pool_size` tokens where the n-grams of each length start.
void check_ngram_counts(const std::vector<int64_t>& counts, size_t pool_size) {
  for (size_t i = 0; i < counts.size(); ++i) {
    const bool ok =
        counts[i] >= 0 && counts[i] <= static_cast<int64_t>(pool_size) && (i == 0 || counts[i] >= counts[i - 1]);
    if (!ok)
      throw std::move(Error(cat("attribute 'ngram_counts' must hold ascending offsets into a pool of ", pool_size))
                          .expected(cat("ascending values in [0, ", pool_size, "]"), shown(counts)));
  }
}

}  // namespace

void ReshapeAttrs::validate() const {
  if (allowzero != 0 && allowzero != 1)
    throw std::move(Error("attribute 'allowzero' must be 0 or 1").expected("0 or 1", cat(allowzero)));
}

void LayoutTransformAttrs::validate() const {
  const Layout src = Layout::parse(src_layout), dst = Layout::parse(dst_layout);
  if (!src.convertible_to(dst))
    throw std::move(Error(cat("attributes 'src_layout' and 'dst_layout' must have the same primal axes"))
                        .expected(src_layout, dst_layout));
}

void ExpandDimsAttrs::validate() const {
  if (num_newaxis < 0)
    throw std::move(Error("attribute 'num_newaxis' must not be negative").expected(">= 0", cat(num_newaxis)));
}

void SplitAttrs::validate() const {
  const AttrValue& spec = indices_or_sections;
  if (spec.is_int()) {
    if (spec.as_int() <= 0)
      throw std::move(Error("attribute 'indices_or_sections' must be a positive number of sections")
                          .expected("> 0", cat(spec.as_int())));
    return;
  }
  bool int_list = spec.is_list();
  for (const auto& item : int_list ? spec.as_list() : AttrValue::List{}) int_list &= item.is_int();
  if (!int_list)
    throw std::move(Error("attribute 'indices_or_sections' must be a number of sections or a list of split indices")
                        .expected("an int or a list of ints", spec.to_string()));
}

namespace {

std::string ints_str(const std::vector<int64_t>& values) { return "[" + join(values) + "]"; }

int64_t axis_of(int64_t axis, int64_t ndim, const std::string& what) {
  int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim)
    throw std::move(Error(cat(what, " out of range")).expected(cat("in [", -ndim, ", ", ndim, ")"), cat(axis)));
  return a;
}

}  // namespace

std::vector<int64_t> SqueezeAttrs::result_shape(const std::vector<int64_t>& data) const {
  const auto ndim = static_cast<int64_t>(data.size());
  std::vector<bool> drop(data.size(), false);
  if (!axis) {
    for (size_t d = 0; d < drop.size(); ++d) drop[d] = data[d] == 1;
  } else {
    for (int64_t a : *axis) {
      auto d = static_cast<size_t>(axis_of(a, ndim, "squeeze axis"));
      if (drop[d])
        throw std::move(Error(cat("axis ", a, " appears twice in 'axis'")).expected("distinct axes", "a repeat"));
      if (data[d] != 1 && data[d] != -1)
        throw std::move(Error(cat("cannot squeeze axis ", a, " of argument 'data' with shape ", shape_str(data)))
                            .expected("extent 1", cat(data[d])));
      drop[d] = true;
    }
  }
  std::vector<int64_t> out;
  for (size_t d = 0; d < drop.size(); ++d)
    if (!drop[d]) out.push_back(data[d]);
  return out;
}

std::vector<int64_t> TransposeAttrs::permutation(const std::vector<int64_t>& data) const {
  const auto ndim = static_cast<int64_t>(data.size());
  std::vector<int64_t> perm;
  if (!axes) {
    for (int64_t d = ndim - 1; d >= 0; --d) perm.push_back(d);
    return perm;
  }
  if (static_cast<int64_t>(axes->size()) != ndim)
    throw std::move(Error(cat("'axes' must list every dim of argument 'data' with shape ", shape_str(data)))
                        .expected(cat(ndim, " axes"), ints_str(*axes)));
  std::vector<bool> seen(axes->size(), false);
  for (int64_t axis : *axes) {
    int64_t a = axis_of(axis, ndim, "transpose axis");
    if (seen[static_cast<size_t>(a)])
      throw std::move(Error(cat("'axes' is not a permutation: dim ", a, " appears twice"))
                          .expected(cat("a permutation of the ", ndim, " dims of ", shape_str(data)), ints_str(*axes)));
    seen[static_cast<size_t>(a)] = true;
    perm.push_back(a);
  }
  return perm;
}

void OneHotAxisAttrs::validate() const { parse_dtype_attr("dtype", dtype); }

void OneHotAttrs::validate() const {
  if (depth < 0) throw std::move(Error("attribute 'depth' must not be negative").expected(">= 0", cat(depth)));
  OneHotAxisAttrs::validate();
}

std::vector<int64_t> OneHotAttrs::result_shape(const std::vector<int64_t>& indices) const {
  const auto rank = static_cast<int64_t>(indices.size()) + 1;
  if (axis < -rank || axis >= rank)
    throw std::move(Error("attribute 'axis' is out of range").expected(cat("[", -rank, ", ", rank, ")"), cat(axis)));
  std::vector<int64_t> out = indices;
  out.insert(out.begin() + (axis < 0 ? axis + rank : axis), depth);
  return out;
}

void TfIdfVectorizerAttrs::validate() const {
  check_choice("mode", mode, {"TF", "IDF", "TFIDF"});
  check_at_least("min_gram_length", min_gram_length, 1);
  if (max_gram_length < min_gram_length)
    throw std::move(Error("attribute 'max_gram_length' must not be below 'min_gram_length'")
                        .expected(cat(">= ", min_gram_length), cat(max_gram_length)));
  check_at_least("max_skip_count", max_skip_count, 0);
  if (ngram_indexes.empty())
    throw std::move(Error("attribute 'ngram_indexes' must not be empty").expected("one slot per n-gram", "[]"));
  if (std::any_of(ngram_indexes.begin(), ngram_indexes.end(), [](int64_t slot) { return slot < 0; }))
    throw std::move(
        Error("attribute 'ngram_indexes' must hold output slots >= 0").expected("slots >= 0", shown(ngram_indexes)));
  check_ngram_counts(ngram_counts, pool_int64s.size());
  if (weights && weights->size() != ngram_indexes.size())
    throw std::move(Error(cat("attribute 'weights' needs one weight per n-gram (", ngram_indexes.size(), ")"))
                        .expected(cat(ngram_indexes.size(), " weights"), cat(weights->size())));
}

}  // namespace kiln
