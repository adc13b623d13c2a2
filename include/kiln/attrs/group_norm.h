// Attribute declaration of nn.group_norm; see kiln/attrs/reflect.h for the mechanism.
// src/op/nn/group_norm.cc derives the schema from it, the reference kernel
// (src/runtime/kernels/nn/group_norm.cc) and the ONNX GroupNormalization converter build and
// read the same struct.
#pragma once

#include <cstdint>

#include "kiln/attrs/reflect.h"

namespace kiln {

struct GroupNormAttrs {
  int64_t num_groups = 1;
  double epsilon = 1e-5;

  template <class V>
  void visit(V& v) {
    v("num_groups", num_groups, "Number of groups the channels (axis 1) are split into; it divides the channels.",
      kRequired);
    v("epsilon", epsilon, "Added to the variance before the square root.");
  }
  void validate() const;
};

}  // namespace kiln
