// Attribute declarations of the elementwise unary ops with attributes (cast, clip); see
// kiln/attrs/reflect.h for the mechanism. src/op/tensor/unary.cc derives the schemas from these,
// the reference kernels (src/runtime/kernels/tensor/unary.cc) and the ONNX converters build and
// read the same structs.
#pragma once

#include <string>

#include "kiln/attrs/reflect.h"
#include "kiln/runtime/dtype.h"

namespace kiln {

struct CastAttrs {
  std::string dtype;

  template <class V>
  void visit(V& v) {
    v("dtype", dtype, "Dtype converted to, e.g. \"int64\".", kRequired);
  }
  void validate() const;
  DType to() const;
};

struct ClipAttrs {
  double a_min = 0;
  double a_max = 0;

  template <class V>
  void visit(V& v) {
    v("a_min", a_min, "Lower bound (rounded up to an integer for integer data).", kRequired);
    v("a_max", a_max, "Upper bound (rounded down for integer data); a_min > a_max gives a_max everywhere.", kRequired);
  }
};

}  // namespace kiln
