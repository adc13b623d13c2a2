// Reference kernel: unreachable. Reaching it means the model took a branch kiln could not
// convert, so it reports why, with the message the importer stored.
#include "kiln/attrs/control.h"
#include "runtime/kernels/kernel_util.h"

namespace kiln {
namespace {

void unreachable_kernel(const UnreachableAttrs& attrs, std::span<const NDArray>, std::span<NDArray>) {
  throw Error(attrs.message);
}

}  // namespace

void register_control_unreachable_kernels(KernelRegistry& registry) {
  registry.add<UnreachableAttrs>("unreachable", unreachable_kernel);
}

}  // namespace kiln
