// Reference kernel: vision.roi_align, computing in double. Each bin of a region averages
// (or takes the maximum of) sample_ratio x sample_ratio bilinear samples at the centres of
// a regular grid over the bin. A sample more than one pixel outside the image contributes
// 0; one within that margin reads the clamped border. In max mode each sample is the
// largest of its four weighted corner terms, as ONNX Runtime computes it.
#include <cmath>

#include "kiln/attrs/vision.h"
#include "kiln/support/strings.h"
#include "runtime/kernels/nn/compute_view.h"

namespace kiln {

namespace {

// The 4 corner offsets and bilinear weights of one sample point in an H x W plane.
struct Sample {
  int64_t offset[4] = {0, 0, 0, 0};
  double weight[4] = {0, 0, 0, 0};
};

Sample bilinear_sample(double y, double x, int64_t height, int64_t width) {
  Sample s;
  if (y < -1.0 || y > double(height) || x < -1.0 || x > double(width)) return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  auto y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
  int64_t y_high = y_low + 1, x_high = x_low + 1;
  if (y_low >= height - 1) y = double(y_high = y_low = height - 1);
  if (x_low >= width - 1) x = double(x_high = x_low = width - 1);
  const double ly = y - double(y_low), lx = x - double(x_low), hy = 1 - ly, hx = 1 - lx;
  s.offset[0] = y_low * width + x_low;
  s.offset[1] = y_low * width + x_high;
  s.offset[2] = y_high * width + x_low;
  s.offset[3] = y_high * width + x_high;
  s.weight[0] = hy * hx;
  s.weight[1] = hy * lx;
  s.weight[2] = ly * hx;
  s.weight[3] = ly * lx;
  return s;
}

struct RoiGeometry {
  int64_t channels, height, width, pooled_h, pooled_w, sample_ratio;
  double spatial_scale;
  bool aligned, max_mode;
};

// Output (pooled_h, pooled_w) planes of every channel for one region.
void align_roi(const double* image, const double* roi, double* out, const RoiGeometry& g) {
  const double offset = g.aligned ? 0.5 : 0.0;
  const double start_w = roi[1] * g.spatial_scale - offset, start_h = roi[2] * g.spatial_scale - offset;
  double roi_w = roi[3] * g.spatial_scale - offset - start_w, roi_h = roi[4] * g.spatial_scale - offset - start_h;
  if (!g.aligned) {
    roi_w = std::max(roi_w, 1.0);
    roi_h = std::max(roi_h, 1.0);
  }
  const double bin_h = roi_h / double(g.pooled_h), bin_w = roi_w / double(g.pooled_w);
  const int64_t grid_h = g.sample_ratio > 0 ? g.sample_ratio : static_cast<int64_t>(std::ceil(roi_h / g.pooled_h));
  const int64_t grid_w = g.sample_ratio > 0 ? g.sample_ratio : static_cast<int64_t>(std::ceil(roi_w / g.pooled_w));
  const double count = double(std::max<int64_t>(grid_h * grid_w, 1));
  const int64_t plane = g.height * g.width, out_plane = g.pooled_h * g.pooled_w;
  for (int64_t ph = 0; ph < g.pooled_h; ++ph) {
    for (int64_t pw = 0; pw < g.pooled_w; ++pw) {
      std::vector<Sample> samples;
      for (int64_t iy = 0; iy < grid_h; ++iy) {
        const double y = start_h + double(ph) * bin_h + (double(iy) + 0.5) * bin_h / double(grid_h);
        for (int64_t ix = 0; ix < grid_w; ++ix) {
          const double x = start_w + double(pw) * bin_w + (double(ix) + 0.5) * bin_w / double(grid_w);
          samples.push_back(bilinear_sample(y, x, g.height, g.width));
        }
      }
      for (int64_t c = 0; c < g.channels; ++c) {
        const double* p = image + c * plane;
        double value = 0;
        bool first = true;
        for (const Sample& s : samples) {
          if (g.max_mode) {
            double v = s.weight[0] * p[s.offset[0]];
            for (int k = 1; k < 4; ++k) v = std::max(v, s.weight[k] * p[s.offset[k]]);
            value = first ? v : std::max(value, v);
            first = false;
          } else {
            for (int k = 0; k < 4; ++k) value += s.weight[k] * p[s.offset[k]];
          }
        }
        out[c * out_plane + ph * g.pooled_w + pw] = g.max_mode ? value : value / count;
      }
    }
  }
}

void roi_align_kernel(const RoiAlignAttrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs) {
  const NDArray& data = inputs[0];
  const NDArray& rois = inputs[1];
  const Pair2D pooled = attrs.pooled();
  const Shape& s = data.shape();
  RoiGeometry g{s[1],
                s[2],
                s[3],
                pooled.h,
                pooled.w,
                attrs.sample_ratio,
                attrs.spatial_scale,
                attrs.aligned,
                attrs.mode == "max"};
  ConstView<double> x(data), r(rois);
  OutView<double> y(outputs[0]);
  const int64_t num_rois = rois.shape()[0], image_size = g.channels * g.height * g.width;
  for (int64_t i = 0; i < num_rois; ++i) {
    const double* roi = r.data() + i * 5;
    const auto batch = static_cast<int64_t>(roi[0]);
    if (!(roi[0] >= 0 && batch < s[0]))
      throw std::move(Error(cat("batch index of region ", i, " is outside 'data' ", shape_str(s)))
                          .expected(cat("0 <= index < ", s[0]), cat(roi[0])));
    align_roi(x.data() + batch * image_size, roi, y.data() + i * g.channels * g.pooled_h * g.pooled_w, g);
  }
  y.commit();
}

}  // namespace

void register_vision_roi_align_kernels(KernelRegistry& registry) {
  registry.add<RoiAlignAttrs>("vision.roi_align", roi_align_kernel);
}

}  // namespace kiln
