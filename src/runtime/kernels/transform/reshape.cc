// Reference kernels: reshape, squeeze, expand_dims.
// TODO(owner of this family): one plain, obviously-correct kernel per op.
#include "runtime/kernels/kernel_util.h"

namespace kiln {

void register_transform_reshape_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln
