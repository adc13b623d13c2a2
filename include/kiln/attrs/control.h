// Attribute declarations of the control and device-annotation ops; see kiln/attrs/reflect.h for
// the mechanism.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/attrs/reflect.h"

namespace kiln {

// unreachable: typed as a tensor of `shape` and `dtype`, throws `message` when run.
struct UnreachableAttrs {
  std::string message;
  std::vector<int64_t> shape;
  std::string dtype = "float32";

  template <class V>
  void visit(V& v) {
    v("message", message, "Error thrown when the value is computed.", kRequired);
    v("shape", shape, "Shape of the tensor it stands for; -1 for an unknown extent.", kRequired);
    v("dtype", dtype, "Dtype of the tensor it stands for.");
  }
  void validate() const;
};

// on_device; Relay's defaults (the constraint binds the body, not the result).
struct OnDeviceAttrs {
  std::string virtual_device;
  bool constrain_result = false;
  bool constrain_body = true;

  template <class V>
  void visit(V& v) {
    v("virtual_device", virtual_device, "Device the data lives on, e.g. \"cpu\"; \"\" for unconstrained.");
    v("constrain_result", constrain_result, "The constraint binds the result.");
    v("constrain_body", constrain_body, "The constraint binds the body.");
  }
};

// device_copy.
struct DeviceCopyAttrs {
  std::string src_device;
  std::string dst_device;

  template <class V>
  void visit(V& v) {
    v("src_device", src_device, "Device the data comes from.");
    v("dst_device", dst_device, "Device the data goes to.");
  }
};

}  // namespace kiln
