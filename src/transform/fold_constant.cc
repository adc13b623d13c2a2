// FoldConstant: a call whose arguments are all constants is evaluated now with the
// reference kernels and replaced by its value, as Relay's FoldConstant does. What this
// removes from a compiled model: casts of weights stored in float16, transposes and
// reshapes of weights, the per-channel arithmetic SimplifyInference leaves on batch-norm
// statistics.
//   %0 = cast(meta_w_fp16, dtype="float32"); nn.conv2d(%x, %0)  ->  nn.conv2d(%x, meta_w_fp32)
// Random ops are never folded (each run draws anew), nor results much larger than the
// constants they come from (broadcasting a scalar would store the broadcast tensor).
#include "transform/fold_constant.h"

#include <algorithm>

#include "kiln/interp/interpreter.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"

namespace kiln {

namespace {

// A folded result may hold this many elements even when its constants hold fewer.
constexpr int64_t kFreeGrowth = int64_t{1} << 16;

bool is_constant_arg(const Expr& e) {
  if (as<ConstantNode>(e)) return true;
  const auto* tuple = as<TupleNode>(e);
  return tuple && std::all_of(tuple->fields.begin(), tuple->fields.end(),
                              [](const Expr& f) { return as<ConstantNode>(f) != nullptr; });
}

int64_t constant_elements(const Expr& e) {
  if (const auto* c = as<ConstantNode>(e)) return c->data.numel();
  int64_t total = 0;
  for (const Expr& f : as<TupleNode>(e)->fields) total += as<ConstantNode>(f)->data.numel();
  return total;
}

int64_t result_elements(const Type& type) {
  if (const TensorTypeNode* t = as_tensor(type)) return t->is_static() ? num_elements(t->shape) : -1;
  const TupleTypeNode* tuple = as_tuple(type);
  if (!tuple) return -1;
  int64_t total = 0;
  for (const Type& f : tuple->fields) {
    int64_t n = result_elements(f);
    if (n < 0) return -1;
    total += n;
  }
  return total;
}

Expr constant_of(const Value& v) {
  if (v.is_tensor()) return make_constant(v.tensor());
  std::vector<Expr> fields;
  for (const Value& f : v.tuple()) fields.push_back(constant_of(f));
  return make_tuple(std::move(fields));
}

class ConstantFolder : public ExprRewriter {
 public:
  explicit ConstantFolder(int64_t free_growth) : free_growth_(free_growth) {}

 protected:
  Expr post(const Expr& original, const Expr& rebuilt) override {
    if (const auto* item = as<TupleGetItemNode>(rebuilt)) {
      const auto* tuple = as<TupleNode>(item->tuple);
      if (tuple && as<ConstantNode>(tuple->fields.at(static_cast<size_t>(item->index))))
        return tuple->fields[static_cast<size_t>(item->index)];
      return rebuilt;
    }
    const auto* call = as<CallNode>(rebuilt);
    if (!call || !computes_from_constants(*call)) return rebuilt;
    int64_t inputs = 0;
    for (const Expr& a : call->args) inputs += constant_elements(a);
    int64_t outputs = result_elements(original->checked_type());
    if (outputs < 0 || outputs > std::max(inputs, free_growth_)) return rebuilt;
    return constant_of(interpret_expr(rebuilt));
  }

 private:
  int64_t free_growth_;
};

}  // namespace

bool computes_from_constants(const CallNode& call) {
  const OpDef* op = call.op();
  return op && !op->nondeterministic && std::all_of(call.args.begin(), call.args.end(), is_constant_arg);
}

Function fold_constant_calls(const Function& typed_fn, int64_t free_growth) {
  return as_function(ConstantFolder(free_growth).rewrite(typed_fn));
}

IRModule fold_constant_pass(const IRModule& mod) {
  IRModule typed = infer_types(mod);  // result sizes come from the original calls' types
  return infer_types(map_functions(typed, [](const Function& fn) { return fold_constant_calls(fn, kFreeGrowth); }));
}

}  // namespace kiln
