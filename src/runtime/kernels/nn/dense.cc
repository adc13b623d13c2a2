// Reference kernels: nn.dense, nn.matmul, nn.batch_matmul.
// TODO(owner of this family): one plain, obviously-correct kernel per op.
#include "runtime/kernels/kernel_util.h"

namespace kiln {

void register_nn_dense_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln
