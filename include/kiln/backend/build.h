// build(): from a type-checked module to a compiled artifact, as relay.build does — the
// optimisation passes of the opt level, FuseOps, one generated kernel per distinct fused
// function, a graph plan in TVM's graph-executor schema with planned memory, and the params.
//
//   kiln::BuildOptions options;                      // target c, -O3
//   kiln::BuiltModel built = kiln::build(mod, params, input_names, output_names, options);
//   kiln::write_artifact(built, "model.kiln");       // graph.json, lib.so, params.bin, kernels.c
//   auto artifact = kiln::Artifact::load("model.kiln");
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kiln/codegen/c_compiler.h"
#include "kiln/ir/module.h"
#include "kiln/op/strategy.h"
#include "kiln/runtime/npy.h"
#include "kiln/transform/pass.h"

namespace kiln {

struct BuildOptions {
  Target target = Target::host();
  // The opt level (0: every op in a kernel of its own; 1 and up: operator fusion and the
  // other passes of kBuildPipeline by their levels), passes required or disabled, options,
  // instruments.
  PassContext passes = default_build_context();
  // Called after each fused function is lowered, with the count so far and the total (a
  // progress line for long compiles); may be empty.
  std::function<void(size_t lowered, size_t total)> on_lowered = nullptr;

  static PassContext default_build_context() {
    PassContext ctx;
    ctx.opt_level = 3;
    return ctx;
  }
};

// The passes build() runs, in order; each runs from its own opt level (kiln print -O N
// --print-after-all shows them one by one).
extern const std::vector<std::string> kBuildPipeline;

struct BuiltModel {
  std::string graph_json;
  std::string kernels_c;  // empty when every node runs a reference kernel
  NamedArrays params;
  size_t num_kernels = 0;
  // One line per fused function that runs on reference kernels instead, with the reason.
  std::vector<std::string> fallbacks;
};

// `mod`'s @main takes the real inputs (named by `input_names`, in order) and the parameters
// named in `params`. Throws kiln::Error for what the graph executor cannot run (control flow,
// dimensions unknown at compile time).
BuiltModel build(const IRModule& mod, const NamedArrays& params, const std::vector<std::string>& input_names,
                 const std::vector<std::string>& output_names, const BuildOptions& options = {});

// The optimised, fused module build() generates code from (what `kiln print -O N` shows).
IRModule optimize(const IRModule& mod, const PassContext& ctx);

// Writes the artifact folder: graph.json, params.bin, kernels.c and lib.so (built by the system
// C compiler through the compile cache). Written beside `dir` and renamed into place, so a
// failure leaves nothing half-written.
void write_artifact(const BuiltModel& built, const std::string& dir,
                    const codegen::CCompilerOptions& compiler = codegen::CCompilerOptions{});

}  // namespace kiln
