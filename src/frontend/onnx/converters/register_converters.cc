// The list of converter families. Registration is explicit (no static initialisers), as
// for ops: a family file defines one register_*_converters function and is listed here.
#include "frontend/onnx/converter.h"

namespace kiln::frontend {

void register_elementwise_converters(ConverterRegistry& registry);
void register_math_converters(ConverterRegistry& registry);
void register_nn_converters(ConverterRegistry& registry);
void register_tensor_converters(ConverterRegistry& registry);
void register_indexing_converters(ConverterRegistry& registry);
void register_image_converters(ConverterRegistry& registry);
void register_vision_converters(ConverterRegistry& registry);
void register_quantized_converters(ConverterRegistry& registry);
void register_signal_converters(ConverterRegistry& registry);
void register_random_converters(ConverterRegistry& registry);
void register_normalization_converters(ConverterRegistry& registry);
void register_opset18_converters(ConverterRegistry& registry);

void register_control_flow_converters(ConverterRegistry& registry);
void register_sequence_converters(ConverterRegistry& registry);
void register_recurrent_converters(ConverterRegistry& registry);

void register_builtin_converters(ConverterRegistry& registry) {
  register_control_flow_converters(registry);
  register_sequence_converters(registry);
  register_recurrent_converters(registry);
  register_elementwise_converters(registry);
  register_math_converters(registry);
  register_nn_converters(registry);
  register_tensor_converters(registry);
  register_indexing_converters(registry);
  register_image_converters(registry);
  register_vision_converters(registry);
  register_quantized_converters(registry);
  register_signal_converters(registry);
  register_random_converters(registry);
  register_normalization_converters(registry);
  register_opset18_converters(registry);
}

}  // namespace kiln::frontend
