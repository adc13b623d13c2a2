// Attribute declarations of the signal ops (dft, stft, the cosine windows, the mel filter
// bank); see kiln/attrs/reflect.h for the mechanism.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kiln/attrs/reflect.h"

namespace kiln {

// signal.dft.
struct DftAttrs {
  int64_t axis = 1;
  bool inverse = false;
  bool onesided = false;
  std::optional<int64_t> dft_length;

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Signal axis transformed (the last, complex axis excluded); negative counts from the end.");
    v("inverse", inverse, "Inverse transform (divided by n).");
    v("onesided", onesided, "Keep the n/2+1 non-redundant bins of a real signal.");
    v("dft_length", dft_length, "Transform length, zero-padding or truncating the axis; None: its extent.");
  }
  void validate() const;
};

// signal.stft.
struct StftAttrs {
  int64_t frame_step = 1;
  std::optional<int64_t> frame_length;
  bool onesided = true;

  template <class V>
  void visit(V& v) {
    v("frame_step", frame_step, "Samples between the starts of consecutive frames.", kRequired);
    v("frame_length", frame_length, "Samples per frame; None: the window's length.");
    v("onesided", onesided, "Keep the n/2+1 non-redundant bins of a real signal.");
  }
  void validate() const;
};

// signal.hann_window, signal.hamming_window, signal.blackman_window.
struct CosineWindowAttrs {
  int64_t window_length = 0;
  bool periodic = true;
  std::string dtype = "float32";

  template <class V>
  void visit(V& v) {
    v("window_length", window_length, "Samples in the window.", kRequired);
    v("periodic", periodic, "N = window_length (periodic) rather than window_length - 1 (symmetric).");
    v("dtype", dtype, "Numeric dtype of the window.");
  }
  void validate() const;
};

// signal.mel_weight_matrix, as ONNX's MelWeightMatrix.
struct MelWeightMatrixAttrs {
  int64_t num_mel_bins = 1;
  int64_t dft_length = 1;
  int64_t sample_rate = 1;
  double lower_edge_hertz = 0;
  double upper_edge_hertz = 1;
  std::string dtype = "float32";

  template <class V>
  void visit(V& v) {
    v("num_mel_bins", num_mel_bins, "Mel bins (columns of the matrix).", kRequired);
    v("dft_length", dft_length, "Length of the DFT whose onesided spectrum (dft_length / 2 + 1 rows) is mapped.",
      kRequired);
    v("sample_rate", sample_rate, "Samples per second of the signal.", kRequired);
    v("lower_edge_hertz", lower_edge_hertz, "Lowest frequency of the filter bank.", kRequired);
    v("upper_edge_hertz", upper_edge_hertz, "Highest frequency of the filter bank.", kRequired);
    v("dtype", dtype, "Numeric dtype of the matrix.");
  }
  void validate() const;
};

}  // namespace kiln
