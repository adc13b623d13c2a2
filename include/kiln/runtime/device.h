// Devices of the graph executor. A device is an object that owns memory: it allocates the
// storage blocks of the entries placed on it and copies tensors into its memory (from the
// host or from another device's). The executor owns one device per device_index of its
// graph, so two devices never share a storage block; a `__copy` node is the only way data
// moves between them. Devices are named as Relay names them ("cpu", "cuda") and numbered
// in graph.json with TVM's DLDeviceType codes (cpu = 1, cuda = 2, ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "kiln/runtime/ndarray.h"

namespace kiln {

// The DLDeviceType code of a device name ("cpu" -> 1, "cuda" -> 2; "1" -> 1); throws
// kiln::Error listing the known names.
int64_t device_type_code(std::string_view name);
// The name of a DLDeviceType code ("cpu" for 1), or "device<N>" for a code kiln does not name.
std::string device_type_name(int64_t code);

class Device {
 public:
  explicit Device(std::string name) : name_(std::move(name)) {}
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const std::string& name() const { return name_; }
  // A zero-filled block of `bytes` bytes in this device's memory.
  NDArray allocate(size_t bytes);
  // Copies `from` (host memory or another device's) into `to`, a tensor in this device's
  // memory of the same size.
  void copy_in(const NDArray& from, NDArray& to);
  // A host copy of `from`, a tensor in this device's memory.
  NDArray copy_out(const NDArray& from);

  size_t num_allocations() const { return num_allocations_; }
  size_t num_copies() const { return num_copies_; }  // copies in and out
  size_t bytes_copied() const { return bytes_copied_; }

 protected:
  virtual NDArray allocate_block(size_t bytes) = 0;
  virtual void copy_bytes(const void* from, void* to, size_t bytes) = 0;

 private:
  std::string name_;
  size_t num_allocations_ = 0, num_copies_ = 0, bytes_copied_ = 0;
};

// A device whose memory is host memory of its own: each block is an allocation of its own.
class CpuDevice : public Device {
 public:
  explicit CpuDevice(std::string name = "cpu") : Device(std::move(name)) {}

 protected:
  NDArray allocate_block(size_t bytes) override;
  void copy_bytes(const void* from, void* to, size_t bytes) override;
};

}  // namespace kiln
