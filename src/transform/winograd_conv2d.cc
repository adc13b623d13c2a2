// WinogradConv2D: blocked float32 3x3 convolutions with stride 1, dilation 1 and one group whose
// weight depends on no variable run as Winograd's F(4x4, 3x3):
//   nn.conv2d(x, W, data_layout="NCHW{x}c", kernel_layout="OIHW{x}i{y}o")
//     -> nn.conv2d_winograd(x, nn.winograd_weight_transform(W, out_channels=K), channels=K, ...)
// with U evaluated at once when W is a constant (the rest FoldConstant), so the params hold U = G W G^T and only data
// and output are transformed at run time (src/op/nn/conv2d_winograd.cc). It runs after AlterOpLayout, whose blocked
// layout the convolution keeps.
//
// Epilogue (option `epilogue`, on by default): what follows the rewritten convolution and only it
// reads folds into the call, which applies it in its output transform instead of a second pass:
//   add(conv, b) with a constant b of one value per output channel -> conv(x, U, reshape(b, [K]))
//   add(conv(x, U, b), r) with r of the output's type (a residual) -> conv(x, U, b, r)
//   relu(conv) / clip(conv) -> conv with clamp_min, clamp_max (once; a later clip stays a clip)
//
// Cost rule: per 4x4 tile Winograd does 36 products per channel pair where the direct kernel does
// 144, but streams a weight four times as large (36 / 9) for every block of tiles, and a plane
// that is not a multiple of 4 computes the rest of its last tiles for nothing (7x7: 64 outputs
// for 49). With few tiles per weight (7x7 planes of 512 channels: 4 tiles) the weight's traffic
// and the waste outweigh the saved arithmetic, so a convolution is rewritten only when it has at
// least `min_tiles` tiles (17) and at least one tile per `channels_per_tile` (16) input channels.
// Each transformed input value feeds `out` channels' products and each output transform sums `in`
// channels', so with few channels the transforms cost more than the products they save: a
// convolution needs in * out / (in + out) >= `min_products_per_transform` (10).
// Measured with the vector transforms (kiln_conv2d_winograd_f32 against the direct tile in one
// process, one core, weights and data hot / evicted first): VGG's 28x28 512 -> 512 0.48 / 0.66 of
// the direct time, 32 -> 32 at 147x147 0.55, 16 -> 32 (10.7 products) 0.63; staying direct:
// 16 -> 16 (8 products) 1.22, 7x7 512 -> 512 1.14 / 1.60, 7x7 128 -> 32 0.76 / 1.59. A 14x14
// plane's 16 tiles are faster alone (256 -> 256 0.67 / 0.82, DenseNet-121's 128 -> 32 0.72 / 1.08)
// but stay direct: in ResNet-50 its five 14x14x256 layers gained a few percent while their
// transformed weights added 34 MB to params.bin (warm-cache compile 0.49 -> 0.59 s, median of
// five alternating runs, against issue 13's 0.5 s). Options of the same names; `force`
// rewrites every convolution that qualifies by shape. Data of one channel per block (NCHW1c: a
// 3-channel image stem) stays direct: transforming its tiles costs about as much as the few
// products per tile it saves (U-Net's 256x256x3 stem: 13 GFLOP/s effective).
#include "kiln/attrs/layout.h"
#include "kiln/attrs/nn.h"
#include "kiln/attrs/transform.h"
#include "kiln/attrs/unary.h"
#include "kiln/attrs/winograd.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"
#include "transform/expr_match.h"

namespace kiln {

namespace {

class WinogradRewriter : public ExprRewriter {
 public:
  WinogradRewriter(const Function& fn, const WinogradConv2DOptions& options, bool fold)
      : uses_(use_counts(fn)), options_(options), fold_(fold) {}

 protected:
  Expr post(const Expr& original, const Expr& rebuilt) override {
    const auto* call = as<CallNode>(original);
    if (!call || !call->op()) return rebuilt;
    const std::string& op = call->op()->name;
    if (op == "nn.conv2d") return to_winograd(*call, original, rebuilt);
    if (!options_.epilogue) return rebuilt;
    if (op == "add") return with_addend(*call, rebuilt);
    if (op == "nn.relu" || op == "clip") return with_clamp(*call, rebuilt);
    return rebuilt;
  }

 private:
  Expr to_winograd(const CallNode& call, const Expr& original, const Expr& rebuilt) {
    const auto attrs = attrs_from<Conv2DAttrs>(call.attrs, "nn.conv2d");
    const std::optional<ConvLayoutChoice> blocks =
        conv2d_blocks(attrs.data_layout, attrs.kernel_layout, attrs.out_layout);
    if (!blocks || blocks->depthwise || !qualifies(call, attrs)) return rebuilt;
    const TensorTypeNode* out = tensor_of(original);
    const int64_t out_channels = out->shape[1] * out->shape[4];
    WinogradWeightAttrs weight_attrs;
    weight_attrs.out_channels = out_channels;
    Expr u = call_op("nn.winograd_weight_transform", {rewritten(call.args[1])}, weight_attrs);
    // U holds four times the weight's elements, more than FoldConstant lets a call grow, so a
    // constant weight is transformed here.
    if (fold_ && as<ConstantNode>(rewritten(call.args[1]))) u = make_constant(interpret_expr(u).tensor());
    const Window2D window = attrs.window();
    Conv2DWinogradAttrs conv;
    conv.padding = {window.padding.top, window.padding.left, window.padding.bottom, window.padding.right};
    conv.channels = out_channels;
    conv.out_block = out->shape[4];
    return call_op("nn.conv2d_winograd", {rewritten(call.args[0]), u}, conv);
  }

  // The rewritten form of `arg` when it is an nn.conv2d_winograd only the op at hand reads, with
  // at most `max_args` arguments and no clamp yet: an epilogue can fold into it.
  const CallNode* foldable_winograd(const Expr& arg, size_t max_args) const {
    const CallNode* conv = call_of(rewritten(arg), "nn.conv2d_winograd");
    if (!conv || conv->args.size() > max_args || uses_.at(arg.get()) != 1) return nullptr;
    return attrs_from<Conv2DWinogradAttrs>(conv->attrs, "nn.conv2d_winograd").clamps() ? nullptr : conv;
  }

  // add(conv, bias) or add(bias, conv) with a constant bias of one value per output channel
  // ((K/y, 1, 1, y) after AlterOpLayout) -> conv with the bias as (K); add(conv, r) or add(r, conv)
  // of a conv with a bias and r of the output's type -> conv with the residual r.
  Expr with_addend(const CallNode& add, const Expr& rebuilt) {
    for (size_t i = 0; i < 2; ++i) {
      const Expr& other = add.args[1 - i];
      const CallNode* conv = foldable_winograd(add.args[i], 3);
      if (!conv) continue;
      const auto attrs = attrs_from<Conv2DWinogradAttrs>(conv->attrs, "nn.conv2d_winograd");
      if (conv->args.size() == 2 && per_blocked_channel(tensor_of(other), tensor_of(add.args[i])) &&
          variable_free(other)) {
        return call_op("nn.conv2d_winograd",
                       {conv->args[0], conv->args[1], bias_as_vector(rewritten(other), attrs.channels)}, attrs);
      }
      if (conv->args.size() == 3 && same_type(tensor_of(other), tensor_of(add.args[i])))
        return call_op("nn.conv2d_winograd", {conv->args[0], conv->args[1], conv->args[2], rewritten(other)}, attrs);
    }
    return rebuilt;
  }

  // relu(conv) -> conv with clamp_min 0; clip(conv) -> conv with clip's bounds.
  Expr with_clamp(const CallNode& call, const Expr& rebuilt) {
    const CallNode* conv = foldable_winograd(call.args[0], 4);
    if (!conv) return rebuilt;
    auto attrs = attrs_from<Conv2DWinogradAttrs>(conv->attrs, "nn.conv2d_winograd");
    if (call.op()->name == "clip") {
      const auto clip = attrs_from<ClipAttrs>(call.attrs, "clip");
      attrs.clamp_min = clip.a_min;
      attrs.clamp_max = clip.a_max;
    } else {
      attrs.clamp_min = 0;
    }
    return call_op("nn.conv2d_winograd", conv->args, attrs);
  }

  static bool same_type(const TensorTypeNode* a, const TensorTypeNode* b) {
    return a && b && a->dtype == b->dtype && a->shape == b->shape;
  }

 private:
  bool qualifies(const CallNode& call, const Conv2DAttrs& attrs) const {
    const TensorTypeNode* data = tensor_of(call.args[0]);
    const TensorTypeNode* weight = tensor_of(call.args[1]);
    const auto* out = as_tensor(call.checked_type());
    if (!static_nonempty_float32(data) || !static_nonempty_float32(weight) || !static_nonempty_float32(out) ||
        weight->ndim() != 6 || data->ndim() != 5)
      return false;
    if (!attrs.out_dtype.empty() && attrs.out_dtype != "float32") return false;
    const Window2D window = attrs.window();
    if (weight->shape[2] != 3 || weight->shape[3] != 3 || attrs.groups != 1 || window.strides.h != 1 ||
        window.strides.w != 1 || window.dilation.h != 1 || window.dilation.w != 1)
      return false;
    if (!variable_free(call.args[1])) return false;
    if (options_.force) return true;
    const int64_t tiles = data->shape[0] * ((out->shape[2] + 3) / 4) * ((out->shape[3] + 3) / 4);
    const int64_t channels = data->shape[1] * data->shape[4];
    if (data->shape[4] == 1) return false;
    const int64_t out_channels = out->shape[1] * out->shape[4];
    const bool enough_products =
        channels * out_channels >= options_.min_products_per_transform * (channels + out_channels);
    return tiles >= options_.min_tiles && tiles * options_.channels_per_tile >= channels && enough_products;
  }

  std::unordered_map<const ExprNode*, size_t> uses_;
  WinogradConv2DOptions options_;
  bool fold_;
};

}  // namespace

IRModule winograd_conv2d_pass(const IRModule& mod, const WinogradConv2DOptions& options, bool fold) {
  IRModule out = map_functions(infer_types(mod), [&](const Function& fn) {
    WinogradRewriter rewriter(fn, options, fold);
    return as_function(rewriter.rewrite(fn));
  });
  out = infer_types(out);
  return fold ? fold_constant_pass(out) : out;
}

}  // namespace kiln
