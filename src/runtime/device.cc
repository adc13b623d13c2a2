#include "kiln/runtime/device.h"

#include <array>
#include <charconv>
#include <cstring>
#include <utility>

#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {
namespace {

// DLPack's DLDeviceType codes, by the names Relay gives them.
constexpr std::array<std::pair<std::string_view, int64_t>, 11> kDeviceTypes = {{{"cpu", 1},
                                                                                {"llvm", 1},
                                                                                {"cuda", 2},
                                                                                {"gpu", 2},
                                                                                {"cuda_host", 3},
                                                                                {"opencl", 4},
                                                                                {"vulkan", 7},
                                                                                {"metal", 8},
                                                                                {"rocm", 10},
                                                                                {"ext_dev", 12},
                                                                                {"hexagon", 16}}};

}  // namespace

int64_t device_type_code(std::string_view name) {
  for (const auto& [known, code] : kDeviceTypes)
    if (known == name) return code;
  int64_t code = 0;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), code);
  if (error == std::errc() && end == name.data() + name.size() && code > 0) return code;
  std::string names;
  for (const auto& entry : kDeviceTypes) names += (names.empty() ? "" : ", ") + std::string(entry.first);
  throw std::move(Error("unknown device").expected("one of " + names + " or a DLDeviceType code", cat("'", name, "'")));
}

std::string device_type_name(int64_t code) {
  for (const auto& [known, known_code] : kDeviceTypes)
    if (known_code == code) return std::string(known);
  return cat("device", code);
}

NDArray Device::allocate(size_t bytes) {
  ++num_allocations_;
  return allocate_block(bytes);
}

void Device::copy_in(const NDArray& from, NDArray& to) {
  check(from.nbytes() == to.nbytes(), "device ", name_, ": copying ", from.nbytes(), " bytes into a tensor of ",
        to.nbytes());
  ++num_copies_;
  bytes_copied_ += from.nbytes();
  if (from.nbytes()) copy_bytes(from.raw(), to.raw(), from.nbytes());
}

NDArray Device::copy_out(const NDArray& from) {
  NDArray host = NDArray::empty(from.shape(), from.dtype());
  ++num_copies_;
  bytes_copied_ += from.nbytes();
  if (from.nbytes()) copy_bytes(from.raw(), host.raw(), from.nbytes());
  return host;
}

NDArray CpuDevice::allocate_block(size_t bytes) { return NDArray::empty({static_cast<int64_t>(bytes)}, DType::kUInt8); }

void CpuDevice::copy_bytes(const void* from, void* to, size_t bytes) { std::memcpy(to, from, bytes); }

}  // namespace kiln
