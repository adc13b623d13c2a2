// Inline: replaces calls of global functions marked Inline=1 by their bodies and drops
// the functions. A function is inlined only when it is not recursive and every global it
// calls is inlinable too, as in Relay.
#include <map>
#include <set>

#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"
#include "transform/substitute.h"

namespace kiln {

namespace {

std::set<std::string> callees(const Function& fn) {
  std::set<std::string> out;
  post_order_visit(fn, [&](const Expr& e) {
    if (const auto* g = as<GlobalVarNode>(e)) out.insert(g->name);
  });
  return out;
}

bool marked_inline(const Function& fn) {
  const AttrValue* v = fn->attrs.find("Inline");
  return v && !v->is_none() && v->as_int() != 0;
}

// Names of the functions that may be inlined: marked, and (transitively) calling only
// inlinable functions, which rules out recursion.
std::set<std::string> inlinable_functions(const IRModule& mod) {
  std::map<std::string, std::set<std::string>> calls;
  std::set<std::string> candidates;
  for (const auto& [name, fn] : mod.functions()) {
    calls[name] = callees(fn);
    if (marked_inline(fn)) candidates.insert(name);
  }
  bool changed = true;
  while (changed) {  // drop candidates that call a non-candidate or themselves
    changed = false;
    for (auto it = candidates.begin(); it != candidates.end();) {
      bool ok = !calls[*it].count(*it);
      for (const auto& c : calls[*it]) ok = ok && candidates.count(c) && c != *it;
      if (!ok) {
        it = candidates.erase(it);
        changed = true;
      } else {
        ++it;
      }
    }
  }
  return candidates;
}

class CallInliner : public ExprRewriter {
 public:
  CallInliner(const IRModule& mod, const std::set<std::string>& inlinable) : mod_(mod), inlinable_(inlinable) {}

 protected:
  Expr post(const Expr&, const Expr& rebuilt) override {
    const auto* call = as<CallNode>(rebuilt);
    const auto* g = call ? as<GlobalVarNode>(call->callee) : nullptr;
    if (!g || !inlinable_.count(g->name)) return rebuilt;
    const Function& fn = mod_.lookup(g->name);
    std::map<const VarNode*, Expr> binding;
    for (size_t i = 0; i < fn->params.size() && i < call->args.size(); ++i)
      binding[fn->params[i].get()] = call->args[i];
    // The callee's body may itself call inlinable functions.
    return CallInliner(mod_, inlinable_).rewrite(substitute(fn->body, binding));
  }

 private:
  const IRModule& mod_;
  const std::set<std::string>& inlinable_;
};

}  // namespace

IRModule inline_pass(const IRModule& mod) {
  std::set<std::string> inlinable = inlinable_functions(mod);
  if (inlinable.empty()) return mod;
  IRModule out;
  for (const auto& [name, fn] : mod.functions()) {
    if (inlinable.count(name)) continue;
    out.add(name, as_function(CallInliner(mod, inlinable).rewrite(fn)));
  }
  return out;
}

}  // namespace kiln
