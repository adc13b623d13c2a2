// Attribute declaration of nn.attention (src/op/nn/attention.cc, reference kernel
// src/runtime/kernels/nn/attention.cc); see kiln/attrs/reflect.h for the mechanism.
#pragma once

#include "kiln/attrs/reflect.h"

namespace kiln {

// nn.attention: softmax(query x key^T * scale + mask, last axis) x value.
struct AttentionAttrs {
  double scale = 1.0;
  bool rows_outer = false;

  template <class V>
  void visit(V& v) {
    v("scale", scale, "Factor of the scores query x key^T before the mask is added (1: no multiply).");
    v("rows_outer", rows_outer,
      "3-D operands only: the output as (Sq, batch * Dv), the heads merged back into the features as torch "
      "lays them out, rather than (batch, Sq, Dv).");
  }
};

}  // namespace kiln
