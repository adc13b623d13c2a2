// FoldScaleAxis: moves a per-channel multiply by a constant into the weight of the
// convolution or dense next to it, as Relay's FoldScaleAxis does, so the activation is
// never scaled at run time (SimplifyInference leaves exactly such multiplies for batch
// norm). Three steps, as Relay's Sequential{Backward, Forward, FoldConstant}:
//   backward: s: (C,1,1) per output channel, through bias_add / add / relu (s > 0)
//     multiply(nn.conv2d(%x, W), s)  ->  nn.conv2d(%x, multiply(W, expand_dims(squeeze(s))))
//   forward: s per input channel, every consumer a groups=1 conv (zero padding times s is
//     still zero)
//     nn.conv2d(multiply(%x, s), W)  ->  nn.conv2d(%x, multiply(W, expand_dims(squeeze(s))))
//   FoldConstant then evaluates the new weights.
// Forward, s may also be computed at run time (squeeze-excite's sigmoid of a pooled branch)
// when the weights it would scale have at most half the elements of the activation: the
// weights are then scaled at every run, by a kernel over C x O values instead of a pass over
// the C x H x W activation (EfficientNet's 56x56 blocks: 3456 against 451584).
// Anything not exactly NCHW / OIHW with a per-channel scale is left alone.
#include <optional>
#include <unordered_map>

#include "kiln/attrs/nn.h"
#include "kiln/attrs/transform.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"
#include "transform/expr_match.h"

namespace kiln {

namespace {

// Who uses each node: (parent, argument index of an op call, -1 otherwise). The function's
// result counts as a use by nullptr, so a result is never folded away.
using Consumers = std::unordered_map<const ExprNode*, std::vector<std::pair<const ExprNode*, int>>>;

Consumers consumers_of(const Function& fn) {
  Consumers uses;
  post_order_visit(fn, [&](const Expr& e) {
    const auto* call = as<CallNode>(e);
    if (call && call->op()) {
      for (size_t i = 0; i < call->args.size(); ++i)
        uses[call->args[i].get()].emplace_back(e.get(), static_cast<int>(i));
      return;
    }
    for (const Expr& child : children(e)) uses[child.get()].emplace_back(e.get(), -1);
  });
  uses[fn->body.get()].emplace_back(nullptr, -1);
  return uses;
}

size_t use_count(const Consumers& uses, const Expr& e) {
  auto it = uses.find(e.get());
  return it == uses.end() ? 0 : it->second.size();
}

// Depends on no variable, so FoldConstant can evaluate it after the rewrite (a weight
// that stays a parameter would be scaled at every run instead of the activation).
bool is_constant_expr(const Expr& root) {
  bool constant = true;
  post_order_visit(root, [&](const Expr& e) {
    const auto* call = as<CallNode>(e);
    bool ok = as<ConstantNode>(e) || as<TupleNode>(e) || as<TupleGetItemNode>(e) ||
              (call && call->op() && !call->op()->nondeterministic);
    constant = constant && ok;
  });
  return constant;
}

// The axes of `scale` to squeeze away so that it is a vector along `axis` of `out`, when it
// broadcasts to exactly that (one value per channel, every other dim 1).
std::optional<std::vector<int64_t>> per_channel_squeeze(const TensorTypeNode& out, const TensorTypeNode& scale,
                                                        int64_t axis) {
  int64_t base = out.ndim() - scale.ndim();
  if (scale.dtype != out.dtype || base < 0 || axis < base || out.shape[static_cast<size_t>(axis)] <= 0)
    return std::nullopt;
  std::vector<int64_t> squeeze;
  for (int64_t i = 0; i < scale.ndim(); ++i) {
    int64_t dim = scale.shape[static_cast<size_t>(i)];
    if (i == axis - base) {
      if (dim != out.shape[static_cast<size_t>(axis)]) return std::nullopt;
    } else if (dim != 1) {
      return std::nullopt;
    } else {
      squeeze.push_back(i);
    }
  }
  return squeeze;
}

Expr squeezed(const Expr& scale, const std::vector<int64_t>& axes) {
  return axes.empty() ? scale : call_op("squeeze", {scale}, SqueezeAttrs{.axis = axes});
}

Expr expand_from_first(const Expr& vector, int64_t trailing) {
  return call_op("expand_dims", {vector}, ExpandDimsAttrs{.axis = 1, .num_newaxis = trailing});
}

// A convolution whose output channels are the O of an OIHW weight and axis 1 of the result.
bool plain_conv(const CallNode& conv) {
  const auto attrs = attrs_from<Conv2DAttrs>(conv.attrs, "nn.conv2d");
  const TensorTypeNode* data = tensor_of(conv.args[0]);
  return attrs.data_layout == "NCHW" && attrs.kernel_layout == "OIHW" &&
         (attrs.out_layout.empty() || attrs.out_layout == "NCHW") && data && is_float(data->dtype) &&
         (attrs.out_dtype.empty() || attrs.out_dtype == std::string(dtype_name(data->dtype))) &&
         is_constant_expr(conv.args[1]);
}

bool plain_dense(const CallNode& dense) {
  const auto attrs = attrs_from<DenseAttrs>(dense.attrs, "nn.dense");
  const TensorTypeNode* data = tensor_of(dense.args[0]);
  const TensorTypeNode* weight = tensor_of(dense.args[1]);
  return data && weight && weight->ndim() == 2 && is_float(data->dtype) &&
         (attrs.out_dtype.empty() || attrs.out_dtype == std::string(dtype_name(data->dtype))) &&
         is_constant_expr(dense.args[1]);
}

bool all_positive(const NDArray& a) {
  for (int64_t i = 0; i < a.numel(); ++i)
    if (!(a.at(i) > 0)) return false;
  return true;
}

class BackwardFolder : public ExprRewriter {
 public:
  explicit BackwardFolder(const Function& fn) : uses_(consumers_of(fn)) {}
  bool changed = false;

 protected:
  Expr post(const Expr& original, const Expr& rebuilt) override {
    const CallNode* mul = call_of(original, "multiply");
    if (!mul) return rebuilt;
    for (int side = 0; side < 2; ++side)
      if (Expr folded = fold(*mul, mul->args[static_cast<size_t>(side)], mul->args[static_cast<size_t>(1 - side)])) {
        changed = true;
        return folded;
      }
    return rebuilt;
  }

 private:
  // multiply(act, scale) with act = op(... op(conv or dense)), each op used only here.
  Expr fold(const CallNode& mul, const Expr& act, const Expr& scale) {
    const auto* scale_constant = as<ConstantNode>(scale);
    const TensorTypeNode* out = tensor_of(act);
    const TensorTypeNode* scale_type = tensor_of(scale);
    if (!scale_constant || !out || !scale_type || !type_equal(act->checked_type(), mul.checked_type())) return nullptr;
    std::vector<const CallNode*> chain;  // outermost first, ending with the conv or dense
    for (Expr node = act;;) {
      const auto* call = as<CallNode>(node);
      if (!call || !call->op() || use_count(uses_, node) != 1) return nullptr;
      chain.push_back(call);
      const std::string& name = call->op()->name;
      if (name == "nn.conv2d" || name == "nn.dense") break;
      if (name == "nn.relu" || name == "nn.bias_add") {
        node = call->args[0];
      } else if (name == "add" || name == "subtract") {
        int data = is_constant_expr(call->args[0]) ? 1 : 0;
        if (!is_constant_expr(call->args[static_cast<size_t>(1 - data)])) return nullptr;
        node = call->args[static_cast<size_t>(data)];
      } else {
        return nullptr;
      }
      if (!type_equal(node->checked_type(), act->checked_type())) return nullptr;
    }
    const CallNode& base = *chain.back();
    bool conv = base.op()->name == "nn.conv2d";
    if (conv ? out->ndim() != 4 || !plain_conv(base) : !plain_dense(base)) return nullptr;
    int64_t axis = conv ? 1 : out->ndim() - 1;
    std::optional<std::vector<int64_t>> squeeze = per_channel_squeeze(*out, *scale_type, axis);
    if (!squeeze) return nullptr;
    for (size_t i = 0; i + 1 < chain.size(); ++i) {
      const std::string& name = chain[i]->op()->name;
      if (name == "nn.relu" && !all_positive(scale_constant->data)) return nullptr;
      if (name == "nn.bias_add") {
        int64_t bias_axis = attrs_from<BiasAddAttrs>(chain[i]->attrs, name).axis;
        if ((bias_axis < 0 ? bias_axis + out->ndim() : bias_axis) != axis || !is_constant_expr(chain[i]->args[1]))
          return nullptr;
      }
    }

    Expr vector = squeezed(rewritten(scale), *squeeze);
    Expr result;
    {
      SourceScope source(base.source);
      Expr weight = call_op("multiply", {rewritten(base.args[1]), expand_from_first(vector, conv ? 3 : 1)});
      result = make_call(base.callee, {rewritten(base.args[0]), weight}, base.attrs);
    }
    for (size_t i = chain.size() - 1; i-- > 0;) {
      const CallNode& op = *chain[i];
      SourceScope source(op.source);
      const std::string& name = op.op()->name;
      if (name == "nn.relu") {
        result = make_call(op.callee, {result}, op.attrs);
      } else if (name == "nn.bias_add") {
        result = make_call(op.callee, {result, call_op("multiply", {rewritten(op.args[1]), vector})}, op.attrs);
      } else {
        // The constant is scaled as it stands: both it and the scale broadcast to the output.
        std::vector<Expr> args{rewritten(op.args[0]), rewritten(op.args[1])};
        size_t constant = is_constant_expr(op.args[0]) ? 0 : 1;
        args[constant] = call_op("multiply", {args[constant], rewritten(scale)});
        args[1 - constant] = result;
        result = make_call(op.callee, std::move(args), op.attrs);
      }
    }
    return result;
  }

  Consumers uses_;
};

// A convolution whose input channels are the I of an OIHW weight and axis 1 of the data.
bool forward_conv(const CallNode& conv) {
  return attrs_from<Conv2DAttrs>(conv.attrs, "nn.conv2d").groups == 1 && plain_conv(conv);
}

// Whether scaling the weights of the convolutions `users` at every run costs at most half of
// scaling their input activation `data` (users are forward_conv calls taking it as data).
bool weights_smaller_than_activation(const std::vector<std::pair<const ExprNode*, int>>& users,
                                     const TensorTypeNode& data) {
  int64_t weights = 0;
  for (const auto& [user, index] : users) {
    const TensorTypeNode* weight = tensor_of(static_cast<const CallNode*>(user)->args[1]);
    if (!weight || !weight->is_static()) return false;
    weights += num_elements(weight->shape);
  }
  return data.is_static() && 2 * weights <= num_elements(data.shape);
}

class ForwardFolder : public ExprRewriter {
 public:
  // Finds the multiplies every consumer of which is a convolution taking them as data.
  explicit ForwardFolder(const Function& fn) {
    Consumers uses = consumers_of(fn);
    post_order_visit(fn, [&](const Expr& e) {
      const CallNode* mul = call_of(e, "multiply");
      if (!mul) return;
      const auto& users = uses[e.get()];
      bool only_convs = !users.empty();
      for (const auto& [user, index] : users) {
        const auto* call = user && user->kind == ExprKind::kCall ? static_cast<const CallNode*>(user) : nullptr;
        only_convs =
            only_convs && call && call->op() && call->op()->name == "nn.conv2d" && index == 0 && forward_conv(*call);
      }
      if (!only_convs) return;
      for (int side = 0; side < 2; ++side) {
        const Expr& act = mul->args[static_cast<size_t>(side)];
        const Expr& scale = mul->args[static_cast<size_t>(1 - side)];
        const TensorTypeNode* data = tensor_of(act);
        const TensorTypeNode* scale_type = tensor_of(scale);
        if (!data || !scale_type || data->ndim() != 4 || !type_equal(act->checked_type(), e->checked_type()) ||
            !(as<ConstantNode>(scale) || weights_smaller_than_activation(users, *data)))
          continue;
        if (auto squeeze = per_channel_squeeze(*data, *scale_type, 1)) {
          folds_[e.get()] = {side, *squeeze, nullptr};
          return;
        }
      }
    });
  }
  bool changed = false;

 protected:
  Expr post(const Expr& original, const Expr& rebuilt) override {
    const CallNode* conv = call_of(original, "nn.conv2d");
    auto it = conv ? folds_.find(conv->args[0].get()) : folds_.end();
    if (it == folds_.end()) return rebuilt;
    Fold& fold = it->second;
    const auto& mul = static_cast<const CallNode&>(*conv->args[0]);
    if (!fold.weight_scale) {
      SourceScope source(mul.source);
      Expr vector = squeezed(rewritten(mul.args[static_cast<size_t>(1 - fold.side)]), fold.squeeze);
      fold.weight_scale = expand_from_first(vector, 2);
    }
    changed = true;
    Expr weight = call_op("multiply", {rewritten(conv->args[1]), fold.weight_scale});
    return make_call(conv->callee, {rewritten(mul.args[static_cast<size_t>(fold.side)]), weight}, conv->attrs);
  }

 private:
  struct Fold {
    int side;  // the argument of the multiply that is the data
    std::vector<int64_t> squeeze;
    Expr weight_scale;  // made once, shared by every convolution of the multiply
  };
  std::unordered_map<const ExprNode*, Fold> folds_;
};

// Runs one direction until nothing changes: a fold can expose another (two multiplies in
// a row), and each fold removes one multiply of an activation, so this ends.
template <class Folder>
IRModule fold_until_done(const IRModule& mod) {
  IRModule out = mod;
  for (bool changed = true; changed;) {
    changed = false;
    out = map_functions(infer_types(out), [&](const Function& fn) {
      Folder folder(fn);
      Function result = as_function(folder.rewrite(fn));
      changed = changed || folder.changed;
      return result;
    });
  }
  return infer_types(out);
}

}  // namespace

IRModule backward_fold_scale_axis_pass(const IRModule& mod) { return fold_until_done<BackwardFolder>(mod); }

IRModule forward_fold_scale_axis_pass(const IRModule& mod) { return fold_until_done<ForwardFolder>(mod); }

IRModule fold_scale_axis_pass(const IRModule& mod) {
  return fold_constant_pass(forward_fold_scale_axis_pass(backward_fold_scale_axis_pass(mod)));
}

}  // namespace kiln
