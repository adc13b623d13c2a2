// A kernel library (lib.so) loaded with dlopen. Loading checks that it speaks the kernel
// ABI of this runtime and installs the runtime's callback table into it.
#pragma once

#include <memory>
#include <string>

#include "kiln/runtime/kernel_abi.h"

namespace kiln {

class Module {
 public:
  // Throws kiln::Error naming the file when it cannot be opened, lacks kiln_abi_version or
  // kiln_runtime_api, or was built for another ABI version.
  static std::shared_ptr<const Module> load(const std::string& path);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The exported kernel `name`; throws kiln::Error naming the library and the function.
  kiln_kernel_fn function(const std::string& name) const;
  bool has_function(const std::string& name) const;
  const std::string& path() const { return path_; }

 private:
  Module(std::string path, void* handle) : path_(std::move(path)), handle_(handle) {}

  std::string path_;
  void* handle_;
};

}  // namespace kiln
