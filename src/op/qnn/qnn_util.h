// Checks shared by the qnn ops' type relations: quantization parameters (scales and zero
// points) are per-tensor scalars or per-channel vectors along one axis of the data.
#pragma once

#include <string>
#include <vector>

#include "kiln/attrs/dtype_attr.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {

// `channels` value of check_quant_param for parameters that must be per tensor.
constexpr int64_t kNoChannels = -2;

// Checks that argument i is a scale (float) or zero point (integer) given per tensor (shape ()
// or (1,)) or per channel (shape (channels,)); `channels` may be kAnyDim (unknown) or kNoChannels
// when per-channel parameters are not allowed. Returns the parameter's type.
const TensorTypeNode& check_quant_param(const std::vector<Type>& args, size_t i, const std::string& arg_name,
                                        bool is_scale, int64_t channels, const std::string& channel_what);

// Throws unless the argument holds 8-bit quantized values (int8 or uint8).
void check_quantized_arg(const TensorTypeNode& t, const std::string& arg_name);

}  // namespace kiln
