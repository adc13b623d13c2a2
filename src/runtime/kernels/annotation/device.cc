// Reference kernels: on_device, device_copy. The reference runtime has one device (the
// CPU), so both copy each input (a tuple argument arrives flattened) to its output.
#include <cstring>

#include "kiln/attrs/control.h"
#include "runtime/kernels/kernel_util.h"

namespace kiln {
namespace {

template <class A>
void copy_through(const A&, std::span<const NDArray> in, std::span<NDArray> out) {
  check(in.size() == out.size(), "device annotation: ", in.size(), " inputs but ", out.size(), " outputs");
  for (size_t i = 0; i < in.size(); ++i) {
    check(in[i].nbytes() == out[i].nbytes(), "device annotation: output ", i, " has ", out[i].nbytes(),
          " bytes for an input of ", in[i].nbytes());
    if (in[i].nbytes()) std::memcpy(out[i].raw(), in[i].raw(), in[i].nbytes());
  }
}

}  // namespace

void register_annotation_device_kernels(KernelRegistry& registry) {
  registry.add<OnDeviceAttrs>("on_device", copy_through<OnDeviceAttrs>);
  registry.add<DeviceCopyAttrs>("device_copy", copy_through<DeviceCopyAttrs>);
}

}  // namespace kiln
