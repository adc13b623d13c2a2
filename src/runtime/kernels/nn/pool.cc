// Reference kernels: nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d, nn.global_max_pool2d.
// TODO(owner of this family): one plain, obviously-correct kernel per op.
#include "runtime/kernels/kernel_util.h"

namespace kiln {

void register_nn_pool_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln
