// Converters: Conv, ConvTranspose, pooling (with MaxPool's Indices), MaxUnpool,
// BatchNormalization, LayerNormalization, Gemm, MatMul, Softmax/LogSoftmax, Flatten.
//
// kiln's convolution and pooling ops are 2-D (NCHW) and 3-D (NCDHW). 1-D ONNX nodes (N, C, L)
// run as 2-D ones on (N, C, 1, L): the converter inserts the unit axis and removes it afterwards.
#include "kiln/attrs/nn.h"

#include "frontend/onnx/converters/converter_util.h"
#include "kiln/attrs/reduce.h"
#include "kiln/attrs/transform.h"

namespace kiln::frontend {

namespace {

// The window of a convolution or pooling node, in ONNX's terms, for k spatial axes.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: k begins, then k ends
};

// pads for auto_pad SAME_UPPER / SAME_LOWER: the output extent is ceil(in / stride), and the
// odd padding element goes at the end (UPPER) or the beginning (LOWER).
std::vector<int64_t> same_pads(const Shape& spatial, const Window& w, bool upper) {
  size_t k = spatial.size();
  std::vector<int64_t> pads(2 * k);
  for (size_t i = 0; i < k; ++i) {
    check(spatial[i] != kAnyDim, "auto_pad SAME needs static spatial dimensions, found ", shape_str(spatial));
    int64_t out = (spatial[i] + w.strides[i] - 1) / w.strides[i];
    int64_t total =
        std::max<int64_t>(0, (out - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 - spatial[i]);
    int64_t small = total / 2, big = total - small;
    pads[i] = upper ? small : big;
    pads[i + k] = upper ? big : small;
  }
  return pads;
}

Window read_window(ConvertContext& c, const Shape& data_shape, std::vector<int64_t> kernel) {
  size_t k = data_shape.size() - 2;
  Window w;
  w.kernel = std::move(kernel);
  check(w.kernel.size() == k, "kernel_shape must have ", k, " values for an input of shape ", shape_str(data_shape),
        ", found ", w.kernel.size());
  w.strides = c.attrs().get_ints("strides", std::vector<int64_t>(k, 1));
  w.dilations = c.attrs().get_ints("dilations", std::vector<int64_t>(k, 1));
  w.pads = c.attrs().get_ints("pads", std::vector<int64_t>(2 * k, 0));
  check(w.strides.size() == k && w.dilations.size() == k && w.pads.size() == 2 * k,
        "strides, dilations and pads must have ", k, ", ", k, " and ", 2 * k, " values for an input of shape ",
        shape_str(data_shape));
  std::string auto_pad = c.attrs().get_string("auto_pad", "NOTSET");
  Shape spatial(data_shape.begin() + 2, data_shape.end());
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    w.pads = same_pads(spatial, w, auto_pad == "SAME_UPPER");
  } else if (auto_pad == "VALID") {
    w.pads.assign(2 * k, 0);
  } else if (auto_pad != "NOTSET") {
    throw std::move(Error("attribute 'auto_pad' has an unknown value")
                        .expected("NOTSET, SAME_UPPER, SAME_LOWER or VALID", "'" + auto_pad + "'"));
  }
  return w;
}

// A 1-D window as the 2-D one over a unit height.
Window lift_to_2d(const Window& w) {
  return {{1, w.kernel[0]}, {1, w.strides[0]}, {1, w.dilations[0]}, {0, w.pads[0], 0, w.pads[1]}};
}

void check_spatial_rank(int64_t rank, const Shape& shape) {
  if (rank < 3 || rank > 5)
    throw std::move(Error("only 1-D, 2-D and 3-D windows are supported (input rank 3, 4 or 5)")
                        .expected("(N, C, L), (N, C, H, W) or (N, C, D, H, W)", shape_str(shape)));
}

// "nn.conv2d" for 1-D (lifted) and 2-D windows, "nn.conv3d" for 3-D ones.
std::string windowed_op(const std::string& prefix, int64_t rank, const std::string& suffix = "") {
  return cat(prefix, rank == 5 ? "3d" : "2d", suffix);
}

// Calls `op`, the 2-D (T2 attributes) or 3-D (T3) form of a windowed op, with the attributes
// `fill` sets on the declared defaults.
template <class T2, class T3, class Fill>
Expr call_windowed(const std::string& op, int64_t rank, std::vector<Expr> args, Fill fill) {
  if (rank == 5) {
    T3 attrs;
    fill(attrs);
    return call_op(op, std::move(args), attrs);
  }
  T2 attrs;
  fill(attrs);
  return call_op(op, std::move(args), attrs);
}

template <class T>
void set_conv_window(T& attrs, const Window& w, int64_t groups) {
  attrs.strides = w.strides;
  attrs.padding = w.pads;
  attrs.dilation = w.dilations;
  attrs.groups = groups;
  attrs.kernel_size = w.kernel;
}

Expr add_unit_height(const Expr& x) { return call_op("expand_dims", {x}, ExpandDimsAttrs{.axis = 2}); }
Expr drop_unit_height(const Expr& x) { return call_op("squeeze", {x}, SqueezeAttrs{.axis = std::vector<int64_t>{2}}); }

ConvertResult convert_conv(ConvertContext& c) {
  Expr data = c.input(0), weight = c.input(1);
  const Shape data_shape = c.input_shape(0);
  int64_t rank = static_cast<int64_t>(data_shape.size());
  check_spatial_rank(rank, data_shape);
  const Shape& weight_shape = c.input_shape(1);
  check(static_cast<int64_t>(weight_shape.size()) == rank, "weight ", shape_str(weight_shape),
        " must have the rank of the input ", shape_str(data_shape));
  Window w = read_window(c, data_shape,
                         c.attrs().get_ints("kernel_shape", Shape(weight_shape.begin() + 2, weight_shape.end())));
  bool one_d = rank == 3;
  if (one_d) {
    w = lift_to_2d(w);
    data = add_unit_height(data);
    weight = add_unit_height(weight);
  }
  Expr out =
      call_windowed<Conv2DAttrs, Conv3DAttrs>(windowed_op("nn.conv", rank), rank, {data, weight}, [&](auto& attrs) {
        set_conv_window(attrs, w, c.attrs().get_int("group", 1));
        if (weight_shape[0] != kAnyDim) attrs.channels = weight_shape[0];
      });
  if (c.has_input(2)) out = call_op("nn.bias_add", {out, c.input(2)}, BiasAddAttrs{.axis = 1});
  return one_d ? drop_unit_height(out) : out;
}

// Padding of a transposed convolution that gives `out` elements along one axis, split as
// ONNX says: the odd element at the end for SAME_UPPER, at the beginning otherwise. When
// `out` exceeds the unpadded extent, the extra elements are output padding at the end.
void transposed_pads_for(int64_t in, int64_t out, size_t axis, bool upper, Window* w,
                         std::vector<int64_t>* output_padding) {
  size_t k = w->kernel.size();
  int64_t full = w->strides[axis] * (in - 1) + (*output_padding)[axis] + (w->kernel[axis] - 1) * w->dilations[axis] + 1;
  int64_t total = full - out;
  if (total < 0) {
    w->pads[axis] = w->pads[axis + k] = 0;
    (*output_padding)[axis] -= total;
    return;
  }
  int64_t small = total / 2;
  w->pads[axis] = upper ? small : total - small;
  w->pads[axis + k] = total - w->pads[axis];
}

// ConvTranspose: 1-D lifted to nn.conv2d_transpose, 2-D and 3-D as nn.conv{2,3}d_transpose.
// output_shape and auto_pad SAME_* fix the output extents; the pads follow from them.
ConvertResult convert_conv_transpose(ConvertContext& c) {
  Expr data = c.input(0), weight = c.input(1);
  const Shape data_shape = c.input_shape(0);
  const int64_t rank = static_cast<int64_t>(data_shape.size());
  check_spatial_rank(rank, data_shape);
  const Shape& weight_shape = c.input_shape(1);
  check(static_cast<int64_t>(weight_shape.size()) == rank, "weight ", shape_str(weight_shape),
        " must have the rank of the input ", shape_str(data_shape));
  const size_t k = static_cast<size_t>(rank - 2);
  Window w;
  w.kernel = c.attrs().get_ints("kernel_shape", Shape(weight_shape.begin() + 2, weight_shape.end()));
  w.strides = c.attrs().get_ints("strides", std::vector<int64_t>(k, 1));
  w.dilations = c.attrs().get_ints("dilations", std::vector<int64_t>(k, 1));
  w.pads = c.attrs().get_ints("pads", std::vector<int64_t>(2 * k, 0));
  std::vector<int64_t> output_padding = c.attrs().get_ints("output_padding", std::vector<int64_t>(k, 0));
  check(w.kernel.size() == k && w.strides.size() == k && w.dilations.size() == k && w.pads.size() == 2 * k &&
            output_padding.size() == k,
        "kernel_shape, strides, dilations, output_padding and pads must have ", k, ", ", k, ", ", k, ", ", k, " and ",
        2 * k, " values for an input of shape ", shape_str(data_shape));
  std::string auto_pad = c.attrs().get_string("auto_pad", "NOTSET");
  check(auto_pad == "NOTSET" || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER" || auto_pad == "VALID",
        "attribute 'auto_pad' has an unknown value '", auto_pad, "'");
  std::vector<int64_t> output_shape = c.attrs().get_ints("output_shape", {});
  if (output_shape.size() == k + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  check(output_shape.empty() || output_shape.size() == k, "attribute 'output_shape' must have ", k,
        " values for an input of shape ", shape_str(data_shape));
  bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (auto_pad == "VALID") w.pads.assign(2 * k, 0);
  if (!output_shape.empty() || same) {
    for (size_t i = 0; i < k; ++i) {
      int64_t in = data_shape[i + 2];
      check(in != kAnyDim, "ConvTranspose with output_shape or auto_pad SAME needs static spatial dimensions, found ",
            shape_str(data_shape));
      int64_t out = output_shape.empty() ? in * w.strides[i] : output_shape[i];
      transposed_pads_for(in, out, i, auto_pad == "SAME_UPPER", &w, &output_padding);
    }
  }
  bool one_d = rank == 3;
  if (one_d) {
    w = lift_to_2d(w);
    output_padding.insert(output_padding.begin(), 0);
    data = add_unit_height(data);
    weight = add_unit_height(weight);
  }
  Expr out = call_windowed<Conv2DTransposeAttrs, Conv3DTransposeAttrs>(
      windowed_op("nn.conv", rank, "_transpose"), rank, {data, weight}, [&](auto& attrs) {
        set_conv_window(attrs, w, c.attrs().get_int("group", 1));
        attrs.output_padding = output_padding;
      });
  if (c.has_input(2)) out = call_op("nn.bias_add", {out, c.input(2)}, BiasAddAttrs{.axis = 1});
  return one_d ? drop_unit_height(out) : out;
}

// MaxPool's second output, the flat input positions of the maxima, comes from
// nn.max_pool2d_with_argmax (storage_order=1 counts them column-major).
ConvertFn pool(std::string kind) {
  return [kind = std::move(kind)](ConvertContext& c) -> ConvertResult {
    Expr data = c.input(0);
    const Shape data_shape = c.input_shape(0);
    const int64_t rank = static_cast<int64_t>(data_shape.size());
    check_spatial_rank(rank, data_shape);
    const bool with_indices = kind == "max" && c.num_outputs() > 1;
    check(!with_indices || rank < 5, "MaxPool's Indices output is supported for 1-D and 2-D windows only, found ",
          shape_str(data_shape));
    std::string op = with_indices ? "nn.max_pool2d_with_argmax" : windowed_op("nn." + kind + "_pool", rank);
    Window w = read_window(c, data_shape, c.attrs().get_ints("kernel_shape"));
    bool one_d = data_shape.size() == 3;
    if (one_d) {
      w = lift_to_2d(w);
      data = add_unit_height(data);
    }
    int64_t storage_order = c.attrs().get_int("storage_order", 0);
    check(storage_order == 0 || storage_order == 1, "attribute 'storage_order' must be 0 or 1, found ", storage_order);
    auto fill = [&](auto& attrs) {
      attrs.pool_size = w.kernel;
      attrs.strides = w.strides;
      attrs.dilation = w.dilations;
      attrs.padding = w.pads;
      attrs.ceil_mode = c.attrs().get_int("ceil_mode", 0) != 0;
      if constexpr (requires { attrs.count_include_pad; })
        attrs.count_include_pad = c.attrs().get_int("count_include_pad", 0) != 0;
      if constexpr (requires { attrs.column_major; }) attrs.column_major = storage_order == 1;
    };
    Expr out = with_indices ? call_windowed<MaxPool2DWithArgmaxAttrs, MaxPool2DWithArgmaxAttrs>(op, rank, {data}, fill)
               : kind == "avg" ? call_windowed<AvgPool2DAttrs, AvgPool3DAttrs>(op, rank, {data}, fill)
                               : call_windowed<Pool2DAttrs, Pool3DAttrs>(op, rank, {data}, fill);
    if (!with_indices) return one_d ? drop_unit_height(out) : out;
    std::vector<Expr> outputs{make_tuple_get_item(out, 0), make_tuple_get_item(out, 1)};
    if (one_d)
      for (Expr& o : outputs) o = drop_unit_height(o);
    return outputs;
  };
}

// MaxUnpool: indices count positions in the shape the pooling window implies, (in - 1) *
// stride + kernel - pads along each spatial axis; the optional third input may ask for a
// larger output, where the values keep their multi-index.
ConvertResult convert_max_unpool(ConvertContext& c) {
  const Shape data_shape = c.input_shape(0);
  const int64_t rank = static_cast<int64_t>(data_shape.size());
  check(rank >= 3, "MaxUnpool needs an (N, C, spatial...) input, found ", shape_str(data_shape));
  check(c.input_type(0).is_static(), "MaxUnpool needs a static input shape, found ", shape_str(data_shape));
  const size_t k = static_cast<size_t>(rank - 2);
  std::vector<int64_t> kernel = c.attrs().get_ints("kernel_shape");
  std::vector<int64_t> strides = c.attrs().get_ints("strides", std::vector<int64_t>(k, 1));
  std::vector<int64_t> pads = c.attrs().get_ints("pads", std::vector<int64_t>(2 * k, 0));
  check(kernel.size() == k && strides.size() == k && pads.size() == 2 * k, "kernel_shape, strides and pads must have ",
        k, ", ", k, " and ", 2 * k, " values for an input of shape ", shape_str(data_shape));
  std::vector<int64_t> pooled_shape{data_shape[0], data_shape[1]};
  for (size_t i = 0; i < k; ++i)
    pooled_shape.push_back((data_shape[i + 2] - 1) * strides[i] + kernel[i] - pads[i] - pads[i + k]);
  MaxUnpoolAttrs attrs;
  attrs.output_shape = pooled_shape;
  if (c.has_input(2)) {
    std::vector<int64_t> output_shape = c.require_ints_input(2, "output_shape");
    check(output_shape.size() == pooled_shape.size(), "input 'output_shape' ", shape_str(output_shape),
          " must have one extent per axis of the input ", shape_str(data_shape));
    if (output_shape != pooled_shape) {
      attrs.output_shape = output_shape;
      attrs.index_shape = pooled_shape;
    }
  }
  return call_op("nn.max_unpool", {c.input(0), c.input(1)}, attrs);
}

// Global pooling over every spatial axis: the 2-D op for NCHW, a keepdims reduction else.
ConvertFn global_pool(std::string op_2d, std::string reduce_op) {
  return [op_2d = std::move(op_2d), reduce_op = std::move(reduce_op)](ConvertContext& c) -> ConvertResult {
    int64_t rank = c.input_rank(0);
    if (rank == 4) return call_op(op_2d, {c.input(0)});
    check(rank >= 3, "input must have at least one spatial axis, found shape ", shape_str(c.input_shape(0)));
    std::vector<int64_t> axes;
    for (int64_t a = 2; a < rank; ++a) axes.push_back(a);
    return call_op(reduce_op, {c.input(0)}, ReduceAttrs{.axis = axes, .keepdims = true});
  };
}

// Inference batch norm; the training outputs (running mean and variance) are the inputs.
ConvertResult convert_batch_norm(ConvertContext& c) {
  BatchNormAttrs attrs;
  attrs.epsilon = c.attrs().get_float("epsilon", 1e-5);
  check(c.attrs().get_int("training_mode", 0) == 0, "BatchNormalization in training mode is not supported");
  check(c.attrs().get_int("spatial", 1) == 1, "BatchNormalization with spatial=0 is not supported");
  Expr bn = call_op("nn.batch_norm", {c.input(0), c.input(1), c.input(2), c.input(3), c.input(4)}, attrs);
  std::vector<Expr> outputs{make_tuple_get_item(bn, 0)};
  if (c.num_outputs() > 1) outputs.push_back(c.input(3));
  if (c.num_outputs() > 2) outputs.push_back(c.input(4));
  check(c.num_outputs() <= 3, "BatchNormalization's saved mean and variance outputs are training-only");
  return outputs;
}

// Normalises over the axes from `axis` to the last. nn.layer_norm covers the common case
// (last axis, one output); the Mean and InvStdDev outputs or several axes spell it out.
ConvertResult convert_layer_norm(ConvertContext& c) {
  int64_t rank = c.input_rank(0);
  int64_t axis = normalize_onnx_axis(c.attrs().get_int("axis", -1), rank);
  double epsilon = c.attrs().get_float("epsilon", 1e-5);
  Expr x = c.input(0), scale = c.input(1);
  bool center = c.has_input(2);
  if (axis == rank - 1 && c.num_outputs() == 1) {
    LayerNormAttrs attrs;
    attrs.epsilon = epsilon;
    attrs.center = center;
    return call_op("nn.layer_norm", {x, scale, center ? c.input(2) : scale}, attrs);
  }
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
  const ReduceAttrs over_axes{.axis = axes, .keepdims = true};
  Expr mean = call_op("mean", {x}, over_axes);
  Expr centered = call_op("subtract", {x, mean});
  Expr variance = call_op("mean", {call_op("multiply", {centered, centered})}, over_axes);
  Expr inv_std = call_op("rsqrt", {call_op("add", {variance, scalar_constant(c.input_dtype(0), epsilon)})});
  Expr y = call_op("multiply", {call_op("multiply", {centered, inv_std}), scale});
  if (center) y = call_op("add", {y, c.input(2)});
  return std::vector<Expr>{y, mean, inv_std};
}

Expr transpose_2d(const Expr& x) {
  return call_op("transpose", {x}, TransposeAttrs{.axes = std::vector<int64_t>{1, 0}});
}

// alpha * A' B' + beta * C, with dense computing A' B'^T.
ConvertResult convert_gemm(ConvertContext& c) {
  Expr a = c.input(0), b = c.input(1);
  if (c.attrs().get_int("transA", 0)) a = transpose_2d(a);
  if (!c.attrs().get_int("transB", 0)) b = transpose_2d(b);
  Expr out = call_op("nn.dense", {a, b});
  double alpha = c.attrs().get_float("alpha", 1.0), beta = c.attrs().get_float("beta", 1.0);
  DType dtype = c.input_dtype(0);
  if (alpha != 1.0) out = call_op("multiply", {out, scalar_constant(dtype, alpha)});
  if (c.has_input(2) && beta != 0.0) {
    Expr bias = c.input(2);
    if (beta != 1.0) bias = call_op("multiply", {bias, scalar_constant(dtype, beta)});
    out = call_op("add", {out, bias});
  }
  return out;
}

// Opsets 1-12 coerce the input to 2-D at `axis` (default 1) and normalise each row; from 13
// the op normalises along `axis` (default -1).
ConvertFn softmax(std::string op) {
  return [op = std::move(op)](ConvertContext& c) -> ConvertResult {
    Expr x = c.input(0);
    int64_t rank = c.input_rank(0);
    if (c.opset() >= 13)
      return call_op(op, {x}, SoftmaxAttrs{.axis = normalize_onnx_axis(c.attrs().get_int("axis", -1), rank)});
    int64_t axis = rank == 0 ? 0 : normalize_onnx_axis(c.attrs().get_int("axis", 1), rank);
    if (axis == rank - 1) return call_op(op, {x}, SoftmaxAttrs{.axis = -1});
    const Shape shape = c.input_shape(0);
    check(c.input_type(0).is_static(), "Softmax before opset 13 with axis ", axis,
          " needs a static input shape, found ", shape_str(shape));
    int64_t rows = num_elements(Shape(shape.begin(), shape.begin() + axis));
    Expr flat = call_op("reshape", {x}, ReshapeAttrs{.newshape = {rows, -1}});
    return call_op("reshape", {call_op(op, {flat}, SoftmaxAttrs{.axis = -1})}, ReshapeAttrs{.newshape = shape});
  };
}

bool all_known(const Shape& s) { return std::find(s.begin(), s.end(), kAnyDim) == s.end(); }

// (d0 ... d[axis-1], d[axis] ... dn) -> (product of the first, product of the rest)
ConvertResult convert_flatten(ConvertContext& c) {
  const Shape shape = c.input_shape(0);
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = c.attrs().get_int("axis", 1);
  if (axis < 0) axis += rank;
  check(axis >= 0 && axis <= rank, "attribute 'axis' out of range for an input of shape ", shape_str(shape));
  Shape leading(shape.begin(), shape.begin() + axis), trailing(shape.begin() + axis, shape.end());
  std::vector<int64_t> newshape;
  if (all_known(leading) && all_known(trailing)) {
    newshape = {num_elements(leading), num_elements(trailing)};
  } else if (all_known(leading)) {
    newshape = {num_elements(leading), -1};
  } else if (all_known(trailing) && num_elements(trailing) > 0) {
    newshape = {-1, num_elements(trailing)};
  } else {
    check(axis == 1, "Flatten at axis ", axis, " of ", shape_str(shape), " needs more static dimensions");
    newshape = {0, -1};  // keeps the unknown batch
  }
  return call_op("reshape", {c.input(0)}, ReshapeAttrs{.newshape = newshape});
}

}  // namespace

void register_nn_converters(ConverterRegistry& r) {
  r.add("Conv", 1, convert_conv);
  r.add("ConvTranspose", 1, convert_conv_transpose);
  r.add("MaxPool", 1, pool("max"));
  // Opset 19 adds dilations, which read_window already reads.
  r.add("AveragePool", 1, pool("avg")).add("AveragePool", 19, pool("avg"));
  r.add("MaxUnpool", 9, convert_max_unpool);
  r.add("GlobalAveragePool", 1, global_pool("nn.global_avg_pool2d", "mean"));
  r.add("GlobalMaxPool", 1, global_pool("nn.global_max_pool2d", "max"));
  r.add("BatchNormalization", 1, convert_batch_norm);
  r.add("LayerNormalization", 17, convert_layer_norm);
  r.add("Gemm", 1, convert_gemm);
  r.add("MatMul", 1, binary_op("nn.matmul"));
  r.add("Softmax", 1, softmax("nn.softmax"));
  r.add("LogSoftmax", 1, softmax("nn.log_softmax"));
  r.add("Flatten", 1, convert_flatten);
}

}  // namespace kiln::frontend
