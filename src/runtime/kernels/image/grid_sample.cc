// Reference kernel: image.grid_sample. Computes in double. Padding is applied per pixel
// read (zeros outside, clamped index for border, reflected index for reflection); for the
// nearest and bilinear methods a sampling point outside the image is first moved onto it
// (clamped or reflected), as ONNX Runtime and PyTorch do.
#include <cmath>

#include "kiln/attrs/image.h"
#include "runtime/kernels/nn/compute_view.h"

namespace kiln {

namespace {

enum class Padding { kZeros, kBorder, kReflection };

struct Sampler {
  const double* plane;
  int64_t height, width;
  Padding padding;
  bool align_corners;

  // Valid coordinates: pixel centres [0, n-1] with align_corners, else the edges [-0.5, n-0.5].
  double low(int64_t) const { return align_corners ? 0.0 : -0.5; }
  double high(int64_t n) const { return align_corners ? double(n - 1) : double(n) - 0.5; }

  // Reflects x at the nearer border until it lies within [lo, hi].
  static double reflect(double x, double lo, double hi) {
    double range = hi - lo;
    if (range <= 0) return lo;
    if (x < lo || x > hi) {
      double dx = x < lo ? lo - x : x - hi;
      double n = std::floor(dx / range);
      double r = dx - n * range;
      bool even = std::fmod(n, 2.0) == 0.0;
      if (x < lo) return even ? lo + r : hi - r;
      return even ? hi - r : lo + r;
    }
    return x;
  }

  double pixel(int64_t row, int64_t col) const {
    switch (padding) {
      case Padding::kZeros:
        if (row < 0 || row >= height || col < 0 || col >= width) return 0.0;
        break;
      case Padding::kBorder:
        row = std::clamp<int64_t>(row, 0, height - 1);
        col = std::clamp<int64_t>(col, 0, width - 1);
        break;
      case Padding::kReflection:
        row = static_cast<int64_t>(reflect(double(row), low(height), high(height)));
        col = static_cast<int64_t>(reflect(double(col), low(width), high(width)));
        row = std::clamp<int64_t>(row, 0, height - 1);
        col = std::clamp<int64_t>(col, 0, width - 1);
        break;
    }
    return plane[row * width + col];
  }

  // A point outside the valid range moved onto it (border and reflection padding).
  double inside(double v, int64_t n) const {
    if (v >= low(n) && v <= high(n)) return v;
    if (padding == Padding::kBorder) return std::clamp(v, 0.0, double(n - 1));
    if (padding == Padding::kReflection) return reflect(v, low(n), high(n));
    return v;
  }

  double nearest(double x, double y) const {
    x = inside(std::nearbyint(x), width);
    y = inside(std::nearbyint(y), height);
    return pixel(static_cast<int64_t>(y), static_cast<int64_t>(x));
  }

  double bilinear(double x, double y) const {
    x = inside(x, width);
    y = inside(y, height);
    const double x0 = std::floor(x), y0 = std::floor(y);
    const double dx = x - x0, dy = y - y0;
    const auto c = static_cast<int64_t>(x0), r = static_cast<int64_t>(y0);
    return (1 - dy) * ((1 - dx) * pixel(r, c) + dx * pixel(r, c + 1)) +
           dy * ((1 - dx) * pixel(r + 1, c) + dx * pixel(r + 1, c + 1));
  }

  // Keys' cubic convolution weights for the 4 taps around a point at fraction t.
  static void cubic_weights(double t, double w[4]) {
    constexpr double A = -0.75;
    auto near = [](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
    auto far = [](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };
    w[0] = far(t + 1);
    w[1] = near(t);
    w[2] = near(1 - t);
    w[3] = far(2 - t);
  }

  double bicubic(double x, double y) const {
    const double x0 = std::floor(x), y0 = std::floor(y);
    double wx[4], wy[4];
    cubic_weights(x - x0, wx);
    cubic_weights(y - y0, wy);
    const auto c = static_cast<int64_t>(x0) - 1, r = static_cast<int64_t>(y0) - 1;
    double sum = 0;
    for (int i = 0; i < 4; ++i) {
      double row = 0;
      for (int j = 0; j < 4; ++j) row += wx[j] * pixel(r + i, c + j);
      sum += wy[i] * row;
    }
    return sum;
  }
};

// Normalised [-1, 1] to pixel coordinates.
double denormalize(double v, int64_t n, bool align_corners) {
  return align_corners ? (v + 1) / 2 * double(n - 1) : ((v + 1) * double(n) - 1) / 2;
}

void grid_sample_kernel(const GridSampleAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray& data = inputs[0];
  const NDArray& grid = inputs[1];
  const Shape& s = data.shape();
  const int64_t batch = s[0], channels = s[1], height = s[2], width = s[3];
  const int64_t out_h = grid.shape()[2], out_w = grid.shape()[3], out_plane = out_h * out_w;
  const std::string& method = attrs.method;
  const std::string& padding_name = attrs.padding_mode;
  const Padding padding = padding_name == "border"       ? Padding::kBorder
                          : padding_name == "reflection" ? Padding::kReflection
                                                         : Padding::kZeros;
  const bool align_corners = attrs.align_corners;
  ConstView<double> x(data), g(grid);
  OutView<double> y(outputs[0]);
  for (int64_t n = 0; n < batch; ++n) {
    const double* gx = g.data() + n * 2 * out_plane;
    const double* gy = gx + out_plane;
    for (int64_t c = 0; c < channels; ++c) {
      Sampler sampler{x.data() + (n * channels + c) * height * width, height, width, padding, align_corners};
      double* out = y.data() + (n * channels + c) * out_plane;
      for (int64_t p = 0; p < out_plane; ++p) {
        const double px = denormalize(gx[p], width, align_corners), py = denormalize(gy[p], height, align_corners);
        out[p] = method == "nearest"   ? sampler.nearest(px, py)
                 : method == "bicubic" ? sampler.bicubic(px, py)
                                       : sampler.bilinear(px, py);
      }
    }
  }
  y.commit();
}

}  // namespace

void register_image_grid_sample_kernels(KernelRegistry& registry) {
  registry.add<GridSampleAttrs>("image.grid_sample", grid_sample_kernel);
}

}  // namespace kiln
