// Attribute declarations of the random ops; see kiln/attrs/reflect.h for the mechanism. Equal
// seeds give equal samples; no seed draws a fresh one on every run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/attrs/reflect.h"

namespace kiln {

// random.uniform.
struct RandomUniformAttrs {
  std::vector<int64_t> shape;
  double low = 0.0;
  double high = 1.0;
  std::string dtype = "float32";
  std::optional<int64_t> seed;

  template <class V>
  void visit(V& v) {
    v("shape", shape, "Shape of the result.", kRequired);
    v("low", low, "Lower bound (included).");
    v("high", high, "Upper bound (excluded).");
    v("dtype", dtype, "Float dtype of the result; \"\" for float32.");
    v("seed", seed, "Seed of the generator; None: a fresh one per run.");
  }
  void validate() const;
};

// random.normal.
struct RandomNormalAttrs {
  std::vector<int64_t> shape;
  double mean = 0.0;
  double scale = 1.0;
  std::string dtype = "float32";
  std::optional<int64_t> seed;

  template <class V>
  void visit(V& v) {
    v("shape", shape, "Shape of the result.", kRequired);
    v("mean", mean, "Mean of the distribution.");
    v("scale", scale, "Standard deviation of the distribution.");
    v("dtype", dtype, "Float dtype of the result; \"\" for float32.");
    v("seed", seed, "Seed of the generator; None: a fresh one per run.");
  }
  void validate() const;
};

// random.bernoulli.
struct BernoulliAttrs {
  std::string dtype;
  std::optional<int64_t> seed;

  template <class V>
  void visit(V& v) {
    v("dtype", dtype, "Dtype of the result; \"\" for the dtype of probs.");
    v("seed", seed, "Seed of the generator; None: a fresh one per run.");
  }
  void validate() const;
};

// random.multinomial.
struct MultinomialAttrs {
  int64_t sample_size = 1;
  std::string dtype = "int32";
  std::optional<int64_t> seed;

  template <class V>
  void visit(V& v) {
    v("sample_size", sample_size, "Class indices drawn per row.");
    v("dtype", dtype, "Index dtype of the result: int32 or int64 (\"\" for int32).");
    v("seed", seed, "Seed of the generator; None: a fresh one per run.");
  }
  void validate() const;
};

}  // namespace kiln
