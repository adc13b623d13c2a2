#include "op/qnn/qnn_util.h"

namespace kiln {

const TensorTypeNode& check_quant_param(const std::vector<Type>& args, size_t i, const std::string& arg_name,
                                        bool is_scale, int64_t channels, const std::string& channel_what) {
  const TensorTypeNode& t = arg_tensor(args, i, arg_name);
  if (is_scale)
    require_dtype(arg_name, t.dtype, DTypeClass::kFloat);
  else if (!is_int(t.dtype))
    throw std::move(Error(cat("argument '", arg_name, "' must be an integer zero point"))
                        .expected("an integer dtype", std::string(dtype_name(t.dtype))));
  bool per_tensor = t.ndim() == 0 || (t.ndim() == 1 && t.shape[0] == 1);
  if (per_tensor) return t;
  bool per_channel = channels != kNoChannels && t.ndim() == 1 &&
                     (channels == kAnyDim || t.shape[0] == kAnyDim || t.shape[0] == channels);
  if (!per_channel)
    throw std::move(
        Error(cat("argument '", arg_name, "' must be a scalar",
                  channels == kNoChannels ? std::string() : cat(" or have one value per ", channel_what)))
            .expected(channels == kNoChannels ? "shape () or (1,)" : cat("shape (), (1,) or ", shape_str({channels})),
                      shape_str(t.shape)));
  return t;
}

void check_quantized_arg(const TensorTypeNode& t, const std::string& arg_name) {
  if (t.dtype != DType::kInt8 && t.dtype != DType::kUInt8)
    throw std::move(Error(cat("argument '", arg_name, "' must hold 8-bit quantized values"))
                        .expected("int8 or uint8", std::string(dtype_name(t.dtype))));
}

}  // namespace kiln
