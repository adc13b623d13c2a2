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

void set_compute(OpDef& op, ComputeFn compute, ComputeLimit limit) {
  if (!op.strategy) op.strategy = std::make_shared<OpStrategy>();
  if (op.strategy->compute) throw Error::bug("op '" + op.name + "' already has a compute definition");
  op.strategy->compute = std::move(compute);
  op.strategy->limit = std::move(limit);
}

void set_schedule(OpDef& op, ScheduleFn schedule) {
  if (!op.strategy || !op.strategy->compute) throw Error::bug("op '" + op.name + "' has a schedule but no compute");
  op.strategy->schedule = std::move(schedule);
}

const OpStrategy* find_strategy(const OpDef& op) {
  return op.strategy && op.strategy->compute ? op.strategy.get() : nullptr;
}

std::string only_float_data(const std::vector<Type>& arg_types, const Type&, const Attrs&) {
  for (const Type& t : arg_types)
    if (const TensorTypeNode* tensor = as_tensor(t); tensor && !is_float(tensor->dtype))
      return "its compute covers float data only, not " + std::string(dtype_name(tensor->dtype));
  return "";
}

}  // namespace kiln
