// Registers every op family of kiln/runtime/op_families.h.
#include "kiln/ir/op.h"
#include "kiln/runtime/op_families.h"

namespace kiln {

#define KILN_DECLARE_OPS(family) void register_##family##_ops(OpRegistry& registry);
KILN_OP_FAMILIES(KILN_DECLARE_OPS)
#undef KILN_DECLARE_OPS

void register_builtin_ops() {
  static const bool done = [] {
    OpRegistry& r = OpRegistry::global();
#define KILN_REGISTER_OPS(family) register_##family##_ops(r);
    KILN_OP_FAMILIES(KILN_REGISTER_OPS)
#undef KILN_REGISTER_OPS
    return true;
  }();
  (void)done;
}

}  // namespace kiln
