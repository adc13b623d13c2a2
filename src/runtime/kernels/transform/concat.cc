// Reference kernels: concatenate, split.
// TODO(owner of this family): one plain, obviously-correct kernel per op.
#include "runtime/kernels/kernel_util.h"

namespace kiln {

void register_transform_concat_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln
