// Passes: named module-to-module transformations, run one by one or in sequence.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kiln/ir/module.h"

namespace kiln {

struct Pass {
  std::string name;
  std::function<IRModule(const IRModule&)> run;
};

class PassRegistry {
 public:
  static PassRegistry& global();
  void add(Pass pass);
  const Pass& get(const std::string& name) const;  // throws, listing the known passes
  std::vector<std::string> names() const;

 private:
  std::map<std::string, Pass> passes_;
};

// Registers every built-in pass (idempotent).
void register_builtin_passes();
IRModule run_passes(const IRModule& mod, const std::vector<std::string>& names);

// Individual passes (one file each under src/transform/).
IRModule infer_type_pass(const IRModule& mod);
IRModule remove_unused_functions_pass(const IRModule& mod);
IRModule inline_pass(const IRModule& mod);
IRModule simplify_inference_pass(const IRModule& mod);
IRModule fold_constant_pass(const IRModule& mod);
// Groups ops into Primitive=1 functions (Relay's FuseOps). fuse=false puts every op in a
// function of its own (Relay's fuse_opt_level=0).
IRModule fuse_ops_pass(const IRModule& mod, bool fuse = true);

}  // namespace kiln
