// Reference kernels: nn.relu, nn.leaky_relu, nn.prelu, nn.dropout.
// TODO(owner of this family): one plain, obviously-correct kernel per op.
#include "runtime/kernels/kernel_util.h"

namespace kiln {

void register_nn_activation_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln
