// Registers the reference kernels of every op family of kiln/runtime/op_families.h on first use.
#include "kiln/runtime/kernel_registry.h"
#include "kiln/runtime/op_families.h"
#include "kiln/support/error.h"

namespace kiln {

#define KILN_DECLARE_KERNELS(family) void register_##family##_kernels(KernelRegistry& registry);
KILN_OP_FAMILIES(KILN_DECLARE_KERNELS)
#undef KILN_DECLARE_KERNELS

const KernelRegistry& KernelRegistry::global() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
#define KILN_REGISTER_KERNELS(family) register_##family##_kernels(r);
    KILN_OP_FAMILIES(KILN_REGISTER_KERNELS)
#undef KILN_REGISTER_KERNELS
    return r;
  }();
  return registry;
}

void KernelRegistry::add(const std::string& name, KernelFn fn) {
  check(!kernels_.count(name), "reference kernel '", name, "' registered twice");
  kernels_[name] = std::move(fn);
}

const KernelFn* KernelRegistry::find(const std::string& name) const {
  auto it = kernels_.find(name);
  return it == kernels_.end() ? nullptr : &it->second;
}

const KernelFn& KernelRegistry::get(const std::string& name) const {
  const KernelFn* fn = find(name);
  if (!fn) throw Error("no reference kernel").op(name);
  return *fn;
}

}  // namespace kiln
