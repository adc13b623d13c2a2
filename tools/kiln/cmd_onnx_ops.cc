// kiln onnx-ops: every ONNX operator kiln converts, one per line as
// "DOMAIN OP_TYPE V1,V2,..." (the opsets from which an implementation applies).
#include <iostream>

#include "cli.h"
#include "kiln/frontend/onnx.h"
#include "kiln/support/error.h"

namespace kiln::cli {

int cmd_onnx_ops(const Args& args) {
  check(args.positionals().empty(), "onnx-ops takes no arguments");
  for (const OnnxConverterVersions& op : onnx_converter_versions()) {
    std::cout << op.domain << " " << op.op_type << " ";
    for (size_t i = 0; i < op.since_versions.size(); ++i) std::cout << (i ? "," : "") << op.since_versions[i];
    std::cout << "\n";
  }
  return 0;
}

}  // namespace kiln::cli
