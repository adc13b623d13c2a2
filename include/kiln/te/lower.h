// Lowering of a schedule to a tir PrimFunc: bound inference (the region of each stage that its
// consumers read, so compute_at/cache_write allocate and compute only that), loop nests from
// the leaf iteration variables, tensor intrinsics, then simplification.
#pragma once

#include <string>
#include <vector>

#include "kiln/te/schedule.h"
#include "kiln/te/tensor.h"
#include "kiln/tir/stmt.h"

namespace kiln::te {

// `args` lists the function's buffers in ABI order: placeholders, then outputs.
tir::PrimFunc lower(const Schedule& schedule, const std::vector<Tensor>& args, const std::string& name);

// fp32 GEMM tile C[m x n] += A[m x k] * B[k x n] implemented by microkernels.h.
TensorIntrin gemm_f32_intrin(int64_t m, int64_t n, int64_t k);

}  // namespace kiln::te
