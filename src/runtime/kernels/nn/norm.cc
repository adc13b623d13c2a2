// Reference kernels: nn.batch_norm, nn.layer_norm.
// TODO(owner of this family): one plain, obviously-correct kernel per op.
#include "runtime/kernels/kernel_util.h"

namespace kiln {

void register_nn_norm_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln
