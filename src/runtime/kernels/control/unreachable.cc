// Reference kernel: unreachable. Reaching it means the model took a branch kiln could not
// convert, so it reports why, with the message the importer stored.
#include "runtime/kernels/kernel_util.h"

namespace kiln {
namespace {

void unreachable_kernel(const Attrs& attrs, std::span<const NDArray>, std::span<NDArray>) {
  throw Error(attrs.get_string("message"));
}

}  // namespace

void register_control_unreachable_kernels(KernelRegistry& registry) { registry.add("unreachable", unreachable_kernel); }

}  // namespace kiln
