// Ops: transpose.
// TODO(owner of this family): attrs schema, type relation, pattern for each op.
#include "op/op_util.h"

namespace kiln {

void register_transform_transpose_ops(OpRegistry& registry) { (void)registry; }

}  // namespace kiln
