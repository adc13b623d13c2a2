// Reference kernels: add, subtract, multiply, divide, power, maximum, minimum, equal, less, greater.
// TODO(owner of this family): one plain, obviously-correct kernel per op.
#include "runtime/kernels/kernel_util.h"

namespace kiln {

void register_tensor_binary_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln
