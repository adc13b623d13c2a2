// Reference kernels: where.
// TODO(owner of this family): one plain, obviously-correct kernel per op.
#include "runtime/kernels/kernel_util.h"

namespace kiln {

void register_tensor_where_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln
