// PrecomputePrune, the last of NNVM's build passes before fusion: the parameters whose values
// are known at build time are bound into @main, and every call that depends on parameters
// and constants alone is evaluated now, so that the compiled graph keeps only what depends
// on its inputs. What is left of the parameters becomes the artifact's params (graph codegen
// names them p0, p1, ... as relay.build does once it has bound them).
//   def @main(%x, %w) { nn.conv2d(%x, transpose(%w, axes=[1, 0, 2, 3])) }, params {w}
//     ->  def @main(%x) { nn.conv2d(%x, meta[relay.Constant][0]) }   (the transposed w)
// Unlike FoldConstant it stores a broadcast expanded unless that is very large: the work is
// gone from every run, at the price of the params' size.
#include <map>

#include "kiln/ir/type_infer.h"
#include "kiln/support/error.h"
#include "kiln/transform/pass.h"
#include "transform/fold_constant.h"
#include "transform/substitute.h"

namespace kiln {

namespace {

// A precomputed result larger than this (elements) is left to run instead: 64 MiB of float32.
constexpr int64_t kMaxPrecomputedElements = int64_t{1} << 24;

// @main with the parameters named in `params` replaced by their values.
Function bind_params(const Function& main, const NamedArrays& params) {
  std::map<std::string, const NDArray*> by_name;
  for (const auto& [name, value] : params) by_name.emplace(name, &value);
  std::map<const VarNode*, Expr> binding;
  std::vector<Var> inputs;
  for (const Var& p : main->params) {
    auto it = by_name.find(p->name);
    if (it == by_name.end()) {
      inputs.push_back(p);
      continue;
    }
    binding[p.get()] = make_constant(*it->second);
  }
  if (binding.empty()) return main;
  return make_function(std::move(inputs), substitute(main->body, binding), main->ret_type, main->attrs);
}

}  // namespace

IRModule precompute_prune_pass(const IRModule& mod, const NamedArrays& params) {
  IRModule bound;
  for (const auto& [name, fn] : mod.functions()) bound.add(name, name == "main" ? bind_params(fn, params) : fn);
  IRModule typed = infer_types(bound);  // the folder sizes results by the calls' types
  IRModule out;
  for (const auto& [name, fn] : typed.functions())
    out.add(name, name == "main" ? fold_constant_calls(fn, kMaxPrecomputedElements) : fn);
  return infer_types(out);
}

}  // namespace kiln
