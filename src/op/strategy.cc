#include "kiln/op/strategy.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "kiln/attrs/layout.h"
#include "kiln/support/error.h"

namespace kiln {

namespace {

// "48K" / "1024K" / "1M" as sysfs writes cache sizes; 0 when unreadable.
int64_t sysfs_cache_bytes(int index) {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
  int64_t value = 0;
  char unit = 0;
  if (!(in >> value)) return 0;
  in >> unit;
  return unit == 'K' ? value * 1024 : unit == 'M' ? value * 1024 * 1024 : value;
}

// The environment's override, else sysconf, else sysfs (index0: L1d, index2: L2), else `fallback`.
int64_t cache_bytes(const char* env, [[maybe_unused]] int sysconf_name, int sysfs_index, int64_t fallback) {
  if (const char* v = std::getenv(env); v && std::atoll(v) > 0) return std::atoll(v);
  long from_sysconf = sysconf_name >= 0 ? sysconf(sysconf_name) : -1;
  if (from_sysconf > 0) return from_sysconf;
  const int64_t from_sysfs = sysfs_cache_bytes(sysfs_index);
  return from_sysfs > 0 ? from_sysfs : fallback;
}

}  // namespace

Target Target::host() {
  Target target;
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
  target.l1_bytes = cache_bytes("KILN_L1D_BYTES", _SC_LEVEL1_DCACHE_SIZE, 0, target.l1_bytes);
  target.l2_bytes = cache_bytes("KILN_L2_BYTES", _SC_LEVEL2_CACHE_SIZE, 2, target.l2_bytes);
#else
  target.l1_bytes = cache_bytes("KILN_L1D_BYTES", -1, 0, target.l1_bytes);
  target.l2_bytes = cache_bytes("KILN_L2_BYTES", -1, 2, target.l2_bytes);
#endif
  // The CPU's, not kiln's own build flags': the generated code is built with -march=native.
  target.vector_lanes = host_vector_lanes();
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
