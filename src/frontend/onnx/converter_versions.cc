// The table behind `kiln onnx-ops` and docs/onnx-support.md.
#include "frontend/onnx/converter.h"
#include "kiln/frontend/onnx.h"

namespace kiln {

std::vector<OnnxConverterVersions> onnx_converter_versions() { return frontend::ConverterRegistry::builtin().versions(); }

}  // namespace kiln
