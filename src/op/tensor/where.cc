// Ops: where.
// TODO(owner of this family): attrs schema, type relation, pattern for each op.
#include "op/op_util.h"

namespace kiln {

void register_tensor_where_ops(OpRegistry& registry) { (void)registry; }

}  // namespace kiln
