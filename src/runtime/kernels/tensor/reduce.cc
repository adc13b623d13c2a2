// Reference kernels: sum, mean, max, min, prod, argmax, argmin.
// TODO(owner of this family): one plain, obviously-correct kernel per op.
#include "runtime/kernels/kernel_util.h"

namespace kiln {

void register_tensor_reduce_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln
