#include "kiln/transform/pass.h"

#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

PassRegistry& PassRegistry::global() {
  static PassRegistry registry;
  return registry;
}

void PassRegistry::add(Pass pass) {
  std::string name = pass.name;
  passes_[name] = std::move(pass);
}

const Pass& PassRegistry::get(const std::string& name) const {
  auto it = passes_.find(name);
  if (it == passes_.end()) throw std::move(Error("unknown pass").expected("one of " + join(names()), "'" + name + "'"));
  return it->second;
}

std::vector<std::string> PassRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& entry : passes_) out.push_back(entry.first);
  return out;
}

void register_builtin_passes() {
  static const bool done = [] {
    PassRegistry& r = PassRegistry::global();
    r.add({"InferType", infer_type_pass});
    r.add({"RemoveUnusedFunctions", remove_unused_functions_pass});
    r.add({"Inline", inline_pass});
    r.add({"SimplifyInference", simplify_inference_pass});
    r.add({"FoldConstant", fold_constant_pass});
    r.add({"FuseOps", [](const IRModule& m) { return fuse_ops_pass(m); }});
    return true;
  }();
  (void)done;
}

IRModule run_passes(const IRModule& mod, const std::vector<std::string>& names) {
  IRModule out = mod;
  for (const auto& name : names) out = PassRegistry::global().get(name).run(out);
  return out;
}

}  // namespace kiln
