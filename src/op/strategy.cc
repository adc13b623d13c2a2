#include "kiln/op/strategy.h"

#include "kiln/support/error.h"

namespace kiln {

Target Target::host() {
  Target target;
#if defined(__AVX512F__)
  target.vector_lanes = 16;
#elif defined(__AVX__)
  target.vector_lanes = 8;
#else
  // Generated code is built with -march=native even when kiln itself is not, so assume AVX2
  // class hardware on x86-64; the lane count only shapes splits, never correctness.
  target.vector_lanes = 8;
#endif
  return target;
}

StrategyRegistry& StrategyRegistry::global() {
  static StrategyRegistry registry;
  return registry;
}

void StrategyRegistry::set_compute(const std::string& op, ComputeFn compute, ComputeLimit limit) {
  OpStrategy& strategy = strategies_[op];
  if (strategy.compute) throw Error("op '" + op + "' already has a compute definition");
  strategy.compute = std::move(compute);
  strategy.limit = std::move(limit);
}

std::string only_float_data(const std::vector<Type>& arg_types, const Type&, const Attrs&) {
  for (const Type& t : arg_types)
    if (const TensorTypeNode* tensor = as_tensor(t); tensor && !is_float(tensor->dtype))
      return "its compute covers float data only, not " + std::string(dtype_name(tensor->dtype));
  return "";
}

void StrategyRegistry::set_schedule(const std::string& op, ScheduleFn schedule) {
  strategies_[op].schedule = std::move(schedule);
}

const OpStrategy* StrategyRegistry::find(const std::string& op) const {
  auto it = strategies_.find(op);
  return it == strategies_.end() || !it->second.compute ? nullptr : &it->second;
}

std::vector<std::string> StrategyRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, strategy] : strategies_)
    if (strategy.compute) out.push_back(name);
  return out;
}

}  // namespace kiln
