#include "kiln/backend/build.h"

#include <filesystem>

#include "backend/graph_codegen.h"
#include "backend/memory_plan.h"
#include "kiln/codegen/codegen_c.h"
#include "kiln/ir/type_infer.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/interrupt.h"
#include "kiln/support/strings.h"
#include "kiln/transform/pass.h"
#include "runtime/params_io.h"

namespace kiln {

namespace fs = std::filesystem;

// Relay's order: inference-only ops go first, so that what they leave (multiplies by constant
// per-channel scales, duplicated shape arithmetic) can be merged, folded into weights and
// simplified before fusion. Parallel convolutions and matmuls are combined after CSE and
// before FoldConstant, which joins their constant weights. PrecomputePrune comes last before
// fusion, as in NNVM's build: what the passes before it made of the parameters is computed
// once, at build time, which includes the weights AlterOpLayout lays out in blocks (after
// FoldScaleAxis, whose folds need NCHW / OIHW convolutions). RewriteAnnotatedOps turns
// on_device annotations into device_copy calls right before fusion, as Relay's build does (a
// no-op without annotations).
const std::vector<std::string> kBuildPipeline = {"InferType",
                                                 "Inline",
                                                 "RemoveUnusedFunctions",
                                                 "QnnLegalize",
                                                 "SimplifyInference",
                                                 "DeadCodeElimination",
                                                 "EliminateCommonSubexpr",
                                                 "CombineParallelConv2D",
                                                 "CombineParallelDense",
                                                 "CombineParallelBatchMatmul",
                                                 "DynamicToStatic",
                                                 "FoldConstant",
                                                 "FoldScaleAxis",
                                                 "SimplifyExpr",
                                                 "FuseLayerNorm",
                                                 "FuseAttention",
                                                 "AlterOpLayout",
                                                 "WinogradConv2D",
                                                 "FusePointwiseDepthwise",
                                                 "PackDenseWeights",
                                                 "MoveElementwiseBeforeReshape",
                                                 "PrecomputePrune",
                                                 "RewriteAnnotatedOps",
                                                 "FuseOps"};

IRModule optimize(const IRModule& mod, const PassContext& ctx) {
  check(ctx.opt_level >= 0 && ctx.opt_level <= 3, "opt level must be 0 to 3, found ", ctx.opt_level);
  register_builtin_passes();
  return Sequential(kBuildPipeline)(mod, ctx);
}

BuiltModel build(const IRModule& mod, const NamedArrays& params, const std::vector<std::string>& input_names,
                 const std::vector<std::string>& output_names, const BuildOptions& options) {
  PassContext ctx = options.passes;
  ctx.params = params;
  IRModule fused = optimize(mod, ctx);
  backend::GraphCodegenResult graph =
      backend::generate_graph(*fused.lookup("main"), params, input_names, output_names, options.target,
                              fallback_device_of(ctx), options.on_lowered);
  backend::plan_memory(graph.plan);
  BuiltModel built;
  built.graph_json = graph_to_json(graph.plan);
  if (!graph.funcs.empty()) built.kernels_c = codegen::generate_c(graph.funcs);
  built.params = std::move(graph.params);
  built.num_kernels = graph.funcs.size();
  built.fallbacks = std::move(graph.fallbacks);
  return built;
}

void write_artifact(const BuiltModel& built, const std::string& dir, const codegen::CCompilerOptions& compiler) {
  fs::path target = fs::absolute(dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  std::error_code exists_ec;
  if (fs::exists(target, exists_ec) && !fs::exists(target / "graph.json", exists_ec))
    throw Error("the output folder exists and is not a kiln artifact; not overwriting it").file(target.string());
  fs::create_directories(target.parent_path());
  remove_partials_of_dead_processes(target.parent_path().string());
  const PartialPath staging(partial_name_for(target.string()));
  fs::create_directories(staging.path());
  write_file((fs::path(staging.path()) / "graph.json").string(), built.graph_json);
  write_params((fs::path(staging.path()) / "params.bin").string(), built.params);
  if (!built.kernels_c.empty()) codegen::CCompiler(compiler).compile_into(built.kernels_c, staging.path());
  std::error_code ec;
  fs::remove_all(target, ec);
  fs::rename(staging.path(), target);
}

}  // namespace kiln
