// Attribute declarations of the qnn ops (quantize, dequantize, requantize, matmul); see
// kiln/attrs/reflect.h for the mechanism. qnn.conv2d shares nn.conv2d's (kiln/attrs/nn.h).
#pragma once

#include <cstdint>
#include <string>

namespace kiln {

// qnn.quantize.
struct QuantizeAttrs {
  int64_t axis = -1;
  std::string out_dtype = "int8";

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Channel axis of per-channel scales and zero points; negative counts from the end.");
    v("out_dtype", out_dtype, "Quantized dtype of the output: int8, uint8, int16, uint16 or int32.");
  }
  void validate() const;
};

// qnn.dequantize.
struct DequantizeAttrs {
  int64_t axis = -1;
  std::string out_dtype = "float32";

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Channel axis of per-channel scales and zero points; negative counts from the end.");
    v("out_dtype", out_dtype, "Float dtype of the output.");
  }
  void validate() const;
};

// qnn.requantize.
struct RequantizeAttrs {
  int64_t axis = -1;
  std::string rounding = "UPWARD";
  std::string out_dtype = "int8";

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Channel axis of per-channel scales and zero points; negative counts from the end.");
    v("rounding", rounding,
      "UPWARD (ties toward +inf, Relay's default), TONEAREST (ties away from zero) or HALF_TO_EVEN (ONNX).");
    v("out_dtype", out_dtype, "Quantized dtype of the output: int8, uint8, int16, uint16 or int32.");
  }
  void validate() const;
};

// qnn.matmul.
struct QnnMatmulAttrs {
  std::string out_dtype = "int32";

  template <class V>
  void visit(V& v) {
    v("out_dtype", out_dtype, "Dtype of the accumulator: int8, uint8, int16, uint16 or int32.");
  }
  void validate() const;
};

}  // namespace kiln
