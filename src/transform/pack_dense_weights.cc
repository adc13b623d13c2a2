// PackDenseWeights: float32 products whose weight depends on no variable (a model's constant
// weights) take it packed in panels of 32 output features, TVM's NK16n idea at the panel GEMM's
// width:
//   nn.dense(x, W (N, K))                        -> nn.dense_packed(x, pack(W, "NK"), units=N)
//   nn.matmul(x, B (K, N))                       -> nn.dense_packed(x, pack(B, "KN"), units=N)
//   nn.matmul(x, B (N, K), transpose_b=True)     -> nn.dense_packed(x, pack(B, "NK"), units=N)
// (data of rank > 2 whose matrices have fewer than 32 rows is reshaped to one matrix around it),
// where pack is layout_transform(..., dst_layout="NK32n") after an nn.pad of N up to a multiple of
// 32 with zeros. The data must be a matrix or a batch of them (rank >= 2, not transposed). Each
// panel is then one contiguous stream of K rows of 32 floats, which the panel GEMM reads in
// cache-sized k-blocks. The pass ends with FoldConstant (unless told not to), so the artifact's
// params hold the packed weights and nothing is packed at run time.
#include <map>

#include "kiln/attrs/nn.h"
#include "kiln/attrs/pad.h"
#include "kiln/attrs/transform.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/runtime/microkernels.h"
#include "kiln/transform/pass.h"
#include "transform/expr_match.h"

namespace kiln {

namespace {

bool static_float32(const TensorTypeNode* t) {
  return t && t->dtype == DType::kFloat32 &&
         std::all_of(t->shape.begin(), t->shape.end(), [](int64_t d) { return d >= 0; });
}

bool float32_out(const std::string& out_dtype) { return out_dtype.empty() || out_dtype == "float32"; }

class DenseWeightPacker : public ExprRewriter {
 protected:
  Expr post(const Expr& original, const Expr& rebuilt) override {
    const auto* call = as<CallNode>(original);
    if (!call || !call->op()) return rebuilt;
    const std::string& name = call->op()->name;
    if (name == "nn.dense") {
      const auto attrs = attrs_from<DenseAttrs>(call->attrs, name);
      if (float32_out(attrs.out_dtype)) return packed(*call, "NK", rebuilt);
    } else if (name == "nn.matmul") {
      const auto attrs = attrs_from<MatmulAttrs>(call->attrs, name);
      if (float32_out(attrs.out_dtype) && !attrs.transpose_a)
        return packed(*call, attrs.transpose_b ? "NK" : "KN", rebuilt);
    }
    return rebuilt;
  }

 private:
  // The call on its data and the packed weight, or `rebuilt` when it does not qualify.
  Expr packed(const CallNode& call, const std::string& weight_layout, const Expr& rebuilt) {
    const TensorTypeNode* data = tensor_of(call.args[0]);
    const TensorTypeNode* weight = tensor_of(call.args[1]);
    if (!static_float32(data) || !static_float32(weight) || data->ndim() < 2 || weight->ndim() != 2 ||
        !variable_free(call.args[1]))
      return rebuilt;
    const int64_t units = weight->shape[weight_layout == "NK" ? 0 : 1];
    DensePackedAttrs attrs;
    attrs.units = units;
    // Matrices of a few rows in a batch (the (L, N, E) projections of attention) are one matrix of
    // all the rows: the panel GEMM's row tiles fill up and the weight is streamed once.
    const bool flatten = data->ndim() > 2 && data->shape[data->ndim() - 2] < kMinRows;
    Expr x = rewritten(call.args[0]);
    if (flatten) x = reshape(x, {-1, data->shape.back()});
    Expr product = call_op("nn.dense_packed", {x, packed_weight(call.args[1], weight_layout, units)}, attrs);
    if (!flatten) return product;
    std::vector<int64_t> out_shape = data->shape;
    out_shape.back() = units;
    return reshape(product, out_shape);
  }

  static constexpr int64_t kMinRows = 32;

  // One packed expression per weight and layout, so products sharing a weight (a recurrent
  // layer's steps) share one packed constant after folding instead of one copy each.
  Expr packed_weight(const Expr& weight, const std::string& layout, int64_t units) {
    Expr& packed = packed_[{weight.get(), layout}];
    if (!packed) packed = pack(rewritten(weight), layout, units);
    return packed;
  }

  static Expr reshape(Expr x, std::vector<int64_t> shape) {
    ReshapeAttrs attrs;
    attrs.newshape = std::move(shape);
    return call_op("reshape", {std::move(x)}, attrs);
  }

  static Expr pack(Expr weight, const std::string& layout, int64_t units) {
    const int64_t pad = (KILN_PANEL_NR - units % KILN_PANEL_NR) % KILN_PANEL_NR;
    if (pad > 0) {
      std::vector<std::pair<int64_t, int64_t>> pairs = {{0, 0}, {0, 0}};
      pairs[layout == "NK" ? 0 : 1].second = pad;
      PadAttrs pad_attrs;
      pad_attrs.pad_width = PadAttrs::width_of(pairs);
      weight = call_op("nn.pad", {weight, make_constant(NDArray::scalar(DType::kFloat32, 0.0))}, pad_attrs);
    }
    LayoutTransformAttrs attrs;
    attrs.src_layout = layout;
    attrs.dst_layout = "NK" + std::to_string(KILN_PANEL_NR) + "n";
    return call_op("layout_transform", {std::move(weight)}, attrs);
  }

  std::map<std::pair<const ExprNode*, std::string>, Expr> packed_;

  // No variable (function parameter or let) anywhere in `e`: FoldConstant computes it at build time.
  bool variable_free(const Expr& e) {
    bool free = true;
    post_order_visit(e, [&](const Expr& node) {
      if (as<VarNode>(node)) free = false;
    });
    return free;
  }
};

}  // namespace

IRModule pack_dense_weights_pass(const IRModule& mod, bool fold) {
  IRModule out = map_functions(infer_types(mod), [](const Function& fn) {
    DenseWeightPacker packer;
    return as_function(packer.rewrite(fn));
  });
  out = infer_types(out);
  return fold ? fold_constant_pass(out) : out;
}

}  // namespace kiln
