// The list of converter families. Registration is explicit (no static initialisers), as
// for ops: a family file defines one register_*_converters function and is listed here.
#include "frontend/onnx/converter.h"

namespace kiln::frontend {

void register_elementwise_converters(ConverterRegistry& registry);
void register_nn_converters(ConverterRegistry& registry);
void register_tensor_converters(ConverterRegistry& registry);
void register_image_converters(ConverterRegistry& registry);

void register_builtin_converters(ConverterRegistry& registry) {
  register_elementwise_converters(registry);
  register_nn_converters(registry);
  register_tensor_converters(registry);
  register_image_converters(registry);
}

}  // namespace kiln::frontend
