// FusePointwiseDepthwise: a blocked float32 1x1 convolution, its per-channel bias and activation,
// read only by a blocked depthwise convolution, become one nn.conv2d_pointwise_depthwise:
//   %e = act(add(nn.conv2d(%x, %P, kernel 1x1, ...), %b));  nn.conv2d(%e, %D, groups=E, ...)
//     -> nn.conv2d_pointwise_depthwise(%x, %P, reshape(%b, [E]), %D, strides, padding, dilation,
//                                      pointwise_activation=act)
// where act is clip (a relu is clip to [0, inf)), swish (multiply(%a, sigmoid(%a))) or absent.
// What follows the depthwise convolution and only it reads folds in the same way: a per-channel
// constant add becomes the depthwise bias, then a clip, relu or swish its activation.
//
// Why: the expanded tensor of an inverted residual block (MobileNetV2, EfficientNet) is the
// network's largest (4.8 MB at MobileNetV2's 112x112), written by the 1x1 convolution and read
// back once by the depthwise one; the fused kernel keeps only a ring of its rows in cache.
// Only planes of at least `min_plane` positions (56x56) are fused: smaller expanded tensors stay
// in cache unfused, and there the fused kernel's one-block tile is slower than the separate 1x1
// layer's (MobileNetV2 with every pair fused: 3% slower at one thread; with the 56x56 and 112x112
// pairs, 1-2% faster; EfficientNet-B0 2-3%). It runs after AlterOpLayout (the blocked layouts)
// and WinogradConv2D. A 1x1 convolution whose width no register tile of 4 to 14 positions
// divides stays as it is (the fused kernel tiles whole rows).
#include "kiln/attrs/layout.h"
#include "kiln/attrs/nn.h"
#include "kiln/attrs/pointwise_depthwise.h"
#include "kiln/attrs/transform.h"
#include "kiln/attrs/unary.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"
#include "transform/expr_match.h"

namespace kiln {

namespace {

constexpr int64_t kBlock = 16;
constexpr const char* kFused = "nn.conv2d_pointwise_depthwise";

bool tiles_rows(int64_t width) {
  for (int64_t r = 4; r <= 14; ++r)
    if (width % r == 0) return true;
  return false;
}

// A blocked float32 convolution with 16-channel output blocks, its attributes and layout choice.
struct BlockedConv {
  const CallNode* call = nullptr;
  Conv2DAttrs attrs;
  ConvLayoutChoice blocks;
};

std::optional<BlockedConv> blocked_conv(const Expr& e) {
  const CallNode* call = call_of(e, "nn.conv2d");
  if (!call) return std::nullopt;
  BlockedConv c{call, attrs_from<Conv2DAttrs>(call->attrs, "nn.conv2d"), {}};
  const auto blocks = conv2d_blocks(c.attrs.data_layout, c.attrs.kernel_layout, c.attrs.out_layout);
  if (!blocks || blocks->out_block != kBlock) return std::nullopt;
  if (!c.attrs.out_dtype.empty() && c.attrs.out_dtype != "float32") return std::nullopt;
  if (!static_nonempty_float32(tensor_of(call->args[0])) || !static_nonempty_float32(tensor_of(call->args[1])) ||
      !static_nonempty_float32(tensor_of(e)))
    return std::nullopt;
  c.blocks = *blocks;
  return c;
}

bool plain_pointwise(const BlockedConv& c) {
  const TensorTypeNode* w = tensor_of(c.call->args[1]);
  const Window2D win = c.attrs.window();
  const Padding2D& p = win.padding;
  return !c.blocks.depthwise && c.attrs.groups == 1 && w->shape[2] == 1 && w->shape[3] == 1 && win.strides.h == 1 &&
         win.strides.w == 1 && p.top == 0 && p.left == 0 && p.bottom == 0 && p.right == 0 &&
         tiles_rows(tensor_of(c.call->args[0])->shape[3]);
}

class PointwiseDepthwiseRewriter : public ExprRewriter {
 public:
  PointwiseDepthwiseRewriter(const Function& fn, int64_t min_plane) : uses_(use_counts(fn)), min_plane_(min_plane) {}

 protected:
  Expr post(const Expr& original, const Expr& rebuilt) override {
    const auto* call = as<CallNode>(original);
    if (!call || !call->op()) return rebuilt;
    const std::string& op = call->op()->name;
    if (op == "nn.conv2d") return fused_pair(original, rebuilt);
    if (op == "add") return with_bias(*call, rebuilt);
    if (op == "clip" || op == "nn.relu" || op == "multiply") return with_activation(original, rebuilt);
    return rebuilt;
  }

 private:
  size_t uses(const Expr& e) const { return uses_.at(e.get()); }

  // clip(v), relu(v), multiply(v, sigmoid(v)) or multiply(sigmoid(v), v): the activation, v and
  // the sigmoid (a swish's second reader of v).
  struct Activation {
    FoldedActivation act;
    Expr input, sigmoid;
  };

  static std::optional<Activation> activation_of(const Expr& e) {
    const auto* call = as<CallNode>(e);
    if (!call || !call->op()) return std::nullopt;
    const std::string& op = call->op()->name;
    if (op == "clip") {
      const auto clip = attrs_from<ClipAttrs>(call->attrs, "clip");
      return Activation{{"clip", clip.a_min, clip.a_max}, call->args[0], {}};
    }
    if (op == "nn.relu") return Activation{{"clip", 0.0, std::numeric_limits<double>::infinity()}, call->args[0], {}};
    if (op != "multiply") return std::nullopt;
    for (size_t i = 0; i < 2; ++i) {
      const CallNode* sigmoid = call_of(call->args[1 - i], "sigmoid");
      if (sigmoid && sigmoid->args[0].get() == call->args[i].get())
        return Activation{{"swish", -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()},
                          call->args[i],
                          call->args[1 - i]};
    }
    return std::nullopt;
  }

  // Whether the activation is v's only reader (with its sigmoid, read only by it).
  bool only_reader(const Activation& act) const {
    if (!act.sigmoid) return uses(act.input) == 1;
    return uses(act.input) == 2 && uses(act.sigmoid) == 1;
  }

  // The activation (or none) of the depthwise convolution's data, when only it reads each step.
  std::optional<Activation> only_reader_activation(const Expr& data) const {
    if (uses(data) != 1) return std::nullopt;
    std::optional<Activation> act = activation_of(data);
    if (!act) return Activation{{}, data, {}};
    return only_reader(*act) ? act : std::nullopt;
  }

  Expr fused_pair(const Expr& original, const Expr& rebuilt) {
    const std::optional<BlockedConv> dw = blocked_conv(original);
    if (!dw || !dw->blocks.depthwise || dw->blocks.in_block != kBlock) return rebuilt;
    const std::optional<Activation> act = only_reader_activation(dw->call->args[0]);
    if (!act) return rebuilt;
    const CallNode* add = call_of(act->input, "add");
    if (!add) return rebuilt;
    for (size_t i = 0; i < 2; ++i) {
      const std::optional<BlockedConv> pw = blocked_conv(add->args[i]);
      const Expr& bias = add->args[1 - i];
      if (!pw || !plain_pointwise(*pw) || uses(add->args[i]) != 1 ||
          !per_blocked_channel(tensor_of(bias), tensor_of(add->args[i])) || !variable_free(bias))
        continue;
      const TensorTypeNode* expanded = tensor_of(add->args[i]);
      if (expanded->shape[2] * expanded->shape[3] < min_plane_) continue;
      Conv2DPointwiseDepthwiseAttrs attrs;
      const Window2D win = dw->attrs.window();
      attrs.strides = {win.strides.h, win.strides.w};
      attrs.padding = {win.padding.top, win.padding.left, win.padding.bottom, win.padding.right};
      attrs.dilation = {win.dilation.h, win.dilation.w};
      attrs.pointwise_activation = act->act.kind;
      attrs.pointwise_min = act->act.clamp_min;
      attrs.pointwise_max = act->act.clamp_max;
      const Expr& rebuilt_pw = rewritten(add->args[i]);
      const auto* pw_call = as<CallNode>(rebuilt_pw);
      return call_op(kFused,
                     {pw_call->args[0], pw_call->args[1], bias_as_vector(rewritten(bias), expanded->shape[1] * kBlock),
                      as<CallNode>(rebuilt)->args[1]},
                     attrs);
    }
    return rebuilt;
  }

  // The rewritten form of `arg` when it is a fused call only the op at hand reads, with
  // `args` arguments and no depthwise activation yet.
  const CallNode* foldable(const Expr& arg, size_t min_args, size_t max_args) const {
    const CallNode* fused = call_of(rewritten(arg), kFused);
    if (!fused || fused->args.size() < min_args || fused->args.size() > max_args) return nullptr;
    return attrs_from<Conv2DPointwiseDepthwiseAttrs>(fused->attrs, kFused).depthwise().none() ? fused : nullptr;
  }

  Expr with_bias(const CallNode& add, const Expr& rebuilt) {
    for (size_t i = 0; i < 2; ++i) {
      const Expr& bias = add.args[1 - i];
      const CallNode* fused = uses(add.args[i]) == 1 ? foldable(add.args[i], 4, 4) : nullptr;
      if (!fused || !per_blocked_channel(tensor_of(bias), tensor_of(add.args[i])) || !variable_free(bias)) continue;
      std::vector<Expr> args = fused->args;
      args.push_back(bias_as_vector(rewritten(bias), tensor_of(add.args[i])->shape[1] * kBlock));
      return call_op(kFused, args, attrs_from<Conv2DPointwiseDepthwiseAttrs>(fused->attrs, kFused));
    }
    return rebuilt;
  }

  Expr with_activation(const Expr& original, const Expr& rebuilt) {
    const std::optional<Activation> act = activation_of(original);
    if (!act || !only_reader(*act)) return rebuilt;
    const CallNode* fused = foldable(act->input, 4, 5);
    if (!fused) return rebuilt;
    auto attrs = attrs_from<Conv2DPointwiseDepthwiseAttrs>(fused->attrs, kFused);
    attrs.depthwise_activation = act->act.kind;
    attrs.depthwise_min = act->act.clamp_min;
    attrs.depthwise_max = act->act.clamp_max;
    return call_op(kFused, fused->args, attrs);
  }

  std::unordered_map<const ExprNode*, size_t> uses_;
  int64_t min_plane_;
};

}  // namespace

IRModule fuse_pointwise_depthwise_pass(const IRModule& mod, int64_t min_plane) {
  IRModule out = map_functions(infer_types(mod), [&](const Function& fn) {
    PointwiseDepthwiseRewriter rewriter(fn, min_plane);
    return as_function(rewriter.rewrite(fn));
  });
  return infer_types(out);
}

}  // namespace kiln
