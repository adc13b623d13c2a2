// Reference kernels: nn.conv2d, nn.conv2d_transpose.
// TODO(owner of this family): one plain, obviously-correct kernel per op.
#include "runtime/kernels/kernel_util.h"

namespace kiln {

void register_nn_conv_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln
