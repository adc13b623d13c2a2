#include "kiln/transform/pass.h"

#include <algorithm>
#include <chrono>
#include <ostream>

#include "kiln/ir/printer.h"
#include "kiln/ir/type_infer.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

namespace {

class PrintAfterEachPass : public PassInstrument {
 public:
  explicit PrintAfterEachPass(std::ostream& out) : out_(out) {}
  void after_pass(const PassInfo& info, const IRModule& result, double seconds) override {
    out_ << "// after " << info.name << " (" << seconds * 1e3 << " ms)\n" << print_module(result) << "\n";
  }

 private:
  std::ostream& out_;
};

// Runs one pass under the context: timed, reported to the instruments, and with errors
// naming the pass.
IRModule run_one(const Pass& pass, const IRModule& mod, const PassContext& ctx) {
  auto start = std::chrono::steady_clock::now();
  IRModule out;
  try {
    out = pass.run(mod, ctx);
  } catch (const Error& e) {
    throw Error(cat("pass ", pass.info.name, ": ", e.what()));
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& instrument : ctx.instruments) instrument->after_pass(pass.info, out, seconds);
  return out;
}

// A pass that needs no context.
Pass simple_pass(PassInfo info, IRModule (*fn)(const IRModule&)) {
  return {std::move(info), [fn](const IRModule& m, const PassContext&) { return fn(m); }};
}

// FuseOps fuses from opt level 1 (below, one op per function), unless its option says.
IRModule fuse_ops_in_context(const IRModule& mod, const PassContext& ctx) {
  const AttrValue* fuse = ctx.options_of("FuseOps").find("fuse");
  return fuse_ops_pass(mod, fuse ? fuse->as_bool() : ctx.opt_level >= 1);
}

// The options given for one of the CombineParallel* passes, each a name it reads.
const Attrs& combine_options(const PassContext& ctx, const std::string& pass, const std::vector<std::string>& names) {
  const Attrs& options = ctx.options_of(pass);
  for (const auto& entry : options.entries())
    if (std::find(names.begin(), names.end(), entry.first) == names.end())
      throw std::move(Error(cat("unknown option of pass ", pass)).expected("one of " + join(names), entry.first));
  return options;
}

// min_num_branches, Relay's default 3 when not given.
int64_t min_num_branches_of(const Attrs& options) {
  const AttrValue* n = options.find("min_num_branches");
  return n ? n->as_int() : 3;
}

IRModule combine_parallel_conv2d_in_context(const IRModule& mod, const PassContext& ctx) {
  const Attrs& options = combine_options(ctx, "CombineParallelConv2D", {"min_num_branches"});
  return combine_parallel_conv2d_pass(mod, min_num_branches_of(options));
}

IRModule combine_parallel_dense_in_context(const IRModule& mod, const PassContext& ctx) {
  const Attrs& options = combine_options(ctx, "CombineParallelDense", {"min_num_branches", "to_batch"});
  const AttrValue* to_batch = options.find("to_batch");
  return combine_parallel_dense_pass(mod, min_num_branches_of(options), to_batch ? to_batch->as_bool() : true);
}

IRModule combine_parallel_batch_matmul_in_context(const IRModule& mod, const PassContext& ctx) {
  const Attrs& options = combine_options(ctx, "CombineParallelBatchMatmul", {"min_num_branches"});
  return combine_parallel_batch_matmul_pass(mod, min_num_branches_of(options));
}

}  // namespace

std::shared_ptr<PassInstrument> print_after_each_pass(std::ostream& out) {
  return std::make_shared<PrintAfterEachPass>(out);
}

void PassTimings::after_pass(const PassInfo& info, const IRModule&, double seconds) {
  timings_.emplace_back(info.name, seconds);
}

bool PassContext::enabled(const PassInfo& info) const {
  if (disabled_passes.count(info.name)) return false;
  return required_passes.count(info.name) || opt_level >= info.opt_level;
}

const Attrs& PassContext::options_of(const std::string& pass) const {
  static const Attrs none;
  auto it = options.find(pass);
  return it == options.end() ? none : it->second;
}

PassRegistry& PassRegistry::global() {
  static PassRegistry registry;
  return registry;
}

void PassRegistry::add(Pass pass) {
  std::string name = pass.info.name;
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

// The opt levels follow NNVM's OPT_PASS_LEVEL table where it has the pass, Relay's otherwise.
void register_builtin_passes() {
  static const bool done = [] {
    PassRegistry& r = PassRegistry::global();
    r.add(simple_pass({"InferType", 0, {}, true}, infer_type_pass));
    r.add(simple_pass({"RemoveUnusedFunctions", 1, {}, true}, remove_unused_functions_pass));
    r.add(simple_pass({"Inline", 1, {}, false}, inline_pass));
    // These three type what they build before returning it.
    r.add(simple_pass({"SimplifyInference", 0, {"InferType"}, true}, simplify_inference_pass));
    // Level 0: qnn.matmul has no compute, so even -O0 builds need the legal form.
    r.add(simple_pass({"QnnLegalize", 0, {"InferType"}, true}, legalize_qnn_pass));
    r.add(simple_pass({"FoldConstant", 1, {"InferType"}, true}, fold_constant_pass));
    r.add({{"PrecomputePrune", 1, {"InferType"}, true},
           [](const IRModule& m, const PassContext& ctx) { return precompute_prune_pass(m, ctx.params); }});
    r.add({{"FuseOps", 0, {"InferType"}, true}, fuse_ops_in_context});
    r.add(simple_pass({"FoldScaleAxis", 3, {"InferType"}, true}, fold_scale_axis_pass));
    // Relay runs these from opt level 4; kiln's levels stop at 3.
    r.add({{"CombineParallelConv2D", 3, {"InferType"}, true}, combine_parallel_conv2d_in_context});
    r.add({{"CombineParallelDense", 3, {"InferType"}, true}, combine_parallel_dense_in_context});
    r.add({{"CombineParallelBatchMatmul", 3, {"InferType"}, true}, combine_parallel_batch_matmul_in_context});
    // Options: "vector_lanes" (float32 lanes of the target's vectors) picks the blocks, "force"
    // rewrites even where the boundaries cost more than the blocked convs save, "depthwise"
    // (true unless given) whether depthwise convolutions go blocked, "narrow_inputs" (true unless
    // given) whether convolutions with too few input channels for a block read NCHW1c,
    // "pad_channels" (true unless given) whether channel counts the block does not divide are
    // padded to whole blocks, "transposes" (true unless given) whether a transpose NHWC -> NCHW
    // gives a blocked value.
    r.add({{"AlterOpLayout", 3, {"InferType"}, true}, [](const IRModule& m, const PassContext& ctx) {
             const Attrs& options = ctx.options_of("AlterOpLayout");
             AlterOpLayoutOptions o;
             if (const AttrValue* lanes = options.find("vector_lanes"))
               o.vector_lanes = static_cast<int>(lanes->as_int());
             if (const AttrValue* force = options.find("force")) o.force = force->as_bool();
             if (const AttrValue* depthwise = options.find("depthwise")) o.depthwise = depthwise->as_bool();
             if (const AttrValue* narrow = options.find("narrow_inputs")) o.narrow_inputs = narrow->as_bool();
             if (const AttrValue* pad = options.find("pad_channels")) o.pad_channels = pad->as_bool();
             if (const AttrValue* transposes = options.find("transposes")) o.transposes = transposes->as_bool();
             return alter_op_layout_pass(m, o);
           }});
    r.add(simple_pass({"FuseLayerNorm", 2, {"InferType"}, true}, fuse_layer_norm_pass));
    r.add(simple_pass({"MoveElementwiseBeforeReshape", 2, {"InferType"}, true}, move_elementwise_before_reshape_pass));
    r.add(simple_pass({"FuseAttention", 2, {"InferType"}, true}, fuse_attention_pass));
    // Options: "force" (every 3x3 stride-1 blocked convolution), "min_tiles", "channels_per_tile",
    // "min_products_per_transform", "epilogue" (fold bias and relu / clip into the call).
    r.add({{"WinogradConv2D", 3, {"InferType"}, true}, [](const IRModule& m, const PassContext& ctx) {
             const Attrs& options = ctx.options_of("WinogradConv2D");
             WinogradConv2DOptions o;
             if (const AttrValue* force = options.find("force")) o.force = force->as_bool();
             if (const AttrValue* tiles = options.find("min_tiles")) o.min_tiles = tiles->as_int();
             if (const AttrValue* per = options.find("channels_per_tile")) o.channels_per_tile = per->as_int();
             if (const AttrValue* products = options.find("min_products_per_transform"))
               o.min_products_per_transform = products->as_int();
             if (const AttrValue* epilogue = options.find("epilogue")) o.epilogue = epilogue->as_bool();
             return winograd_conv2d_pass(m, o);
           }});
    // Option: "min_plane" (positions of the expanded tensor's plane, 3136 unless given).
    r.add({{"FusePointwiseDepthwise", 3, {"InferType"}, true}, [](const IRModule& m, const PassContext& ctx) {
             const AttrValue* min_plane = ctx.options_of("FusePointwiseDepthwise").find("min_plane");
             return min_plane ? fuse_pointwise_depthwise_pass(m, min_plane->as_int())
                              : fuse_pointwise_depthwise_pass(m);
           }});
    r.add({{"PackDenseWeights", 3, {"InferType"}, true},
           [](const IRModule& m, const PassContext&) { return pack_dense_weights_pass(m); }});
    r.add(simple_pass({"DeadCodeElimination", 1, {}, false}, dead_code_elimination_pass));
    r.add(simple_pass({"EliminateCommonSubexpr", 2, {}, false}, eliminate_common_subexpr_pass));
    r.add(simple_pass({"SimplifyExpr", 2, {"InferType"}, true}, simplify_expr_pass));
    r.add(simple_pass({"DynamicToStatic", 1, {"InferType"}, true}, dynamic_to_static_pass));
    // Opt level 0: a no-op without annotations, and annotated models need it to run at all.
    r.add({{"RewriteAnnotatedOps", 0, {}, true}, [](const IRModule& m, const PassContext& ctx) {
             return rewrite_annotated_ops_pass(m, fallback_device_of(ctx));
           }});
    return true;
  }();
  (void)done;
}

Sequential::Sequential(std::vector<std::string> passes) : passes_(std::move(passes)) {}

IRModule Sequential::operator()(const IRModule& mod, const PassContext& ctx) const {
  const PassRegistry& registry = PassRegistry::global();
  const Pass& infer = registry.get("InferType");
  std::set<std::string> done;
  bool typed = false;
  IRModule out = mod;
  auto run = [&](const Pass& pass) {
    bool types_needed = pass.info.name != "InferType";
    if (types_needed && !typed) out = run_one(infer, out, ctx);
    out = run_one(pass, out, ctx);
    typed = pass.info.name == "InferType" || pass.info.keeps_types;
    done.insert(pass.info.name);
  };
  for (const std::string& name : passes_) {
    const Pass& pass = registry.get(name);
    if (!ctx.enabled(pass.info)) continue;
    for (const std::string& required : pass.info.required)
      if (!done.count(required) && !(required == "InferType" && typed)) run(registry.get(required));
    run(pass);
  }
  return typed ? out : run_one(infer, out, ctx);
}

IRModule run_passes(const IRModule& mod, const std::vector<std::string>& names, const PassContext& ctx) {
  IRModule out = mod;
  for (const auto& name : names) out = run_one(PassRegistry::global().get(name), out, ctx);
  return out;
}

IRModule map_functions(const IRModule& mod, const std::function<Function(const Function&)>& fn) {
  IRModule out;
  for (const auto& [name, f] : mod.functions()) {
    try {
      out.add(name, fn(f));
    } catch (const Error& e) {
      throw Error(cat("@", name, ": ", e.what()));
    }
  }
  return out;
}

}  // namespace kiln
