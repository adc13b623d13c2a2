// tir -> C source following the kernel ABI (include/kiln/runtime/kernel_abi.h): one exported
// `int32_t name(void* const* args)` per PrimFunc, parameters as restrict-qualified typed pointers,
// vectorised loops marked for the C compiler, parallel loops lifted into static task functions
// run through kiln_runtime_api->parallel_for.
#pragma once

#include <string>
#include <vector>

#include "kiln/tir/stmt.h"

namespace kiln::codegen {

// The whole kernels.c: preamble (kiln_runtime_api, kiln_abi_version, helpers) and the functions.
// Throws kiln::Error for names that are not C identifiers, duplicates, and unsupported dtypes.
std::string generate_c(const std::vector<tir::PrimFunc>& funcs);

}  // namespace kiln::codegen
