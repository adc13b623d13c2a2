// Reference kernels: nn.softmax, nn.log_softmax.
// TODO(owner of this family): one plain, obviously-correct kernel per op.
#include "runtime/kernels/kernel_util.h"

namespace kiln {

void register_nn_softmax_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln
