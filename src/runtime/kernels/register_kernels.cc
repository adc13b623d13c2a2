// Registers the reference kernels of every op family of kiln/runtime/op_families.h on first use.
#include <algorithm>

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

void KernelRegistry::add_output_fn(const std::string& name, OutputFn fn) {
  auto it = kernels_.find(name);
  check(it != kernels_.end(), "output function for '", name, "', which has no reference kernel");
  check(output_fns_.emplace(name, fn).second, "output function for '", name, "' registered twice");
  it->second = [kernel = std::move(it->second), fn = std::move(fn)](const Attrs& attrs, std::span<const NDArray> in,
                                                                    std::span<NDArray> out) {
    if (std::any_of(out.begin(), out.end(), [](const NDArray& o) { return !o.defined(); })) {
      std::vector<OutputSpec> specs = fn(attrs, in);
      check(specs.size() == out.size(), "output function gives ", specs.size(), " outputs for ", out.size());
      for (size_t k = 0; k < out.size(); ++k)
        if (!out[k].defined()) out[k] = NDArray::empty(specs[k].shape, specs[k].dtype);
    }
    kernel(attrs, in, out);
  };
}

bool KernelRegistry::sizes_outputs(const std::string& name) const {
  return output_fns_.count(name) > 0 || name.rfind("dyn.", 0) == 0;
}

const OutputFn* KernelRegistry::output_fn(const std::string& name) const {
  auto it = output_fns_.find(name);
  return it == output_fns_.end() ? nullptr : &it->second;
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
