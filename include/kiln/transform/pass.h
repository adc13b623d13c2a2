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
#include <unordered_map>
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
// Relay's qnn.transform.Legalize: qnn ops become casts, integer nn.conv2d / nn.matmul and
// float arithmetic giving the qnn reference kernels' values bit for bit (legalize_qnn.cc).
IRModule legalize_qnn_pass(const IRModule& mod);
IRModule simplify_expr_pass(const IRModule& mod);
// Relay's DynamicToStatic: dyn.* calls whose shape-like operands are known now become the
// static ops (dynamic_to_static.cc).
IRModule dynamic_to_static_pass(const IRModule& mod);
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
// Horizontal fusion (Relay's CombineParallel*; src/transform/combine_parallel.h): groups of at
// least min_num_branches calls on the same data become one call on joined weights, each
// branch a part of its result. As registered passes they read the options min_num_branches
// (default 3) and, for CombineParallelDense, to_batch (default true: one nn.batch_matmul of the
// stacked weights; false: one nn.dense of the weights joined along the units).
IRModule combine_parallel_conv2d_pass(const IRModule& mod, int64_t min_num_branches = 3);
IRModule combine_parallel_dense_pass(const IRModule& mod, int64_t min_num_branches = 3, bool to_batch = true);
IRModule combine_parallel_batch_matmul_pass(const IRModule& mod, int64_t min_num_branches = 3);
// TVM's AlterOpLayout for x86: float32 nn.conv2d in NCHW{x}c blocks, the layout carried through
// the ops around it, layout_transform only where it changes, then FoldConstant (the weights'
// transforms). A function needing many transforms is left NCHW unless `force`.
struct AlterOpLayoutOptions {
  int vector_lanes = 0;  // float32 lanes that pick the blocks (choose_conv2d_layout); 0: this machine's
  bool force = false;
  bool depthwise = true;      // depthwise convolutions too
  bool narrow_inputs = true;  // NCHW1c data into blocked outputs when only the output channels fill vectors
  bool pad_channels = true;   // channel counts above the vector width it does not divide: padded to whole blocks
  bool transposes = true;     // a transpose NHWC -> NCHW gives a blocked value too
};
IRModule alter_op_layout_pass(const IRModule& mod, const AlterOpLayoutOptions& options = {});
// PackDenseWeights: float32 nn.dense / nn.matmul whose weight depends on no variable become
// nn.dense_packed on the weight laid out in panels of 32 output features (N/32, K, 32), zero-padded,
// then FoldConstant (unless `fold` is false) so the packing happens at build time.
IRModule pack_dense_weights_pass(const IRModule& mod, bool fold = true);
// WinogradConv2D: blocked float32 3x3 stride-1 convolutions with constant weights become
// nn.conv2d_winograd on nn.winograd_weight_transform(weight), then FoldConstant (unless `fold` is
// false). Rewritten only where the tiles pay for the larger weight (see winograd_conv2d.cc). A
// per-channel bias add and a relu or clip that only the convolution feeds fold into the call.
struct WinogradConv2DOptions {
  bool force = false;                       // every convolution the shape allows
  int64_t min_tiles = 17;                   // 4x4 output tiles (over the batch) at least
  int64_t channels_per_tile = 16;           // and at least one tile per this many input channels
  int64_t min_products_per_transform = 10;  // in * out / (in + out) channels at least
  bool epilogue = true;                     // fold a following per-channel bias add and relu / clip in
};
IRModule winograd_conv2d_pass(const IRModule& mod, const WinogradConv2DOptions& options = {}, bool fold = true);
// FusePointwiseDepthwise: a blocked float32 1x1 convolution, its per-channel bias and activation
// (clip, relu, swish or none) read only by a blocked depthwise convolution become one
// nn.conv2d_pointwise_depthwise, which never stores the expanded tensor; the depthwise
// convolution's per-channel bias and activation fold into it too.
// Only where the expanded plane has at least `min_plane` positions (56 x 56: measured, smaller
// planes stay in cache unfused and the fused kernel's one-block tile is slower there).
IRModule fuse_pointwise_depthwise_pass(const IRModule& mod, int64_t min_plane = 56 * 56);
// FuseLayerNorm: float32 layer normalisation spelled out op by op (mean, subtract, power, mean,
// add, sqrt, divide, multiply by gamma, add beta over the last axis) becomes nn.layer_norm.
IRModule fuse_layer_norm_pass(const IRModule& mod);
// MoveElementwiseBeforeReshape: elementwise ops after a reshape of a product (a bias along the kept
// last axis, ops whose other operands are scalars) move before it, so they fuse into the product.
IRModule move_elementwise_before_reshape_pass(const IRModule& mod);
// FuseAttention: nn.matmul(nn.softmax([add(][multiply(]nn.matmul(q, k_t)[, c)][, mask)], last axis), v)
// becomes nn.attention(q, k_t, v[, mask], scale=c), computed over blocks of query rows.
IRModule fuse_attention_pass(const IRModule& mod);
// Relay's RewriteAnnotatedOps: on_device annotations become device_copy calls wherever a
// value is read on another device than it is made on (every unannotated value is on
// `fallback_device`, e.g. "cpu"); the annotations go. A module without them is unchanged.
// As a registered pass its option "fallback_device" is a name or a DLDeviceType code (1: cpu).
IRModule rewrite_annotated_ops_pass(const IRModule& mod, const std::string& fallback_device = "cpu");
// RewriteAnnotatedOps's fallback device under `ctx` (its option, or "cpu").
std::string fallback_device_of(const PassContext& ctx);
// The canonical name of a device ("gpu" and "2" -> "cuda"); throws for an unknown name.
std::string canonical_device_name(const std::string& name);

// PlanDevices: the device of every value of `fn` (its parameters and the nodes of its body,
// nested functions aside), from the device_copy calls RewriteAnnotatedOps left, as device
// names; a value no copy constrains is on `fallback_device`.
using DeviceMap = std::unordered_map<const ExprNode*, std::string>;
DeviceMap plan_devices(const FunctionNode& fn, const std::string& fallback_device = "cpu");

}  // namespace kiln
