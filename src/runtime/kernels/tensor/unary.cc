// Reference kernels: sigmoid, tanh, exp, log, sqrt, rsqrt, erf, abs, negative, clip, cast.
// TODO(owner of this family): one plain, obviously-correct kernel per op.
#include "runtime/kernels/kernel_util.h"

namespace kiln {

void register_tensor_unary_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln
