// DynamicToStatic (Relay's pass of that name): a dyn.* call whose shape-like operands
// (reshape's shape, slice bounds, pads, repeats, k, axes) are known now becomes the static op
// with those values as attributes, so type inference gives static shapes again and the call
// can be compiled. An operand counts as known when it is computed from constants alone
// (shape arithmetic that FoldConstant would fold); it is evaluated here.
//   dyn.reshape(%x, [2, -1])                  -> reshape(%x, newshape=[2, -1])
//   dyn.strided_slice(%x, b, e, axes, steps)  -> strided_slice(%x, begin=b, end=e, ...)
//   dyn.broadcast_to(%x, s)                   -> where(ones(s, bool), %x, %x)
//   dyn.tile(%x, r)                           -> r[d] copies concatenated along each axis d
//   dyn.full(v, s) / dyn.topk(%x, k) / dyn.pad(%x, p, v) / dyn.squeeze(%x, a) / dyn.reduce(%x, a)
//                                             -> full / topk / nn.pad / squeeze / the reduction
//   dyn.expand_dims(%x, a)                    -> expand_dims per axis, in ascending order
//   dyn.arange(start, limit, delta)           -> its value, a constant
//   dyn.cumsum(%x, axis)                      -> cumsum(%x, axis=...)
//   dyn.trilu(%x, k)                          -> where(triangle mask, %x, 0) (static matrix extents)
//   dyn.split(%x, sizes)                      -> split(%x, indices_or_sections=...) (static extent)
//   dyn.one_hot(%i, on, off, depth)           -> one_hot(%i, on, off, depth=...)
//   dyn.resize2d(%x, roi, scales, sizes)      -> image.resize2d(%x, size=..., scales=...) (static data shape)
//   dyn.shape_of(%x) / dyn.size(%x)           -> the shape / element count, a constant (static data shape)
// Calls whose operands stay unknown are left as they are.
#include <algorithm>
#include <optional>

#include "kiln/attrs/dyn.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"

namespace kiln {

namespace {

// The value of `e` when it depends on constants alone (no variables, no random ops).
std::optional<NDArray> known_value(const Expr& e) {
  if (const auto* c = as<ConstantNode>(e)) return c->data;
  bool closed = true;
  post_order_visit(e, [&](const Expr& node) {
    if (const auto* call = as<CallNode>(node)) {
      const OpDef* op = call->op();
      if (!op || op->nondeterministic) closed = false;
    } else if (!as<ConstantNode>(node) && !as<OpNode>(node) && !as<TupleNode>(node) && !as<TupleGetItemNode>(node)) {
      closed = false;
    }
  });
  if (!closed) return std::nullopt;
  Value v = interpret_expr(e);
  if (!v.is_tensor()) return std::nullopt;
  return v.tensor();
}

const TensorTypeNode& data_type(const CallNode& original) {
  return expect_tensor(original.args.at(0)->checked_type(), "the data");
}

std::optional<Expr> expand_dims_static(const Expr& data, const NDArray& axes, int64_t rank) {
  std::vector<int64_t> sorted;
  int64_t out_rank = rank + axes.numel();
  for (int64_t a : axes.to_ints()) sorted.push_back(a < 0 ? a + out_rank : a);
  std::sort(sorted.begin(), sorted.end());
  bool valid = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end() &&
               std::all_of(sorted.begin(), sorted.end(), [&](int64_t a) { return a >= 0 && a < out_rank; });
  if (!valid) return std::nullopt;  // the kernel reports it at run time
  Expr x = data;
  for (int64_t a : sorted) x = call_op("expand_dims", {x}, ExpandDimsAttrs{.axis = a, .num_newaxis = 1});
  return x;
}

std::optional<Expr> tile_static(const Expr& data, const NDArray& repeats) {
  Expr x = data;
  std::vector<int64_t> r = repeats.to_ints();
  for (size_t axis = 0; axis < r.size(); ++axis) {
    if (r[axis] < 1) return std::nullopt;  // a zero repeat has no concatenation form
    if (r[axis] == 1) continue;
    x = call_op("concatenate", {make_tuple(std::vector<Expr>(static_cast<size_t>(r[axis]), x))},
                ConcatenateAttrs{.axis = static_cast<int64_t>(axis)});
  }
  return x;
}

// where(mask, x, 0) with the mask of the static matrix extents (left dynamic otherwise).
std::optional<Expr> trilu_static(const CallNode& original, const Expr& x, const DynTriluAttrs& attrs,
                                 const NDArray& k_value) {
  const TensorTypeNode& data = data_type(original);
  const int64_t rows = data.shape[data.shape.size() - 2], cols = data.shape.back();
  if (rows == kAnyDim || cols == kAnyDim) return std::nullopt;
  const int64_t k = trilu_diagonal(k_value);
  NDArray mask = NDArray::empty({rows, cols}, DType::kBool);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) mask.data<bool>()[i * cols + j] = trilu_keeps(attrs, k, i, j);
  return call_op("where", {make_constant(mask), x, make_constant(NDArray::scalar(data.dtype, 0))});
}

// dyn.shape_of / dyn.size of a tensor whose shape is static now: its value.
std::optional<Expr> shape_constant(const std::string& name, const TensorTypeNode& data) {
  if (!data.is_static()) return std::nullopt;
  if (name == "dyn.size")
    return make_constant(NDArray::scalar(DType::kInt64, static_cast<double>(num_elements(data.shape))));
  return make_constant(NDArray::from_vector<int64_t>({data.ndim()}, std::vector<int64_t>(data.shape)));
}

// The static form of a dyn call whose operands from `first_operand` on are all known.
std::optional<Expr> to_static(const CallNode& original, const CallNode& call) {
  const std::string& name = call.op()->name;
  const std::vector<Expr>& args = call.args;
  if (name == "dyn.shape_of" || name == "dyn.size") return shape_constant(name, data_type(original));
  std::vector<NDArray> known;
  // one_hot's on and off values may stay expressions.
  size_t first_operand = name == "dyn.arange" ? 0 : name == "dyn.one_hot" ? 3 : 1;
  size_t last_operand = name == "dyn.pad" ? 2 : args.size();  // pad_value may stay an expression
  for (size_t i = first_operand; i < last_operand; ++i) {
    std::optional<NDArray> v = known_value(args[i]);
    if (!v) return std::nullopt;
    known.push_back(*v);
  }
  const Attrs& attrs = call.attrs;
  if (name == "dyn.reshape")
    return call_op("reshape", {args[0]}, reshape_static_attrs(attrs_from<DynReshapeAttrs>(attrs, name), known[0]));
  if (name == "dyn.strided_slice")
    return call_op("strided_slice", {args[0]}, strided_slice_static_attrs(known[0], known[1], known[2], known[3]));
  if (name == "dyn.broadcast_to") {
    ConstantFillAttrs mask;
    mask.shape = known[0].to_ints();
    mask.dtype = "bool";
    return call_op("where", {call_op("ones", {}, mask), args[0], args[0]});
  }
  if (name == "dyn.tile") return tile_static(args[0], known[0]);
  if (name == "dyn.full")
    return call_op("full", {args[0]}, full_static_attrs(attrs_from<DynFullAttrs>(attrs, name), known[0]));
  if (name == "dyn.arange")
    return make_constant(
        interpret_expr(call_op(name, {make_constant(known[0]), make_constant(known[1]), make_constant(known[2])}))
            .tensor());
  if (name == "dyn.pad")
    return call_op("nn.pad", {args[0], args[2]},
                   pad_static_attrs(attrs_from<DynPadAttrs>(attrs, name), known[0], data_type(original).ndim()));
  if (name == "dyn.topk")
    return call_op("topk", {args[0]}, topk_static_attrs(attrs_from<DynTopKAttrs>(attrs, name), known[0]));
  if (name == "dyn.expand_dims") return expand_dims_static(args[0], known[0], data_type(original).ndim());
  if (name == "dyn.squeeze") {
    SqueezeAttrs fixed;
    fixed.axis = known[0].to_ints();
    return call_op("squeeze", {args[0]}, fixed);
  }
  if (name == "dyn.cumsum")
    return call_op("cumsum", {args[0]},
                   cumsum_static_attrs(attrs_from<DynCumsumAttrs>(attrs, name), known[0], data_type(original).ndim()));
  if (name == "dyn.trilu") return trilu_static(original, args[0], attrs_from<DynTriluAttrs>(attrs, name), known[0]);
  if (name == "dyn.split") {
    const auto dyn = attrs_from<DynSplitAttrs>(attrs, name);
    const TensorTypeNode& data = data_type(original);
    const int64_t axis = dyn.axis < 0 ? dyn.axis + data.ndim() : dyn.axis;
    // The sizes must add up to a known extent; otherwise the kernel reports it.
    if (axis < 0 || axis >= data.ndim() || data.shape[static_cast<size_t>(axis)] == kAnyDim) return std::nullopt;
    return call_op("split", {args[0]}, split_static_attrs(dyn, known[0], data.shape));
  }
  if (name == "dyn.one_hot")
    return call_op("one_hot", {args[0], args[1], args[2]},
                   one_hot_static_attrs(attrs_from<OneHotAxisAttrs>(attrs, name), known[0]));
  if (name == "dyn.resize2d") {
    const TensorTypeNode& data = data_type(original);
    if (!data.is_static()) return std::nullopt;
    return call_op(
        "image.resize2d", {args[0]},
        resize2d_static_attrs(attrs_from<ResizeMethodAttrs>(attrs, name), data.shape, known[0], known[1], known[2]));
  }
  if (name == "dyn.reduce") {
    auto dyn = attrs_from<DynReduceAttrs>(attrs, name);
    std::optional<ReduceAttrs> fixed = reduce_static_attrs(dyn, known[0]);
    return fixed ? call_op(dyn.reducer, {args[0]}, *fixed) : args[0];
  }
  return std::nullopt;
}

class DynamicToStatic : public ExprRewriter {
 protected:
  Expr post(const Expr&, const Expr& rebuilt) override {
    const auto* call = as<CallNode>(rebuilt);
    if (!call || !call->op() || call->op()->name.rfind("dyn.", 0) != 0) return rebuilt;
    // An argument may have become static below this call (a dyn op rewritten, a shape_of
    // folded): type the new nodes so that the rules read the shapes as they are now, and a
    // chain of dyn ops becomes static in one run.
    for (const Expr& arg : call->args) infer_untyped_nodes(arg);
    std::optional<Expr> fixed = to_static(*call, *call);
    return fixed ? *fixed : rebuilt;
  }
};

}  // namespace

IRModule dynamic_to_static_pass(const IRModule& mod) {
  IRModule typed = infer_types(mod);  // pad and expand_dims read the data's rank
  return infer_types(
      map_functions(typed, [](const Function& fn) { return as_function(DynamicToStatic().rewrite(fn)); }));
}

}  // namespace kiln
