#include "kiln/attrs/qnn.h"

#include "kiln/attrs/dtype_attr.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

void QuantizeAttrs::validate() const { parse_quantized_dtype("out_dtype", out_dtype); }

void DequantizeAttrs::validate() const {
  DType out;
  if (!try_parse_dtype(out_dtype, &out) || !is_float(out))
    throw std::move(Error("attribute 'out_dtype' must be a float dtype")
                        .expected("float16, bfloat16, float32 or float64", cat('"', out_dtype, '"')));
}

void RequantizeAttrs::validate() const {
  if (rounding != "UPWARD" && rounding != "TONEAREST" && rounding != "HALF_TO_EVEN")
    throw std::move(Error("attribute 'rounding' has an unknown value")
                        .expected("UPWARD, TONEAREST or HALF_TO_EVEN", cat('"', rounding, '"')));
  parse_quantized_dtype("out_dtype", out_dtype);
}

void QnnMatmulAttrs::validate() const { parse_quantized_dtype("out_dtype", out_dtype); }

}  // namespace kiln
