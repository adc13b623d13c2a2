// Reference kernels: image.resize2d.
// TODO(owner of this family): one plain, obviously-correct kernel per op.
#include "runtime/kernels/kernel_util.h"

namespace kiln {

void register_image_resize_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln
