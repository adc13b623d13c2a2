#include "runtime/module.h"

#include <dlfcn.h>

#include <mutex>

#include "kiln/support/error.h"
#include "runtime/thread_pool.h"

namespace kiln {

namespace {

std::string last_dl_error() {
  const char* text = dlerror();
  return text ? text : "unknown error";
}

// dlerror() is per thread but dlopen of one path returns one shared handle: serialising
// loads keeps two executors loading the same library from racing on its globals.
std::mutex& load_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

std::shared_ptr<const Module> Module::load(const std::string& path) {
  std::lock_guard lock(load_mutex());
  // A name without '/' would be searched on the library path instead of opened.
  const std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(open_path.c_str(), RTLD_LOCAL | RTLD_NOW);
  if (!handle) throw Error("cannot load kernel library: " + last_dl_error()).file(path);
  std::shared_ptr<const Module> module(new Module(path, handle));

  auto version = reinterpret_cast<kiln_abi_version_fn>(dlsym(handle, "kiln_abi_version"));
  if (!version) throw Error("not a kiln kernel library: it does not define kiln_abi_version()").file(path);
  const int32_t found = version();
  if (found != KILN_ABI_VERSION)
    throw Error("kernel library built for another kernel ABI")
        .file(path)
        .expected(cat("kiln_abi_version() == ", KILN_ABI_VERSION), cat(found));

  auto* api_slot = static_cast<const KilnRuntimeApi**>(dlsym(handle, "kiln_runtime_api"));
  if (!api_slot) throw Error("not a kiln kernel library: it does not define kiln_runtime_api").file(path);
  *api_slot = kiln_runtime_api_table();
  return module;
}

Module::~Module() { dlclose(handle_); }

bool Module::has_function(const std::string& name) const { return dlsym(handle_, name.c_str()) != nullptr; }

kiln_kernel_fn Module::function(const std::string& name) const {
  void* symbol = dlsym(handle_, name.c_str());
  if (!symbol) throw Error(cat("kernel library has no function '", name, "'")).file(path_);
  return reinterpret_cast<kiln_kernel_fn>(symbol);
}

}  // namespace kiln
