// Attribute declarations of the elementwise activations added with ONNX opsets 18-20 (nn.gelu;
// nn.mish has none); see kiln/attrs/reflect.h for the mechanism. src/op/nn/mish_gelu.cc
// derives the schema from it, the reference kernel (src/runtime/kernels/nn/mish_gelu.cc) and
// the ONNX Gelu converter build and read the same struct.
#pragma once

#include <string>

#include "kiln/attrs/reflect.h"

namespace kiln {

struct GeluAttrs {
  std::string approximate = "none";

  template <class V>
  void visit(V& v) {
    v("approximate", approximate,
      "\"none\": 0.5 x (1 + erf(x / sqrt(2))); \"tanh\": 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).");
  }
  void validate() const;
  bool tanh() const { return approximate == "tanh"; }
};

}  // namespace kiln
