#include "kiln/attrs/signal.h"

#include "kiln/attrs/dtype_attr.h"
#include "kiln/attrs/window.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

namespace {

void check_positive(const std::string& name, int64_t v) {
  if (v < 1) throw std::move(Error(cat("attribute '", name, "' must be positive")).expected(">= 1", cat(v)));
}

void check_numeric_dtype(const std::string& name, const std::string& value) {
  DType t;
  if (!try_parse_dtype(value, &t) || t == DType::kBool)
    throw std::move(Error(cat("attribute '", name, "' must be a numeric dtype"))
                        .expected("e.g. \"float32\"", cat('"', value, '"')));
}

}  // namespace

void DftAttrs::validate() const {
  if (dft_length) check_positive("dft_length", *dft_length);
}

void StftAttrs::validate() const {
  check_positive("frame_step", frame_step);
  if (frame_length) check_positive("frame_length", *frame_length);
}

void CosineWindowAttrs::validate() const {
  check_at_least("window_length", window_length, 0);
  check_numeric_dtype("dtype", dtype);
}

void MelWeightMatrixAttrs::validate() const {
  check_at_least("num_mel_bins", num_mel_bins, 1);
  check_at_least("dft_length", dft_length, 1);
  check_at_least("sample_rate", sample_rate, 1);
  if (!(lower_edge_hertz >= 0 && lower_edge_hertz < upper_edge_hertz))
    throw std::move(
        Error("the mel filter bank's edges 'lower_edge_hertz' and 'upper_edge_hertz' must satisfy 0 <= lower < upper")
            .expected("0 <= lower < upper", cat(lower_edge_hertz, " and ", upper_edge_hertz)));
  check_numeric_dtype("dtype", dtype);
}

}  // namespace kiln
