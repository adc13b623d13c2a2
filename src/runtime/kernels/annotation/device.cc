// Reference kernels: on_device, device_copy.
// TODO(owner of this family): one plain, obviously-correct kernel per op.
#include "runtime/kernels/kernel_util.h"

namespace kiln {

void register_annotation_device_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln
