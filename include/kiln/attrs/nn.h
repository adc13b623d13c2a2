// Attribute declarations of the nn window family (convolutions, pools) and of a few small nn
// ops; see kiln/attrs/reflect.h for the mechanism. The op files (src/op/nn) derive their
// schemas from these and the reference kernels (src/runtime/kernels/nn) read them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kiln/attrs/reflect.h"
#include "kiln/attrs/window.h"

namespace kiln {

struct Conv2DAttrs {
  std::vector<int64_t> strides{1, 1};
  std::vector<int64_t> padding{0, 0};
  std::vector<int64_t> dilation{1, 1};
  int64_t groups = 1;
  std::optional<int64_t> channels;
  std::optional<std::vector<int64_t>> kernel_size;
  std::string data_layout = "NCHW";
  std::string kernel_layout = "OIHW";
  std::string out_layout;
  std::string out_dtype;

  template <class V>
  void visit(V& v) {
    v("strides", strides, "Stride per spatial axis: [s] or [s_h, s_w].");
    v("padding", padding, "Zero padding: [p], [p_h, p_w] or [top, left, bottom, right].");
    v("dilation", dilation, "Spacing of the kernel taps: [d] or [d_h, d_w].");
    v("groups", groups, "Number of channel groups; channels of different groups do not mix.");
    v("channels", channels, "Output channels, when given checked against the weight.");
    v("kernel_size", kernel_size, "Kernel extents, when given checked against the weight.");
    v("data_layout", data_layout,
      "Layout of the data: NCHW, or for nn.conv2d the blocked NCHW{x}c (kiln/attrs/layout.h).");
    v("kernel_layout", kernel_layout, "Layout of the weight (blocked data: OIHW{x}i{y}o, depthwise OIHW1i{x}o).");
    v("out_layout", out_layout, "Layout of the output; \"\" for the data's (blocked: NCHW{y}c).");
    v("out_dtype", out_dtype, "Dtype of the output; \"\" for the data's.");
  }
  void validate() const;
  Window2D window() const { return window_2d(strides, dilation, padding); }
};

struct Conv2DTransposeAttrs : Conv2DAttrs {
  std::vector<int64_t> output_padding{0, 0};

  Conv2DTransposeAttrs() { kernel_layout = "IOHW"; }
  template <class V>
  void visit(V& v) {
    Conv2DAttrs::visit(v);
    v("output_padding", output_padding, "Extra rows and columns at the end of the output: [p] or [p_h, p_w].");
  }
  void validate() const;
};

// Relay's qnn.conv2d: nn.conv2d's attributes, accumulating in int32 by default.
struct QnnConv2DAttrs : Conv2DAttrs {
  QnnConv2DAttrs() {
    padding = {0, 0, 0, 0};
    out_dtype = "int32";
  }
};

struct Conv3DAttrs {
  std::vector<int64_t> strides{1, 1, 1};
  std::vector<int64_t> padding{0, 0, 0};
  std::vector<int64_t> dilation{1, 1, 1};
  int64_t groups = 1;
  std::optional<int64_t> channels;
  std::optional<std::vector<int64_t>> kernel_size;
  std::string data_layout = "NCDHW";
  std::string kernel_layout = "OIDHW";
  std::string out_layout;
  std::string out_dtype;

  template <class V>
  void visit(V& v) {
    v("strides", strides, "Stride per spatial axis: [s] or [s_d, s_h, s_w].");
    v("padding", padding, "Zero padding: [p], one value per axis, or 3 begins then 3 ends.");
    v("dilation", dilation, "Spacing of the kernel taps: [d] or [d_d, d_h, d_w].");
    v("groups", groups, "Number of channel groups; channels of different groups do not mix.");
    v("channels", channels, "Output channels, when given checked against the weight.");
    v("kernel_size", kernel_size, "Kernel extents, when given checked against the weight.");
    v("data_layout", data_layout, "Layout of the data (only NCDHW).");
    v("kernel_layout", kernel_layout, "Layout of the weight.");
    v("out_layout", out_layout, "Layout of the output; \"\" for the data's.");
    v("out_dtype", out_dtype, "Dtype of the output; \"\" for the data's.");
  }
  void validate() const;
  WindowGeometry window() const { return window_geometry(strides, dilation, padding, 3); }
};

struct Conv3DTransposeAttrs : Conv3DAttrs {
  std::vector<int64_t> output_padding{0, 0, 0};

  Conv3DTransposeAttrs() { kernel_layout = "IODHW"; }
  template <class V>
  void visit(V& v) {
    Conv3DAttrs::visit(v);
    v("output_padding", output_padding, "Extra positions at the end of each output axis: [p] or 3 values.");
  }
  void validate() const;
};

// nn.max_pool2d.
struct Pool2DAttrs {
  std::vector<int64_t> pool_size{1, 1};
  std::vector<int64_t> strides{1, 1};
  std::vector<int64_t> dilation{1, 1};
  std::vector<int64_t> padding{0, 0};
  std::string layout = "NCHW";
  std::string out_layout;
  bool ceil_mode = false;

  template <class V>
  void visit(V& v) {
    v("pool_size", pool_size, "Window extents: [k] or [k_h, k_w].");
    v("strides", strides, "Stride per spatial axis: [s] or [s_h, s_w].");
    v("dilation", dilation, "Spacing of the window taps: [d] or [d_h, d_w].");
    v("padding", padding, "Padding (never counted): [p], [p_h, p_w] or [top, left, bottom, right].");
    v("layout", layout, "Layout of the data: NCHW, NHWC or blocked NCHW{x}c (N, C/x, H, W, x).");
    v("out_layout", out_layout, "Layout of the output; \"\" for the data's.");
    v("ceil_mode", ceil_mode, "Round the output extent up (a last window starting in the padding is dropped).");
  }
  void validate() const;
  Window2D window() const { return window_2d(strides, dilation, padding); }
  Pair2D pool() const { return pair_2d(pool_size); }
};

struct AvgPool2DAttrs : Pool2DAttrs {
  bool count_include_pad = false;

  template <class V>
  void visit(V& v) {
    Pool2DAttrs::visit(v);
    v("count_include_pad", count_include_pad, "Count padding positions in the divisor.");
  }
};

struct MaxPool2DWithArgmaxAttrs : Pool2DAttrs {
  bool column_major = false;

  template <class V>
  void visit(V& v) {
    Pool2DAttrs::visit(v);
    v("column_major", column_major, "Count positions within a plane column by column.");
  }
  void validate() const;
};

// nn.max_pool3d.
struct Pool3DAttrs {
  std::vector<int64_t> pool_size{1, 1, 1};
  std::vector<int64_t> strides{1, 1, 1};
  std::vector<int64_t> dilation{1, 1, 1};
  std::vector<int64_t> padding{0, 0, 0};
  std::string layout = "NCDHW";
  std::string out_layout;
  bool ceil_mode = false;

  template <class V>
  void visit(V& v) {
    v("pool_size", pool_size, "Window extents: [k] or [k_d, k_h, k_w].");
    v("strides", strides, "Stride per spatial axis: [s] or 3 values.");
    v("dilation", dilation, "Spacing of the window taps: [d] or 3 values.");
    v("padding", padding, "Padding (never counted): [p], one value per axis, or 3 begins then 3 ends.");
    v("layout", layout, "Layout of the data (only NCDHW).");
    v("out_layout", out_layout, "Layout of the output; \"\" for the data's.");
    v("ceil_mode", ceil_mode, "Round the output extent up (a last window starting in the padding is dropped).");
  }
  void validate() const;
  WindowGeometry window() const { return window_geometry(strides, dilation, padding, 3); }
};

struct AvgPool3DAttrs : Pool3DAttrs {
  bool count_include_pad = false;

  template <class V>
  void visit(V& v) {
    Pool3DAttrs::visit(v);
    v("count_include_pad", count_include_pad, "Count padding positions in the divisor.");
  }
};

// nn.global_max_pool2d, nn.global_avg_pool2d.
struct GlobalPool2DAttrs {
  std::string layout = "NCHW";
  std::string out_layout;

  template <class V>
  void visit(V& v) {
    v("layout", layout, "Layout of the data: NCHW, NHWC or blocked NCHW{x}c (N, C/x, H, W, x).");
    v("out_layout", out_layout, "Layout of the output; \"\" for the data's.");
  }
  void validate() const;
};

// nn.max_unpool: the inverse of max pooling.
struct MaxUnpoolAttrs {
  std::vector<int64_t> output_shape;
  std::optional<std::vector<int64_t>> index_shape;

  template <class V>
  void visit(V& v) {
    v("output_shape", output_shape, "Shape of the output.", kRequired);
    v("index_shape", index_shape,
      "Shape the flat indices count in, when it differs from output_shape (same rank); values keep their "
      "multi-index.");
  }
  void validate() const;
};

struct LeakyReluAttrs {
  double alpha = 0.01;

  template <class V>
  void visit(V& v) {
    v("alpha", alpha, "Slope of the negative part.");
  }
};

struct PReluAttrs {
  int64_t axis = 1;

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Channel axis of the data, along which alpha varies.");
  }
};

// nn.softmax, nn.log_softmax.
struct SoftmaxAttrs {
  int64_t axis = -1;

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Axis the normalisation runs along; negative counts from the end.");
  }
};

// nn.dense.
struct DenseAttrs {
  std::optional<int64_t> units;
  std::string out_dtype;

  template <class V>
  void visit(V& v) {
    v("units", units, "Output features, when given checked against the weight.");
    v("out_dtype", out_dtype, "Dtype of the output; \"\" for the data's.");
  }
  void validate() const;
};

// nn.matmul.
struct MatmulAttrs : DenseAttrs {
  bool transpose_a = false;
  bool transpose_b = false;

  template <class V>
  void visit(V& v) {
    DenseAttrs::visit(v);
    v("transpose_a", transpose_a, "Swap the last two axes of tensor_a.");
    v("transpose_b", transpose_b, "Swap the last two axes of tensor_b.");
  }
};

// nn.batch_matmul: y transposed by default, as in Relay.
struct BatchMatmulAttrs {
  std::string out_dtype;
  bool transpose_a = false;
  bool transpose_b = true;

  template <class V>
  void visit(V& v) {
    v("out_dtype", out_dtype, "Dtype of the output; \"\" for the data's.");
    v("transpose_a", transpose_a, "x is stored (B, K, M).");
    v("transpose_b", transpose_b, "y is stored (B, N, K).");
  }
  void validate() const;
};

// nn.dense_packed: nn.dense whose weight (units, K) PackDenseWeights laid out at build time as
// panels of `block` output features, (ceil(units / block), K, block), zeros past `units`.
struct DensePackedAttrs {
  int64_t units = 0;

  template <class V>
  void visit(V& v) {
    v("units", units, "Output features; the panels may hold more (zeros).", kRequired);
  }
};

// nn.batch_norm, nn.instance_norm (the channel axis) and nn.layer_norm (the normalised axis).
struct NormAttrs {
  int64_t axis = 1;
  double epsilon = 1e-5;
  bool center = true;
  bool scale = true;

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Axis of gamma and beta (and of the moving statistics); negative counts from the end.");
    v("epsilon", epsilon, "Added to the variance before the square root.");
    v("center", center, "Add beta.");
    v("scale", scale, "Multiply by gamma.");
  }
  void validate() const;
};

struct BatchNormAttrs : NormAttrs {};
struct InstanceNormAttrs : NormAttrs {};
struct LayerNormAttrs : NormAttrs {
  LayerNormAttrs() { axis = -1; }
};

struct LrnAttrs {
  int64_t size = 5;
  int64_t axis = 1;
  double bias = 2.0;
  double alpha = 1e-5;
  double beta = 0.75;

  template <class V>
  void visit(V& v) {
    v("size", size, "Elements in the window along 'axis'.");
    v("axis", axis, "Axis the window runs along (the channels).");
    v("bias", bias, "Added to the scaled window sum.");
    v("alpha", alpha, "Scale of the window sum (divided by size).");
    v("beta", beta, "Exponent of the denominator.");
  }
  void validate() const;
};

struct BiasAddAttrs {
  int64_t axis = 1;

  template <class V>
  void visit(V& v) {
    v("axis", axis, "Axis of the data the bias runs along; negative counts from the end.");
  }
};

struct NllLossAttrs {
  std::string reduction = "mean";
  int64_t ignore_index = -100;

  template <class V>
  void visit(V& v) {
    v("reduction", reduction, "none (per target), sum, or mean (divided by the sum of the weights used).");
    v("ignore_index", ignore_index, "Target value that contributes nothing.");
  }
  void validate() const;
};

struct DropoutAttrs {
  double rate = 0.5;

  template <class V>
  void visit(V& v) {
    v("rate", rate, "Fraction of elements dropped in training; inference ignores it.");
  }
  void validate() const;
};

}  // namespace kiln
