// Reference kernels: nn.pad.
// TODO(owner of this family): one plain, obviously-correct kernel per op.
#include "runtime/kernels/kernel_util.h"

namespace kiln {

void register_nn_pad_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln
