// Reference kernels: transpose.
// TODO(owner of this family): one plain, obviously-correct kernel per op.
#include "runtime/kernels/kernel_util.h"

namespace kiln {

void register_transform_transpose_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln
