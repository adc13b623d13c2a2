// Ops: sum, mean, max, min, prod, argmax, argmin.
// TODO(owner of this family): attrs schema, type relation, pattern for each op.
#include "op/op_util.h"

namespace kiln {

void register_tensor_reduce_ops(OpRegistry& registry) { (void)registry; }

}  // namespace kiln
