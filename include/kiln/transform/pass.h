// Passes and the pass manager. A pass is a named module-to-module transformation with what
// the manager needs to schedule it: the opt level from which a pipeline runs it, the passes
// it requires before it, and whether its result keeps every node's type valid. A
// PassContext carries the opt level, passes required or disabled by the user, per-pass
// options and instruments (timing, printing); Sequential runs a declared pipeline under a
// context, as Relay's transform.Sequential and NNVM's OPT_PASS_LEVEL table do.
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kiln/ir/module.h"
#include "kiln/runtime/attrs.h"
#include "kiln/runtime/npy.h"

namespace kiln {

struct PassContext;

struct PassInfo {
  std::string name;
  int opt_level = 0;                  // a pipeline runs it when the context's level is at least this
  std::vector<std::string> required;  // passes a pipeline runs before it if they have not run yet
  bool keeps_types = true;            // false: types are inferred again before the next pass
};

struct Pass {
  PassInfo info;
  std::function<IRModule(const IRModule&, const PassContext&)> run;
};

// Sees every pass a pipeline runs.
class PassInstrument {
 public:
  virtual ~PassInstrument() = default;
  virtual void after_pass(const PassInfo& info, const IRModule& result, double seconds) = 0;
};

// Prints each pass's name, time and the module after it (kiln print --print-after-all).
std::shared_ptr<PassInstrument> print_after_each_pass(std::ostream& out);

// Records how long each pass took, in the order they ran.
class PassTimings : public PassInstrument {
 public:
  void after_pass(const PassInfo& info, const IRModule& result, double seconds) override;
  const std::vector<std::pair<std::string, double>>& timings() const { return timings_; }

 private:
  std::vector<std::pair<std::string, double>> timings_;
};

struct PassContext {
  int opt_level = 2;
  std::set<std::string> required_passes;  // run whatever their opt level
  std::set<std::string> disabled_passes;  // never run
  std::map<std::string, Attrs> options;   // per pass, e.g. options["FuseOps"] = {{"fuse", false}}
  std::vector<std::shared_ptr<PassInstrument>> instruments;
  // Values of @main's parameters known at build time, by name (relay.build's params): what
  // PrecomputePrune binds and evaluates.
  NamedArrays params;

  // Whether a pipeline under this context runs the pass.
  bool enabled(const PassInfo& info) const;
  // The options given for a pass (empty when none).
  const Attrs& options_of(const std::string& pass) const;
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

// A declared pipeline. Passes the context does not enable are skipped; a pass's required
// passes run first if they have not run yet; types are inferred again only after a pass
// that does not keep them. An error names the pass it came from.
class Sequential {
 public:
  explicit Sequential(std::vector<std::string> passes);
  IRModule operator()(const IRModule& mod, const PassContext& ctx = {}) const;

 private:
  std::vector<std::string> passes_;
};

// Runs the named passes in order, each whatever its opt level (kiln print --pass NAME).
IRModule run_passes(const IRModule& mod, const std::vector<std::string>& names, const PassContext& ctx = {});

// The module with `fn` applied to each function; an error names the function it came from.
IRModule map_functions(const IRModule& mod, const std::function<Function(const Function&)>& fn);

// Individual passes (one file each under src/transform/).
IRModule infer_type_pass(const IRModule& mod);
IRModule remove_unused_functions_pass(const IRModule& mod);
IRModule inline_pass(const IRModule& mod);
IRModule simplify_inference_pass(const IRModule& mod);
IRModule simplify_expr_pass(const IRModule& mod);
IRModule fold_constant_pass(const IRModule& mod);
// NNVM's PrecomputePrune: `params` are bound into @main and everything that depends on
// parameters and constants alone is evaluated now, so that only what depends on the inputs
// is left to run.
IRModule precompute_prune_pass(const IRModule& mod, const NamedArrays& params);
IRModule dead_code_elimination_pass(const IRModule& mod);
IRModule eliminate_common_subexpr_pass(const IRModule& mod);
// Groups ops into Primitive=1 functions (Relay's FuseOps). fuse=false puts every op in a
// function of its own (Relay's fuse_opt_level=0). As a registered pass it fuses from opt
// level 1, or as its option "fuse" says.
IRModule fuse_ops_pass(const IRModule& mod, bool fuse = true);
// Relay's FoldScaleAxis: per-channel constant multiplies move into conv2d / dense weights
// (backward, then forward), then FoldConstant evaluates the new weights.
IRModule fold_scale_axis_pass(const IRModule& mod);
IRModule backward_fold_scale_axis_pass(const IRModule& mod);  // without FoldConstant
IRModule forward_fold_scale_axis_pass(const IRModule& mod);   // without FoldConstant

}  // namespace kiln
