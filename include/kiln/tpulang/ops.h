// TpuLang's op functions, with tpu-mlir's names, signatures and argument orders. Each one
// checks its arguments (ranks, list lengths, dtypes, zero points against channels, tensors
// of one graph) and throws a kiln::Error naming the op ("tpulang.conv_v2") and the argument,
// infers the output shape, and inserts one Top operator into the graph its tensors belong
// to. An empty list stands for Python's None (the default); an undefined Tensor ({}) for an
// absent operand. Windows are [h, w]; paddings are TpuLang's [top, bottom, left, right]
// (Top's `pads` attribute is [top, left, bottom, right]: the emitter reorders).
#pragma once

#include <string>
#include <vector>

#include "kiln/tpulang/graph.h"

namespace kiln::tpulang {

using Ints = std::vector<int64_t>;

// conv: float convolution. Output [n, oc, oh, ow] with kh_ext = dilation[0] * (kh - 1) + 1,
// oh = (ih + pad[0] + pad[1] - kh_ext) / stride[0] + 1 (and the same for w).
Tensor conv(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, Ints stride = {}, Ints dilation = {},
            Ints pad = {}, int64_t group = 1, const std::string& out_dtype = "", const std::string& out_name = "");
// conv_v2: conv that also takes integer inputs; input_zp has 1 or ic values, weight_zp 1 or
// oc values (the weight's per-channel axis). Float input: out_dtype defaults to the input's;
// integer input: to int32 (int32 or uint32).
Tensor conv_v2(const Tensor& tensor_i, const Tensor& weight, const Tensor& bias = {}, Ints stride = {},
               Ints dilation = {}, Ints pad = {}, int64_t group = 1, Ints input_zp = {}, Ints weight_zp = {},
               const std::string& out_dtype = "", const std::string& out_name = "");
// deconv: transposed convolution, weight [ic, oc / group, kh, kw];
// oh = (ih - 1) * stride[0] - pad[0] - pad[1] + kh_ext + output_padding[0].
Tensor deconv(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, Ints stride = {}, Ints dilation = {},
              Ints pad = {}, Ints output_padding = {}, int64_t group = 1, const std::string& out_dtype = "",
              const std::string& out_name = "");
// matmul: [..., m, k] x [..., k, n] with broadcast batch dims; bias of n values.
Tensor matmul(const Tensor& input, const Tensor& right, const Tensor& bias = {}, bool right_transpose = false,
              bool left_transpose = false, bool output_transpose = false, bool keep_dims = true,
              const std::string& out_dtype = "", const std::string& out_name = "");

// Elementwise binaries with numpy broadcasting. scale/zero_point: empty, or 3 values
// (input 0, input 1, output) quantizing the three tensors.
Tensor add(const Tensor& tensor_i0, const Tensor& tensor_i1, std::vector<double> scale = {}, Ints zero_point = {},
           const std::string& out_dtype = "", const std::string& out_name = "");
Tensor sub(const Tensor& tensor_i0, const Tensor& tensor_i1, std::vector<double> scale = {}, Ints zero_point = {},
           const std::string& out_dtype = "", const std::string& out_name = "");
Tensor mul(const Tensor& tensor_i0, const Tensor& tensor_i1, std::vector<double> scale = {}, Ints zero_point = {},
           const std::string& out_dtype = "", const std::string& out_name = "");
Tensor div(const Tensor& tensor_i0, const Tensor& tensor_i1, const std::string& out_name = "");

// Activations (float tensors).
Tensor relu(const Tensor& input, const std::string& out_name = "");
Tensor leaky_relu(const Tensor& input, double negative_slope = 0.01, const std::string& out_name = "");
Tensor prelu(const Tensor& input, const Tensor& slope, const std::string& out_name = "");
Tensor sigmoid(const Tensor& input, const std::string& out_name = "");
Tensor tanh(const Tensor& input, const std::string& out_name = "");
Tensor gelu(const Tensor& input, const std::string& out_name = "");
Tensor softmax(const Tensor& input, int64_t axis, const std::string& out_name = "");
// clamp: min(max(input, min), max), Top's Clip (ReLU6 is clamp(x, 0, 6)).
Tensor clamp(const Tensor& input, double min, double max, const std::string& out_name = "");
// layer_norm: normalises the dims from `axis` on; gamma and beta (optional) have their shape.
Tensor layer_norm(const Tensor& input, const Tensor& gamma = {}, const Tensor& beta = {}, double epsilon = 1e-5,
                  int64_t axis = -1, const std::string& out_name = "");

// Pools over NCHW; kernel [kh, kw] is required.
Tensor maxpool(const Tensor& input, Ints kernel, Ints stride = {}, Ints pad = {}, bool ceil_mode = false,
               const std::string& out_name = "");
Tensor avgpool(const Tensor& input, Ints kernel, Ints stride = {}, Ints pad = {}, bool ceil_mode = false,
               bool count_include_pad = false, const std::string& out_name = "");

// Data movement.
Tensor concat(const std::vector<Tensor>& inputs, int64_t axis = 0, const std::string& out_name = "");
// new_shape may hold one -1 (inferred) and 0s (copy the input dim).
Tensor reshape(const Tensor& tensor, Ints new_shape, const std::string& out_name = "");
Tensor permute(const Tensor& input, Ints order, const std::string& out_name = "");
Tensor squeeze(const Tensor& tensor_i, Ints axis, const std::string& out_name = "");
Tensor unsqueeze(const Tensor& tensor_i, Ints axis, const std::string& out_name = "");
// slice: ends are exclusive and clamped, steps positive; axes default to the leading dims.
Tensor slice(const Tensor& input, Ints starts, Ints ends, Ints steps = {}, Ints axes = {},
             const std::string& out_name = "");

// Quantization steps (Top writes the integer side's scale and zero point into its element
// type). requant_mode picks Top's quant_mode: requant_int 0 TFLite_LShift, 1 TFLite,
// 2 MultiplierShift; dequant_int 0 Normal, 1 TFLite. round_mode is TpuLang's snake case
// (half_away_from_zero, half_up, half_down, half_to_even, towards_zero, up, down). mul,
// shift, scale and offset take one value or one per channel (axis 1).
Tensor requant_fp_to_int(const Tensor& tensor_i, std::vector<double> scale, Ints offset, int64_t requant_mode,
                         const std::string& out_dtype, const std::string& out_name = "",
                         const std::string& round_mode = "half_away_from_zero");
Tensor dequant_int_to_fp(const Tensor& tensor_i, std::vector<double> scale, Ints offset,
                         const std::string& out_dtype = "float32", const std::string& out_name = "",
                         const std::string& round_mode = "half_away_from_zero");
Tensor requant_int(const Tensor& tensor_i, Ints mul, Ints shift, Ints offset, int64_t requant_mode,
                   const std::string& out_dtype = "int8", const std::string& out_name = "",
                   const std::string& round_mode = "half_away_from_zero");
Tensor dequant_int(const Tensor& tensor_i, Ints mul, Ints shift, Ints offset, int64_t lshift, int64_t requant_mode,
                   const std::string& out_dtype = "int8", const std::string& out_name = "",
                   const std::string& round_mode = "half_up");

}  // namespace kiln::tpulang
