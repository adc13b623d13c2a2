// Ops: on_device and device_copy, the device annotations of Relay's device planning.
// on_device(data) pins where data lives (virtual_device, e.g. "cpu"); constrain_result
// and constrain_body say whether the constraint binds the result, the body, or both
// (Relay's defaults: body yes, result no). device_copy(data) moves data from src_device
// to dst_device. Both keep their argument's type (a tensor or a tuple) and are opaque so
// that fusion never moves computation across a device boundary. On CPU both are copies.
#include "kiln/attrs/control.h"
#include "op/op_util.h"

namespace kiln {
namespace {

template <class A>
Type identity_relation(const std::vector<Type>& args, const A&) {
  check(!args.empty() && args[0] != nullptr, "missing argument 'data'");
  return args[0];
}

}  // namespace

void register_annotation_device_ops(OpRegistry& registry) {
  registry.add("on_device")
      .describe("Constrains data to live on virtual_device; the identity when run.")
      .arg("data")
      .attrs<OnDeviceAttrs>()
      .set_relation<OnDeviceAttrs>(identity_relation<OnDeviceAttrs>)
      .set_pattern(OpPattern::kOpaque);

  registry.add("device_copy")
      .describe("Copies data from src_device to dst_device.")
      .arg("data")
      .attrs<DeviceCopyAttrs>()
      .set_relation<DeviceCopyAttrs>(identity_relation<DeviceCopyAttrs>)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
