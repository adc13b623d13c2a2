#include "kiln/transform/pass_statistics.h"

#include <iomanip>
#include <ostream>
#include <unordered_set>

#include "kiln/ir/visit.h"
#include "transform/fold_constant.h"

namespace kiln {

ModuleCounts count_module(const IRModule& mod) {
  ModuleCounts counts;
  std::unordered_set<const ExprNode*> seen_constants;
  for (const auto& [name, fn] : mod.functions()) {
    const bool is_main = name == "main";
    post_order_visit(fn, [&](const Expr& e) {
      if (as<ConstantNode>(e) && seen_constants.insert(e.get()).second) ++counts.constants;
      const auto* call = as<CallNode>(e);
      if (call && call->op()) ++counts.op_calls;
    });
    if (!is_main) continue;
    // Only @main's own dataflow launches kernels: the bodies of fused functions do not.
    post_order_visit(
        fn->body,
        [&](const Expr& e) {
          const auto* call = as<CallNode>(e);
          if (!call) return;
          ++counts.kernels;
          if (computes_from_constants(*call)) ++counts.constant_only;
          const auto* callee = as<FunctionNode>(call->callee);
          if (callee && callee->is_primitive()) ++counts.fused;
        },
        /*enter_functions=*/false);
  }
  return counts;
}

void PassStatistics::after_pass(const PassInfo& info, const IRModule& result, double seconds) {
  rows_.push_back({info.name, seconds, count_module(result)});
}

void PassStatistics::print(std::ostream& out) const {
  out << std::left << std::setw(26) << "pass" << std::right << std::setw(10) << "ms" << std::setw(9) << "kernels"
      << std::setw(10) << "op calls" << std::setw(7) << "fused" << std::setw(11) << "constants" << std::setw(12)
      << "const-only\n";
  const Row* before_fusion = nullptr;
  const Row* after_fusion = nullptr;
  for (const Row& row : rows_) {
    out << std::left << std::setw(26) << row.pass << std::right << std::setw(10) << std::fixed << std::setprecision(2)
        << row.seconds * 1e3 << std::setw(9) << row.counts.kernels << std::setw(10) << row.counts.op_calls
        << std::setw(7) << row.counts.fused << std::setw(11) << row.counts.constants << std::setw(12)
        << row.counts.constant_only << "\n";
    if (row.pass == "FuseOps")
      after_fusion = &row;
    else if (!after_fusion)
      before_fusion = &row;
  }
  if (before_fusion && after_fusion)
    out << "kernels: " << before_fusion->counts.kernels << " before fusion, " << after_fusion->counts.kernels
        << " after\n";
}

}  // namespace kiln
