// Reference kernels: nn.bias_add.
// TODO(owner of this family): one plain, obviously-correct kernel per op.
#include "runtime/kernels/kernel_util.h"

namespace kiln {

void register_nn_bias_add_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln
