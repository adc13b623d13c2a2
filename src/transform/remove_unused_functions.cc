// RemoveUnusedFunctions: drops every global function that @main cannot reach.
#include <set>
#include <vector>

#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"

namespace kiln {

IRModule remove_unused_functions_pass(const IRModule& mod) {
  if (!mod.contains("main")) return mod;
  std::set<std::string> reachable{"main"};
  std::vector<std::string> work{"main"};
  while (!work.empty()) {
    std::string name = work.back();
    work.pop_back();
    post_order_visit(mod.lookup(name), [&](const Expr& e) {
      if (const auto* g = as<GlobalVarNode>(e); g && mod.contains(g->name) && reachable.insert(g->name).second)
        work.push_back(g->name);
    });
  }
  IRModule out;
  for (const auto& [name, fn] : mod.functions())
    if (reachable.count(name)) out.add(name, fn);
  return out;
}

}  // namespace kiln
