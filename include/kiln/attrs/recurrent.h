// Attribute declaration of the sequence ops nn.lstm, nn.gru and nn.rnn (src/op/nn/recurrent.cc,
// reference kernel src/runtime/kernels/nn/recurrent.cc); see kiln/attrs/reflect.h for the mechanism.
#pragma once

#include "kiln/attrs/reflect.h"

namespace kiln {

// One layer and direction of a recurrent network over a whole sequence.
struct RecurrentAttrs {
  bool reverse = false;
  bool linear_before_reset = false;
  bool output_cell = false;

  template <class V>
  void visit(V& v) {
    v("reverse", reverse, "Run from the last step to the first (the reverse direction of ONNX's RNN/GRU/LSTM).");
    v("linear_before_reset", linear_before_reset,
      "nn.gru only: r scales h x Rh^T + Rbh (ONNX linear_before_reset=1) rather than h before the product.");
    v("output_cell", output_cell, "nn.lstm only: the output is the cell state of every step rather than h.");
  }
};

}  // namespace kiln
