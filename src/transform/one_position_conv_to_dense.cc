// OnePositionConvToDense: a float32 convolution of one position by a constant 1x1 weight (the
// squeeze-excite blocks of MobileNetV3, EfficientNet and RegNet: global pool, conv, activation,
// conv, sigmoid) is a matrix-vector product:
//   nn.conv2d(%x (N, C, 1, 1), W (O, C, 1, 1))
// -> reshape(nn.dense(reshape(%x, newshape=[N, C]), reshape(W, newshape=[O, C])), newshape=[N, O, 1, 1])
// PackDenseWeights then packs W in panels of output features, so the product runs vectorised
// over the outputs with each weight read once; as a convolution it summed each output in
// partial-sum lanes that divide C (2 for RegNet's 110 channels). It runs after AlterOpLayout:
// a squeeze-excite block the layout pass put in blocked channels (MobileNetV3, EfficientNet) is
// already vectorised over its channel blocks and stays a convolution, and taking it out before
// the layout pass would change that pass's choices for the layers around it (MobileNetV3 1.36x
// slower). The sums are the same products in the same order of channels.
#include "kiln/attrs/nn.h"
#include "kiln/ir/type_infer.h"
#include "kiln/transform/pass.h"
#include "transform/expr_match.h"

namespace kiln {

namespace {

bool one_position(const TensorTypeNode* t) {
  return t && t->dtype == DType::kFloat32 && t->ndim() == 4 && t->shape[0] >= 0 && t->shape[1] >= 0 &&
         t->shape[2] == 1 && t->shape[3] == 1;
}

// A convolution the product computes exactly: NCHW, OIHW, no groups, no padding, float32 out.
bool plain_conv(const Conv2DAttrs& attrs) {
  return attrs.groups == 1 && attrs.data_layout == "NCHW" && attrs.kernel_layout == "OIHW" &&
         (attrs.out_layout.empty() || attrs.out_layout == "NCHW") &&
         (attrs.out_dtype.empty() || attrs.out_dtype == "float32") &&
         std::all_of(attrs.padding.begin(), attrs.padding.end(), [](int64_t p) { return p == 0; });
}

class OnePositionConvRewriter : public ExprRewriter {
 protected:
  Expr post(const Expr& original, const Expr& rebuilt) override {
    const CallNode* conv = call_of(original, "nn.conv2d");
    if (!conv) return rebuilt;
    const TensorTypeNode* data = tensor_of(conv->args[0]);
    const TensorTypeNode* weight = tensor_of(conv->args[1]);
    if (!one_position(data) || !one_position(weight) || !variable_free(conv->args[1]) ||
        !plain_conv(attrs_from<Conv2DAttrs>(conv->attrs, "nn.conv2d")))
      return rebuilt;
    const int64_t n = data->shape[0], c = data->shape[1], o = weight->shape[0];
    Expr product =
        call_op("nn.dense", {reshaped(rewritten(conv->args[0]), {n, c}), reshaped(rewritten(conv->args[1]), {o, c})});
    return reshaped(product, {n, o, 1, 1});
  }
};

}  // namespace

IRModule one_position_conv_to_dense_pass(const IRModule& mod) {
  return map_functions(infer_types(mod), [](const Function& fn) {
    OnePositionConvRewriter rewriter;
    return as_function(rewriter.rewrite(fn));
  });
}

}  // namespace kiln
